/**
 * Compaction reads a group's files with a bounded window in flight (compact-columns.ts ReadAhead):
 * several reads overlap, so storage latency is paid once per window rather than once per file, and
 * never more than the window are outstanding. The rows written are the group's, in file order.
 */
import { describe, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { readArrowFile } from '../../../functions/core/data/parquet/read/read-arrow-columns.js';
import { compactColumns } from '../../../functions/core/maintenance/compact-columns.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { currentSchema } from '../../../functions/core/spec/metadata.js';
import { joinLocation } from '../../../functions/core/io/location.js';
import { tempWarehouse } from '../../support/tables.js';
import { appendBatch, createEventsTable, EVENTS_ID, eventRows } from './maintenance-fixture.js';

/** The table with reads that wait for the next macrotask, counting how many are outstanding. */
function countingReads(table: LoadedTable): { table: LoadedTable; maxInFlight: () => number } {
  let inFlight = 0;
  let max = 0;
  const io = table.io;
  const counted = Object.create(io) as typeof io;
  counted.read = async (location: string) => {
    inFlight++;
    max = Math.max(max, inFlight);
    try {
      await new Promise((resolve) => setImmediate(resolve));
      return await io.read(location);
    } finally {
      inFlight--;
    }
  };
  return { table: { ...table, io: counted }, maxInFlight: () => max };
}

describe('compaction reads ahead', () => {
  it('keeps several reads of a group in flight, at most the window, and writes every row in order', async () => {
    // Prepare: 20 batches of 4 rows, one file each in partition 'alpha' (id % 4 === 0).
    const { catalog, cleanup } = await tempWarehouse();
    try {
      await createEventsTable(catalog);
      for (let b = 0; b < 20; b++) await appendBatch(catalog, eventRows(b * 16, b * 16 + 15), b * 16 + 15);
      const loaded = await catalog.loadTable(EVENTS_ID);
      const tasks = (await planScan(loaded)).tasks.filter((t) => t.file.partition.category === 'alpha');
      expect(tasks.length).toBe(20);
      const { table, maxInFlight } = countingReads(loaded);
      // Act
      const schema = currentSchema(loaded.metadata);
      const { files, rows } = await compactColumns(table, tasks, schema, undefined, {
        io: loaded.io,
        schema,
        specId: 0,
        partition: { category: 'alpha' },
        nextLocation: (i) => joinLocation(loaded.metadata.location, 'data', `read-ahead-${i}.parquet`),
      });
      // Assess
      expect(rows).toBe(80);
      expect(files).toHaveLength(1);
      expect(maxInFlight()).toBeGreaterThanOrEqual(4);
      expect(maxInFlight()).toBeLessThanOrEqual(9);
      const ids = async (location: string) =>
        Array.from((await readArrowFile(loaded.io, location)).table.getChild('id')?.toArray() ?? []);
      const expected: unknown[] = [];
      for (const t of tasks) expected.push(...(await ids(t.file.file_path)));
      expect(await ids(files[0].file_path)).toEqual(expected);
    } finally {
      await cleanup();
    }
  });
});
