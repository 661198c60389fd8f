import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import type { FileIO } from '../../../functions/core/io/file-io.js';
import { LocalFileIO } from '../../../functions/core/io/local-file-io.js';
import { commitTask, compactTask, planTask } from '../../../functions/core/maintenance/maintenance-tasks.js';
import { appendBatch, createEventsTable, EVENTS_ID, eventRows, liveIds } from './maintenance-fixture.js';

/** A local FileIO that counts the reads of each kind of metadata file. */
class CountingIO extends LocalFileIO {
  reads = { metadataJson: 0, manifestList: 0 };
  override async read(location: string): Promise<Uint8Array> {
    if (location.endsWith('.metadata.json')) this.reads.metadataJson++;
    if (/\/snap-[^/]+\.avro$/.test(location)) this.reads.manifestList++;
    return super.read(location);
  }
}

describe('compaction commit step: what it reads', () => {
  let dir: string;
  let io: CountingIO;
  let catalog: EmbeddedCatalog;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'floe-commit-reads-'));
    io = new CountingIO();
    catalog = new EmbeddedCatalog({ warehouse: dir, io: io as FileIO });
    await createEventsTable(catalog);
    for (let b = 0; b < 6; b++) await appendBatch(catalog, eventRows(b * 8 + 1, (b + 1) * 8), (b + 1) * 8);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('reads the table metadata and the manifest list once each, and commits the same rows', async () => {
    // Prepare
    const ctx = { catalog };
    const idsBefore = await liveIds(catalog);
    const plan = await planTask(ctx, { table: 'lake.events' });
    const rewrites = [];
    for (const group of plan.groups) rewrites.push(await compactTask(ctx, { table: 'lake.events', group }));
    io.reads = { metadataJson: 0, manifestList: 0 };
    // Act
    const result = await commitTask(ctx, { table: 'lake.events', plan, rewrites });
    // Assess
    expect(result.status).toBe('committed');
    expect(io.reads.metadataJson).toBe(1);
    // once at most: none when the list is the one this FileIO wrote last (manifest-list.ts decodes that
    // from memory), as here, where the last append wrote it
    expect(io.reads.manifestList).toBeLessThanOrEqual(1);
    expect(await liveIds(catalog)).toEqual(idsBefore);
    expect((await catalog.loadTable(EVENTS_ID)).metadata.snapshots).toHaveLength(7);
  });
});
