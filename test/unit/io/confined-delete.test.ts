import { describe, expect, it } from 'vitest';
import { TableArea } from '../../../functions/core/io/confined-delete.js';
import type { FileIO } from '../../../functions/core/io/file-io.js';

/** Objects in memory; counts listings and refuses to delete names starting with `stuck`. */
class MemoryIO implements FileIO {
  readonly objects = new Set<string>();
  lists = 0;
  constructor(files: string[]) {
    for (const f of files) this.objects.add(f);
  }
  async read(): Promise<Uint8Array> {
    return new Uint8Array();
  }
  async readRange(): Promise<Uint8Array> {
    return new Uint8Array();
  }
  async write(location: string): Promise<void> {
    this.objects.add(location);
  }
  async writeIfAbsent(location: string): Promise<void> {
    this.objects.add(location);
  }
  async stat() {
    return undefined;
  }
  async exists(location: string): Promise<boolean> {
    return this.objects.has(location);
  }
  async delete(location: string): Promise<void> {
    if (/\/stuck[^/]*$/.test(location)) throw new Error('access denied');
    this.objects.delete(location);
  }
  async list(prefix: string) {
    this.lists++;
    const p = prefix.endsWith('/') ? prefix : `${prefix}/`;
    return [...this.objects]
      .filter((o) => o.startsWith(p))
      .map((location) => ({ location, size: 1, lastModifiedMs: 0 }));
  }
}

const table = (
  io: FileIO,
  location = 's3://b/wh/a/b',
  metadataLocation = `${location}/metadata/v3.metadata.json`,
) => ({
  io,
  metadata: { location },
  metadataLocation,
});

describe('TableArea: the one guard on deletes', () => {
  it('allows the table’s own files and refuses the rest, saying why', async () => {
    const area = new TableArea(table(new MemoryIO([])));
    const { allowed, refused } = await area.confine([
      's3://b/wh/a/b/data/x.parquet',
      's3a://b/wh/a/b/metadata/snap-1.avro',
      's3://b/wh/a/bc/data/y.parquet',
      's3://b/wh/a/other.parquet',
      's3://elsewhere/a/b/data/z.parquet',
      's3://b/wh/a/b',
    ]);
    expect(allowed).toEqual(['s3://b/wh/a/b/data/x.parquet', 's3a://b/wh/a/b/metadata/snap-1.avro']);
    expect(refused.map((r) => r.location)).toEqual([
      's3://b/wh/a/bc/data/y.parquet',
      's3://b/wh/a/other.parquet',
      's3://elsewhere/a/b/data/z.parquet',
      's3://b/wh/a/b',
    ]);
    for (const r of refused) expect(r.reason).toMatch(/outside the table's location s3:\/\/b\/wh\/a\/b/);
  });

  it('refuses every file in a folder holding another table’s metadata, checking each folder once', async () => {
    const nested = ['s3://b/wh/a/b/c/metadata/v1.metadata.json', 's3://b/wh/a/b/c/data/f.parquet'];
    const io = new MemoryIO(nested);
    const area = new TableArea(table(io));
    const { allowed, refused } = await area.confine([
      ...nested,
      's3://b/wh/a/b/c/data/g.parquet',
      's3://b/wh/a/b/data/own.parquet',
    ]);
    expect(allowed).toEqual(['s3://b/wh/a/b/data/own.parquet']);
    expect(refused).toHaveLength(3);
    for (const r of refused)
      expect(r.reason).toMatch(/in s3:\/\/b\/wh\/a\/b\/c, a folder holding another table/);
    // c, c/metadata, c/data and data: one listing each
    expect(io.lists).toBe(4);
  });

  it('judges folders from a listing the caller already has, with no request', async () => {
    const files = [
      '/w/t/metadata/v1.metadata.json',
      '/w/t/data/x.parquet',
      '/w/t/data/nested/metadata/00001-abc.metadata.json',
      '/w/t/data/nested/data/y.parquet',
    ];
    const io = new MemoryIO(files);
    const area = new TableArea(table(io, '/w/t', 'file:///w/t/metadata/v1.metadata.json'), {
      files: files.map((location) => ({ location })),
      under: ['/w/t'],
    });
    const { allowed } = await area.confine(files);
    expect(allowed).toEqual(['/w/t/metadata/v1.metadata.json', '/w/t/data/x.parquet']);
    expect(io.lists).toBe(0);
  });

  it('deletes nothing where the location does not hold the table’s current metadata', async () => {
    const io = new MemoryIO(['/w/notes.txt', '/w/wh/t/data/x.parquet']);
    const area = new TableArea(table(io, '/w', '/w/wh/t/metadata/v2.metadata.json'));
    const outcome = await area.delete(['/w/notes.txt', '/w/wh/t/data/x.parquet']);
    expect(outcome.deleted).toEqual([]);
    expect(outcome.refused).toHaveLength(2);
    expect(area.refusal).toMatch(/does not hold its current metadata/);
    expect(io.objects.size).toBe(2);
  });

  it('deletes each allowed file once, counts failures, never throws', async () => {
    const io = new MemoryIO(['/w/t/data/a', '/w/t/data/stuck', '/x/outside']);
    const area = new TableArea(table(io, '/w/t'));
    const outcome = await area.delete(['/w/t/data/a', 'file:///w/t/data/a', '/w/t/data/stuck', '/x/outside']);
    expect(outcome.deleted).toEqual(['/w/t/data/a']);
    expect(outcome.failed).toEqual(['/w/t/data/stuck']);
    expect(outcome.refused.map((r) => r.location)).toEqual(['/x/outside']);
    expect([...io.objects].sort()).toEqual(['/w/t/data/stuck', '/x/outside']);
  });

  it('refuses, rather than guesses, when a folder cannot be checked', async () => {
    const io = new MemoryIO([]);
    io.list = async () => {
      throw new Error('slow down');
    };
    const { allowed, refused } = await new TableArea(table(io, '/w/t')).confine(['/w/t/data/a']);
    expect(allowed).toEqual([]);
    expect(refused[0].reason).toMatch(/could not check whether \/w\/t\/data holds another table.*slow down/);
  });
});
