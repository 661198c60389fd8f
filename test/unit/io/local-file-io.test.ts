import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AlreadyExistsError, NotFoundError, ValidationError } from '../../../functions/core/errors.js';
import { LocalFileIO } from '../../../functions/core/io/local-file-io.js';

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);

describe('LocalFileIO', () => {
  let dir: string;
  const io = new LocalFileIO();

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-local-io-'));
  });

  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('writes and reads back through file:// URIs and plain paths, creating parent directories', async () => {
    // Prepare
    const filePath = path.join(dir, 'a', 'b', 'c.json');

    // Act
    await io.write(`file://${filePath}`, bytes('hello'));

    // Assess
    expect(text(await io.read(filePath))).toBe('hello');
    expect(text(await io.read(`file://${filePath}`))).toBe('hello');
    expect(text(await io.read(`file:${filePath}`))).toBe('hello');
    expect(await fs.readFile(filePath, 'utf8')).toBe('hello');
  });

  it('replaces on write and leaves no temp file behind', async () => {
    // Prepare
    const location = `file://${dir}/x.bin`;
    await io.write(location, bytes('first version, longer'));

    // Act
    await io.write(location, bytes('second'));

    // Assess
    expect(text(await io.read(location))).toBe('second');
    expect(await fs.readdir(dir)).toEqual(['x.bin']);
  });

  it('never shows a torn object to readers while it is being replaced', async () => {
    // Prepare: two large payloads; a non-atomic write would expose a mix or a truncated file.
    const location = path.join(dir, 'big.bin');
    const a = new Uint8Array(1 << 20).fill(0x61);
    const b = new Uint8Array(1 << 20).fill(0x62);
    await io.write(location, a);
    const seen = new Set<string>();
    let writing = true;

    // Act: readers poll while writers alternate the two payloads.
    const readers = Array.from({ length: 4 }, async () => {
      while (writing) {
        const data = await io.read(location);
        const first = data[0];
        const uniform = data.length === a.length && data.every((byte) => byte === first);
        seen.add(uniform ? String.fromCharCode(first) : 'torn');
      }
    });
    for (let i = 0; i < 10; i += 1) await io.write(location, i % 2 === 0 ? b : a);
    writing = false;
    await Promise.all(readers);

    // Assess
    expect(seen.has('torn')).toBe(false);
    expect(seen.size).toBeGreaterThan(0);
  });

  it('writeIfAbsent creates once, then refuses without touching the existing bytes', async () => {
    // Prepare
    const location = `file://${dir}/metadata/v1.metadata.json`;
    await io.writeIfAbsent(location, bytes('original'));

    // Act
    const second = io.writeIfAbsent(location, bytes('intruder'));

    // Assess
    await expect(second).rejects.toBeInstanceOf(AlreadyExistsError);
    expect(text(await io.read(location))).toBe('original');
    expect(await fs.readdir(path.join(dir, 'metadata'))).toEqual(['v1.metadata.json']);
  });

  it('writeIfAbsent under 20 concurrent writers: exactly one wins and its bytes are whole', async () => {
    // Prepare: distinct, large-ish payloads so a torn or mixed object would be visible.
    const location = path.join(dir, 'pointer', 'version-hint');
    const payloads = Array.from({ length: 20 }, (_, i) => new Uint8Array(256 * 1024).fill(i + 1));

    // Act
    const results = await Promise.allSettled(payloads.map((data) => io.writeIfAbsent(location, data)));

    // Assess
    const winners = results.flatMap((result, i) => (result.status === 'fulfilled' ? [i] : []));
    expect(winners).toHaveLength(1);
    for (const result of results) {
      if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(AlreadyExistsError);
    }
    const stored = await io.read(location);
    expect(Buffer.from(stored).equals(payloads[winners[0]])).toBe(true);
    expect(await fs.readdir(path.join(dir, 'pointer'))).toEqual(['version-hint']);
  });

  it('readRange returns exactly the asked bytes and refuses ranges past the end', async () => {
    // Prepare
    const location = `file://${dir}/r.bin`;
    await io.write(
      location,
      Uint8Array.from({ length: 100 }, (_, i) => i),
    );

    // Act
    const middle = await io.readRange(location, 10, 5);
    const tail = await io.readRange(location, 96, 4);
    const empty = await io.readRange(location, 100, 0);

    // Assess
    expect([...middle]).toEqual([10, 11, 12, 13, 14]);
    expect([...tail]).toEqual([96, 97, 98, 99]);
    expect(empty.length).toBe(0);
    await expect(io.readRange(location, 98, 5)).rejects.toBeInstanceOf(ValidationError);
    await expect(io.readRange(location, -1, 5)).rejects.toBeInstanceOf(ValidationError);
    await expect(io.readRange(location, 1.5, 5)).rejects.toBeInstanceOf(ValidationError);
  });

  it('maps missing objects to NotFoundError (files, directories, paths under a file)', async () => {
    // Prepare
    await io.write(path.join(dir, 'file'), bytes('x'));

    // Act + Assess
    await expect(io.read(path.join(dir, 'missing'))).rejects.toBeInstanceOf(NotFoundError);
    await expect(io.readRange(path.join(dir, 'missing'), 0, 1)).rejects.toBeInstanceOf(NotFoundError);
    await expect(io.read(dir)).rejects.toBeInstanceOf(NotFoundError);
    await expect(io.read(path.join(dir, 'file', 'below'))).rejects.toBeInstanceOf(NotFoundError);
    const error = await io.read(path.join(dir, 'missing')).catch((e: unknown) => e);
    expect((error as NotFoundError).retryable).toBe(false);
    expect((error as NotFoundError).cause).toMatchObject({ code: 'ENOENT' });
  });

  it('stat, exists and delete treat absent objects and directories as absent', async () => {
    // Prepare
    const location = `file://${dir}/s/one.txt`;
    await io.write(location, bytes('12345'));

    // Act
    const stat = await io.stat(location);
    await io.delete(location);
    await io.delete(location);

    // Assess
    expect(stat?.size).toBe(5);
    expect(Math.abs((stat?.lastModifiedMs ?? 0) - Date.now())).toBeLessThan(60_000);
    expect(await io.exists(location)).toBe(false);
    expect(await io.stat(location)).toBeUndefined();
    expect(await io.stat(`file://${dir}/s`)).toBeUndefined();
    await expect(io.delete(`file://${dir}/s`)).resolves.toBeUndefined();
  });

  it('lists recursively, in the form the prefix was given, hiding in-flight temp files', async () => {
    // Prepare
    await io.write(`file://${dir}/t/data/a.parquet`, bytes('a'));
    await io.write(`file://${dir}/t/data/p=1/b.parquet`, bytes('bb'));
    await io.write(`file://${dir}/t/metadata/v1.metadata.json`, bytes('ccc'));
    await io.write(`file://${dir}/t2/other`, bytes('d'));
    await fs.writeFile(path.join(dir, 't', 'data', '.c.parquet.1234.floe-tmp'), 'partial');

    // Act
    const asUris = await io.list(`file://${dir}/t`);
    const asPaths = await io.list(`${dir}/t/`);
    const missing = await io.list(`file://${dir}/nothing-here`);

    // Assess
    expect(asUris.map((entry) => [entry.location, entry.size])).toEqual([
      [`file://${dir}/t/data/a.parquet`, 1],
      [`file://${dir}/t/data/p=1/b.parquet`, 2],
      [`file://${dir}/t/metadata/v1.metadata.json`, 3],
    ]);
    expect(asPaths.map((entry) => entry.location)).toEqual([
      `${dir}/t/data/a.parquet`,
      `${dir}/t/data/p=1/b.parquet`,
      `${dir}/t/metadata/v1.metadata.json`,
    ]);
    for (const entry of asUris) expect(text(await io.read(entry.location)).length).toBe(entry.size);
    expect(missing).toEqual([]);
  });

  it('rejects locations that are not local', async () => {
    await expect(io.read('s3://bucket/key')).rejects.toBeInstanceOf(ValidationError);
    await expect(io.write('relative/path', bytes('x'))).rejects.toBeInstanceOf(ValidationError);
  });
});
