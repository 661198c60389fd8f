import { randomUUID } from 'node:crypto';
import { type Dirent, constants as fsConstants } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import {
  AlreadyExistsError,
  LakeError,
  NotFoundError,
  TransientIOError,
  ValidationError,
} from '../errors.js';
import type { FileIO } from './file-io.js';
import { fromFileUri, joinLocation } from './location.js';

/** Suffix of the temp files `write`/`writeIfAbsent` stage next to their target; `list` hides them. */
const TEMP_SUFFIX = '.floe-tmp';

/** errno codes after which the same call may succeed (resource pressure, interrupted or flaky I/O). */
const TRANSIENT_CODES = new Set(['EAGAIN', 'EBUSY', 'EINTR', 'EIO', 'EMFILE', 'ENFILE', 'ETIMEDOUT']);

/**
 * FileIO on the local filesystem, for development, tests and the embedded catalog.
 *
 * Locations are `file:///abs/path` (also `file:/abs`, `file://localhost/abs`) or plain absolute paths.
 * It behaves like an object store: writes are all-or-nothing (temp file in the same directory, fsync,
 * rename), readers never see a torn object, parent directories are created on demand, and directories
 * themselves are not objects (reading or stat-ing one is "not found").
 *
 * `list(prefix)` returns locations in the form the prefix was given: `list('file:///w')` yields
 * `file:///w/a/b`, `list('/w')` yields `/w/a/b`; so a location listed is one that can be read back and
 * compares equal to the location it was written under when both use the same form.
 */
export class LocalFileIO implements FileIO {
  /** @throws NotFoundError when absent; TransientIOError; ValidationError for a non-local location */
  async read(location: string): Promise<Uint8Array> {
    const filePath = fromFileUri(location);
    try {
      const buffer = await fs.readFile(filePath);
      return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    } catch (error) {
      throw mapLocalError(error, 'read', filePath);
    }
  }

  /**
   * Reads exactly `length` bytes at `offset`.
   * @throws NotFoundError when absent; ValidationError for a bad range or one past the end of the file
   */
  async readRange(location: string, offset: number, length: number): Promise<Uint8Array> {
    const filePath = fromFileUri(location);
    checkRange(location, offset, length);
    let handle: fs.FileHandle | undefined;
    try {
      handle = await fs.open(filePath, 'r');
      const { size } = await handle.stat();
      if (offset + length > size) {
        throw new ValidationError(
          `range [${offset}, ${offset + length}) is past the end of ${location} (${size} bytes)`,
        );
      }
      const out = new Uint8Array(length);
      let filled = 0;
      // read() may return fewer bytes than asked; loop until the range is filled.
      while (filled < length) {
        const { bytesRead } = await handle.read(out, filled, length - filled, offset + filled);
        if (bytesRead === 0) {
          throw new TransientIOError(
            `${location} shrank while being read (got ${filled} of ${length} bytes)`,
          );
        }
        filled += bytesRead;
      }
      return out;
    } catch (error) {
      throw mapLocalError(error, 'readRange', filePath);
    } finally {
      await handle?.close().catch(() => undefined);
    }
  }

  /**
   * Replaces the object atomically: readers see the old bytes or the new ones, never a mix.
   * @throws TransientIOError; LakeError for other filesystem failures
   */
  async write(location: string, data: Uint8Array): Promise<void> {
    const filePath = fromFileUri(location);
    const tempPath = await this.stageTempFile(filePath, data, 'write');
    try {
      await fs.rename(tempPath, filePath);
    } catch (error) {
      await removeQuietly(tempPath);
      throw mapLocalError(error, 'write', filePath);
    }
    await syncDirectory(path.dirname(filePath));
  }

  /**
   * Creates the object only if none exists, atomically: the bytes are staged in a temp file and published
   * with link(2), which fails with EEXIST instead of replacing. Of concurrent callers exactly one wins and
   * the object holds exactly the winner's bytes. The embedded catalog's pointer swap relies on this.
   * @throws AlreadyExistsError when an object exists at the location; TransientIOError; LakeError
   */
  async writeIfAbsent(location: string, data: Uint8Array): Promise<void> {
    const filePath = fromFileUri(location);
    const tempPath = await this.stageTempFile(filePath, data, 'writeIfAbsent');
    try {
      await fs.link(tempPath, filePath);
    } catch (error) {
      if (errorCode(error) === 'EEXIST') {
        throw new AlreadyExistsError(`${location} already exists`, { cause: error });
      }
      throw mapLocalError(error, 'writeIfAbsent', filePath);
    } finally {
      await removeQuietly(tempPath);
    }
    await syncDirectory(path.dirname(filePath));
  }

  /** Size and modification time, or undefined when absent (or a directory). @throws TransientIOError; LakeError */
  async stat(location: string): Promise<{ size: number; lastModifiedMs: number } | undefined> {
    const filePath = fromFileUri(location);
    try {
      const stats = await fs.stat(filePath);
      if (!stats.isFile()) return undefined;
      return { size: stats.size, lastModifiedMs: Math.floor(stats.mtimeMs) };
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      throw mapLocalError(error, 'stat', filePath);
    }
  }

  /** @throws TransientIOError; LakeError */
  async exists(location: string): Promise<boolean> {
    return (await this.stat(location)) !== undefined;
  }

  /** Deletes the file; a missing file (or a directory, which is no object) is fine. @throws LakeError */
  async delete(location: string): Promise<void> {
    const filePath = fromFileUri(location);
    try {
      await fs.unlink(filePath);
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') return;
      throw mapLocalError(error, 'delete', filePath);
    }
  }

  /**
   * Every file under the directory `prefix` (recursively), sorted by location, in the form the prefix was
   * given (see the class comment). A missing directory lists as empty. In-flight temp files are hidden.
   * Symlinks to files are listed; symlinked directories are not followed (no cycles).
   * @throws TransientIOError; LakeError
   */
  async list(prefix: string): Promise<{ location: string; size: number; lastModifiedMs: number }[]> {
    const rootPath = fromFileUri(prefix);
    const files = await walkFiles(rootPath);
    const rootDir = path.resolve(rootPath);
    return files
      .map((file) => ({
        location: joinLocation(prefix, path.relative(rootDir, file.path).split(path.sep).join('/')),
        size: file.size,
        lastModifiedMs: file.lastModifiedMs,
      }))
      .sort((a, b) => (a.location < b.location ? -1 : a.location > b.location ? 1 : 0));
  }

  /** Writes `data` to a fresh temp file beside `filePath`, fsynced, and returns the temp file's path. */
  private async stageTempFile(filePath: string, data: Uint8Array, operation: string): Promise<string> {
    const directory = path.dirname(filePath);
    const tempPath = path.join(directory, `.${path.basename(filePath)}.${randomUUID()}${TEMP_SUFFIX}`);
    try {
      await fs.mkdir(directory, { recursive: true });
    } catch (error) {
      throw mapLocalError(error, operation, filePath);
    }
    let handle: fs.FileHandle | undefined;
    try {
      handle = await fs.open(tempPath, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL);
      await handle.writeFile(data);
      await handle.sync();
      await handle.close();
      handle = undefined;
      return tempPath;
    } catch (error) {
      await handle?.close().catch(() => undefined);
      await removeQuietly(tempPath);
      throw mapLocalError(error, operation, filePath);
    }
  }
}

interface WalkedFile {
  path: string;
  size: number;
  lastModifiedMs: number;
}

/** Regular files under `directory`, recursively; entries that vanish mid-walk are skipped. */
async function walkFiles(directory: string): Promise<WalkedFile[]> {
  let entries: Dirent[];
  try {
    entries = await fs.readdir(directory, { withFileTypes: true });
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw mapLocalError(error, 'list', directory);
  }
  const nested = await Promise.all(
    entries.map(async (entry): Promise<WalkedFile[]> => {
      const entryPath = path.join(directory, entry.name);
      if (entry.isDirectory()) return walkFiles(entryPath);
      if (!entry.isFile() && !entry.isSymbolicLink()) return [];
      if (entry.name.startsWith('.') && entry.name.endsWith(TEMP_SUFFIX)) return [];
      try {
        const stats = await fs.stat(entryPath);
        if (!stats.isFile()) return [];
        return [{ path: entryPath, size: stats.size, lastModifiedMs: Math.floor(stats.mtimeMs) }];
      } catch (error) {
        if (errorCode(error) === 'ENOENT') return [];
        throw mapLocalError(error, 'list', entryPath);
      }
    }),
  );
  return nested.flat();
}

/** @throws ValidationError for negative, fractional or unsafe offsets/lengths */
function checkRange(location: string, offset: number, length: number): void {
  if (!Number.isSafeInteger(offset) || offset < 0 || !Number.isSafeInteger(length) || length < 0) {
    throw new ValidationError(`bad range for ${location}: offset ${offset}, length ${length}`);
  }
}

/**
 * Makes a rename/link durable: the new directory entry is only on disk once the directory is fsynced.
 * Best effort: some filesystems refuse fsync on a directory, and the data itself is already synced.
 */
async function syncDirectory(directory: string): Promise<void> {
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(directory, 'r');
    await handle.sync();
  } catch {
    // ignored on purpose, see above
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/** Cleanup never hides the error that made it necessary: its own failure is ignored. */
async function removeQuietly(filePath: string): Promise<void> {
  await fs.unlink(filePath).catch(() => undefined);
}

function errorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') {
    return error.code;
  }
  return undefined;
}

/** Maps a filesystem error to the lake's errors; LakeErrors pass through. */
function mapLocalError(error: unknown, operation: string, filePath: string): LakeError {
  if (error instanceof LakeError) return error;
  const code = errorCode(error);
  const detail = error instanceof Error ? error.message : String(error);
  const isRead = operation === 'read' || operation === 'readRange';
  if (isRead && (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR')) {
    return new NotFoundError(`${operation} ${filePath}: no such file`, { cause: error });
  }
  if (code !== undefined && TRANSIENT_CODES.has(code)) {
    return new TransientIOError(`${operation} ${filePath} failed: ${detail}`, { cause: error });
  }
  return new LakeError(`${operation} ${filePath} failed: ${detail}`, { cause: error, retryable: false });
}
