/**
 * Compaction never turns the group's rows into JS objects: while it runs, the row path's pieces — the
 * row reader (readScan, readDataFile), the row sort (sortRows) and the rows → Arrow builder
 * (buildRecordBatch) — throw. The deletes still apply and the sort order still holds.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { compactGroup } from '../../../functions/core/maintenance/compact-group.js';
import { resolveSettings } from '../../../functions/core/maintenance/maintenance-settings.js';
import { planCompaction } from '../../../functions/core/maintenance/plan-compaction.js';
import {
  groupResultLocation,
  readGroupResult,
} from '../../../functions/core/maintenance/rewrite-run-files.js';
import { readDataFile } from '../../../functions/core/data/parquet/read/read-data-file.js';
import { currentSchema } from '../../../functions/core/spec/metadata.js';
import { liveEntries } from '../../support/readers.js';
import { tempWarehouse } from '../../support/tables.js';
import {
  appendBatch,
  CATEGORIES,
  commitEqualityDeletes,
  commitPositionDeletes,
  createEventsTable,
  EVENTS_ID,
  eventRows,
} from './maintenance-fixture.js';

const guard = vi.hoisted(() => ({ rowsForbidden: false }));

function forbidden<A extends unknown[], R>(name: string, fn: (...args: A) => R): (...args: A) => R {
  return (...args: A) => {
    if (guard.rowsForbidden) throw new Error(`compaction called ${name}`);
    return fn(...args);
  };
}

vi.mock('../../../functions/core/scan/read-scan.js', async (importOriginal) => {
  const m = await importOriginal<typeof import('../../../functions/core/scan/read-scan.js')>();
  return {
    ...m,
    readScan: forbidden('readScan', m.readScan),
    readScanRows: forbidden('readScanRows', m.readScanRows),
  };
});
vi.mock('../../../functions/core/data/parquet/read/read-data-file.js', async (importOriginal) => {
  const m =
    await importOriginal<typeof import('../../../functions/core/data/parquet/read/read-data-file.js')>();
  return { ...m, readDataFile: forbidden('readDataFile', m.readDataFile) };
});
vi.mock('../../../functions/core/table/sort-rows.js', async (importOriginal) => {
  const m = await importOriginal<typeof import('../../../functions/core/table/sort-rows.js')>();
  return { ...m, sortRows: forbidden('sortRows', m.sortRows) };
});
vi.mock('../../../functions/core/data/arrow/build-record-batch.js', async (importOriginal) => {
  const m = await importOriginal<typeof import('../../../functions/core/data/arrow/build-record-batch.js')>();
  return { ...m, buildRecordBatch: forbidden('buildRecordBatch', m.buildRecordBatch) };
});

describe('compaction builds no row objects', () => {
  let catalog: EmbeddedCatalog;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    ({ catalog, cleanup } = await tempWarehouse());
    guard.rowsForbidden = false;
  });
  afterEach(async () => {
    guard.rowsForbidden = false;
    await cleanup();
  });

  it('reads, deletes, sorts and writes columns only', async () => {
    // Prepare: ids 1..48 in 6 batches, sorted by id descending; ids 3..6 deleted by equality, and the
    // first row of one beta file by position.
    await createEventsTable(
      catalog,
      {},
      {
        'order-id': 1,
        fields: [{ 'source-id': 1, transform: 'identity', direction: 'desc', 'null-order': 'nulls-last' }],
      },
    );
    for (let b = 0; b < 6; b++) await appendBatch(catalog, eventRows(b * 8 + 1, (b + 1) * 8), (b + 1) * 8);
    await commitEqualityDeletes(catalog, [3, 4, 5, 6]);
    const beta = (await liveEntries(await catalog.loadTable(EVENTS_ID))).find(
      (e) => e.data_file.content === 0 && e.data_file.partition.category === 'beta',
    )!.data_file;
    await commitPositionDeletes(catalog, beta, [0]);
    const schema = currentSchema((await catalog.loadTable(EVENTS_ID)).metadata);
    const [{ id: positionDeleted }] = await readDataFile(
      (await catalog.loadTable(EVENTS_ID)).io,
      beta.file_path,
      schema,
    );
    const table = await catalog.loadTable(EVENTS_ID);
    const { plan } = await planCompaction(table, resolveSettings(table.metadata), 'run-1', 'lake.events');
    if (!plan) throw new Error('no plan');
    // Act
    guard.rowsForbidden = true;
    const outcomes = [];
    for (const g of plan.groups) outcomes.push(await compactGroup(table, plan, g.index));
    guard.rowsForbidden = false;
    // Assess: per partition, the live ids, highest first
    for (const g of plan.groups) {
      const location = groupResultLocation(table.metadata.location, plan.runId, g.index);
      const files = await readGroupResult(table.io, location, g.specId);
      const rows = (await Promise.all(files.map((f) => readDataFile(table.io, f.file_path, schema)))).flat();
      const category = files[0].partition.category as string;
      const expected: bigint[] = [];
      for (let id = 48n; id >= 1n; id--) {
        const deleted = (id >= 3n && id <= 6n) || id === positionDeleted;
        if (CATEGORIES[Number(id) % CATEGORIES.length] === category && !deleted) expected.push(id);
      }
      expect(rows.map((r) => r.id)).toEqual(expected);
    }
    expect(outcomes.every((o) => o.written && o.filesAdded === 1)).toBe(true);
  });
});
