/**
 * A data file read by ranges: its tail (the footer, a second read when the footer is longer than the
 * first tail), then what the reader asks for (page index, pages), coalesced into few requests, and the
 * whole file once when a read needs more (read-data-file.ts decides). The size the manifest states is
 * a hint: the tail read runs beside a stat of the object, and a size that does not match, a tail that
 * is no Parquet trailer or a footer that does not parse send the caller to the whole-file route, which
 * reads the file as it always has (and fails as it always has on a file that is not Parquet).
 */
import { ValidationError } from '../../../errors.js';
import type { FileIO } from '../../../io/file-io.js';
import { type ByteRange, coalesceRanges, FetchedBytes } from './byte-source.js';
import type { Thrift } from './file-footer.js';
import { footerSpan } from '../parquet-trailer.js';
import { decodeThrift } from '../thrift/compact-reader.js';

/**
 * Bytes of the first tail read, at most: floe's footers of a few dozen columns and row groups fit (a
 * longer one costs one more read), and often the page index before them. A smaller file reads a
 * sixteenth of itself (at least TAIL_MIN_BYTES), so the tail stays a small part of what is fetched.
 */
export const TAIL_BYTES = 64 * 1024;
export const TAIL_MIN_BYTES = 8 * 1024;

/**
 * Fetched ranges closer than this are read as one: a request costs more (a round trip on S3) than
 * reading these bytes between them.
 */
export const COALESCE_GAP = 16 * 1024;

/** Once the ranges a read needs would bring the bytes fetched past this share of the file, read it whole. */
export const WHOLE_FILE_SHARE = 0.5;

/** A file whose tail was fetched and whose footer parsed. */
export interface FetchedTail {
  fetched: FetchedBytes;
  footer: Thrift;
  /** Where the footer (its Thrift bytes and the 8-byte trailer) starts. */
  footerStart: number;
}

/**
 * The tail and footer of a file the manifest says has `size` bytes, or undefined when the object's size
 * is not `size` or its tail holds no readable footer (read it whole instead).
 * @throws NotFoundError / TransientIOError from the FileIO
 */
export async function fetchTail(
  io: FileIO,
  location: string,
  size: number,
): Promise<FetchedTail | undefined> {
  if (!Number.isSafeInteger(size) || size < 12) return undefined;
  const tail = Math.min(size, TAIL_BYTES, Math.max(TAIL_MIN_BYTES, Math.floor(size / 16)));
  const [stat, bytes] = await Promise.all([
    io.stat(location),
    io.readRange(location, size - tail, tail).catch((error: unknown) => {
      if (error instanceof ValidationError) return undefined; // the object is shorter than the hint
      throw error;
    }),
  ]);
  if (!stat || stat.size !== size || !bytes || bytes.byteLength !== tail) return undefined;
  const fetched = new FetchedBytes(size);
  fetched.add(size - tail, bytes);
  const span = footerSpan(bytes, size);
  if (typeof span === 'string') return undefined;
  const footerStart = span.start;
  const length = span.end - span.start;
  if (footerStart < size - tail) {
    const rest = await io.readRange(location, footerStart, size - tail - footerStart);
    if (rest.byteLength !== size - tail - footerStart) return undefined;
    fetched.add(footerStart, rest);
  }
  try {
    const footer = decodeThrift(fetched.bytes(footerStart, length));
    return { fetched, footer, footerStart };
  } catch {
    return undefined;
  }
}

/**
 * Fetches the parts of `ranges` inside the file that `fetched` does not hold yet, coalesced, in
 * parallel; false (nothing fetched) when that would bring the bytes held past WHOLE_FILE_SHARE of the
 * file. Ranges outside the file are left out: a reader asking for them gets a RangeError.
 * @throws NotFoundError / TransientIOError from the FileIO; ValidationError when an answer is short
 */
export async function fetchRanges(
  io: FileIO,
  location: string,
  fetched: FetchedBytes,
  ranges: readonly ByteRange[],
): Promise<boolean> {
  const inside = ranges.filter(
    (r) =>
      Number.isSafeInteger(r.offset) &&
      Number.isSafeInteger(r.length) &&
      r.offset >= 0 &&
      r.length > 0 &&
      r.offset + r.length <= fetched.size,
  );
  const wanted = coalesceRanges(fetched.missing(coalesceRanges(inside, COALESCE_GAP)), COALESCE_GAP);
  if (wanted.length === 0) return true;
  const adding = wanted.reduce((n, r) => n + r.length, 0);
  if (fetched.held + adding > fetched.size * WHOLE_FILE_SHARE) return false;
  const got = await Promise.all(wanted.map((r) => io.readRange(location, r.offset, r.length)));
  got.forEach((bytes, k) => {
    if (bytes.byteLength !== wanted[k].length)
      throw new ValidationError(
        `${location}: a range read returned ${bytes.byteLength} of ${wanted[k].length} bytes`,
      );
    fetched.add(wanted[k].offset, bytes);
  });
  return true;
}

/**
 * The whole file, checked against what was fetched by ranges (same size, same footer bytes).
 * @throws NotFoundError / TransientIOError from `io.read`; ValidationError when the object is not the
 *   one whose tail was read (it changed, or the storage answers inconsistently)
 */
export async function fetchWhole(io: FileIO, location: string, tail: FetchedTail): Promise<Uint8Array> {
  const bytes = await io.read(location);
  const { fetched, footerStart } = tail;
  const size = fetched.size;
  const same =
    bytes.byteLength === size &&
    Buffer.from(bytes.buffer, bytes.byteOffset + footerStart, size - footerStart).equals(
      fetched.bytes(footerStart, size - footerStart),
    );
  if (!same)
    throw new ValidationError(
      `${location} read whole (${bytes.byteLength} bytes) is not the file whose footer was read by range (${size} bytes)`,
    );
  return bytes;
}
