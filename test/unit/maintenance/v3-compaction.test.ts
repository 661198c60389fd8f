/**
 * Compaction of a format-version 3 CDC table: rows deleted by deletion vectors are dropped and the
 * vectors leave in the same snapshot, every row kept keeps its `_row_id` and
 * `_last_updated_sequence_number` (read by DuckDB with the spec's inheritance rules, not floe's), the
 * snapshots keep the spec's row-lineage rules, and the key index follows the compaction. Read by floe
 * and DuckDB against a model after each step.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main as cli } from '../../../functions/cli/main.js';
import { verifyIndex } from '../../../functions/core/key-index/verify-index.js';
import { commitRewrite } from '../../../functions/core/maintenance/commit-rewrite.js';
import { compactGroup } from '../../../functions/core/maintenance/compact-group.js';
import { resolveSettings } from '../../../functions/core/maintenance/maintenance-settings.js';
import { planCompaction } from '../../../functions/core/maintenance/plan-compaction.js';
import { isVersionCarrierDataFile } from '../../../functions/core/scan/delete-index.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { duckdbLiveRows, liveEntries } from '../../support/readers.js';
import { checkV3 } from '../../support/v3-rules.js';
import { duckdbRowLineage, type RowLineage } from '../../support/row-lineage.js';
import { tempWarehouse } from '../../support/tables.js';
import { type Change, feed, modelRows, rowsOf, upsertRoute } from '../../support/upsert-table.js';

type Warehouse = Awaited<ReturnType<typeof tempWarehouse>>;

async function compact(wh: Warehouse, table: string): Promise<void> {
  const quiet = process.stdout.write;
  process.stdout.write = (() => true) as typeof process.stdout.write;
  try {
    expect(await cli(['maintain', 'compact', '--warehouse', wh.dir, '--table', table])).toBe(0);
  } finally {
    process.stdout.write = quiet;
  }
}

async function duckRows(wh: Warehouse, route: TableRoute): Promise<string[]> {
  const table = await wh.catalog.loadTable(route.table);
  return (await duckdbLiveRows(table, ['id', 'v'], ['id'])).map((r) => `${r.id}=${r.v}`).sort();
}

const lineageOf = async (wh: Warehouse, route: TableRoute): Promise<Map<string, RowLineage>> =>
  duckdbRowLineage(await wh.catalog.loadTable(route.table), 'id');

describe('compaction of a format-version 3 table', () => {
  let wh: Warehouse;
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(() => wh.cleanup());

  it('drops deleted rows, removes their vectors and keeps every row lineage, twice, with the key index following', async () => {
    // Prepare: three batches of upserts and deletes (deletion vectors on the first files)
    const route = upsertRoute('lineage', { 'format-version': '3' });
    const model = new Map<number, string>();
    const batches: Change[][] = [
      [
        [1, 'a'],
        [2, 'b'],
        [3, 'c'],
        [4, 'd'],
        [5, 'e'],
        [6, 'f'],
      ],
      [
        [2, 'b2'],
        [3, 'c2'],
        [4, null],
        [7, 'g'],
      ],
      [
        [3, 'c3'],
        [8, 'h'],
      ],
    ];
    for (const [i, batch] of batches.entries()) await feed(wh, route, batch, i * 10, model);
    const before = await lineageOf(wh, route);
    const vectorsBefore = (await liveEntries(await wh.catalog.loadTable(route.table))).filter(
      (e) => e.data_file.content === 1,
    );

    // Act
    await compact(wh, 'shop.lineage');

    // Assess: one rewrite snapshot; no vector left but the one deleting key 4's version carrier (kept,
    // with its carrier, cdc/version-carriers.ts); same rows and lineage as before
    let table = await wh.catalog.loadTable(route.table);
    expect(vectorsBefore.length).toBeGreaterThan(0);
    expect(currentSnapshot(table.metadata)!.summary.operation).toBe('overwrite');
    const live = await liveEntries(table);
    const carriers = live.filter((e) => isVersionCarrierDataFile(table.metadata, e.data_file));
    expect(carriers).toHaveLength(1);
    expect(
      live.filter((e) => e.data_file.content === 1).map((e) => e.data_file.referenced_data_file),
    ).toEqual([carriers[0].data_file.file_path]);
    expect(live.filter((e) => e.data_file.content === 0)).toHaveLength(2);
    await checkV3(table);
    expect(await lineageOf(wh, route)).toEqual(before);
    expect(await rowsOf(wh, route)).toEqual(modelRows(model));
    expect(await duckRows(wh, route)).toEqual(modelRows(model));

    // Act: more changes (a new vector on the compacted file), then a second compaction that reads the
    // lineage columns the first one wrote
    const nextRowId = BigInt(table.metadata['next-row-id']!);
    await feed(
      wh,
      route,
      [
        [1, 'a4'],
        [6, null],
        [9, 'i'],
      ],
      30,
      model,
    );
    table = await wh.catalog.loadTable(route.table);
    const batchSeq = BigInt(currentSnapshot(table.metadata)!['sequence-number']);
    const middle = await lineageOf(wh, route);
    await compact(wh, 'shop.lineage');

    // Assess: changed rows got new ids and the batch's sequence number, the rest kept theirs; the
    // second compaction changed nothing of it
    for (const id of ['1', '9']) {
      expect(middle.get(id)!.rowId!).toBeGreaterThanOrEqual(nextRowId);
      expect(middle.get(id)!.lastUpdated).toBe(batchSeq);
    }
    for (const id of ['2', '3', '5', '7', '8']) expect(middle.get(id)).toEqual(before.get(id));
    expect(middle.has('6')).toBe(false);
    table = await wh.catalog.loadTable(route.table);
    expect(currentSnapshot(table.metadata)!.summary.operation).toBe('overwrite');
    await checkV3(table);
    expect(await lineageOf(wh, route)).toEqual(middle);
    const ids = [...middle.values()].map((l) => l.rowId);
    expect(new Set(ids).size).toBe(ids.length);

    // Act: a batch after the compaction catches the key index up through it
    await feed(
      wh,
      route,
      [
        [2, 'b5'],
        [7, null],
      ],
      40,
      model,
    );

    // Assess
    table = await wh.catalog.loadTable(route.table);
    expect(await verifyIndex(wh.catalog, table)).toEqual([]);
    expect(await rowsOf(wh, route)).toEqual(modelRows(model));
    expect(await duckRows(wh, route)).toEqual(modelRows(model));
    await checkV3(table);
  });

  it('abandons a group when a deletion vector for one of its files was committed while it worked', async () => {
    // Prepare: two batches (two small files), planned and compacted; then a batch deletes a row of the
    // first file by vector
    const route = upsertRoute('raced', { 'format-version': '3' });
    const model = new Map<number, string>();
    await feed(
      wh,
      route,
      [
        [1, 'a'],
        [2, 'b'],
      ],
      0,
      model,
    );
    await feed(wh, route, [[3, 'c']], 10, model);
    const table = await wh.catalog.loadTable(route.table);
    const settings = { ...resolveSettings(table.metadata), minInputFiles: 2 };
    const { plan } = await planCompaction(table, settings, 'raced-run', 'shop.raced');
    const outcomes = [await compactGroup(table, plan!, 0)];
    await feed(wh, route, [[1, null]], 20, model);

    // Act
    const result = await commitRewrite(wh.catalog, route.table, plan!, outcomes);

    // Assess: nothing committed; the batch's delete holds
    expect(plan!.groups).toHaveLength(1);
    expect(result.status).toBe('abandoned');
    expect(result.groupsAbandoned[0].reason).toMatch(/position deletes for its files were committed/);
    expect(await rowsOf(wh, route)).toEqual(modelRows(model));
    expect(await duckRows(wh, route)).toEqual(modelRows(model));
  });

  it('removes only the rewritten file’s vector from a Puffin file that holds another file’s too', async () => {
    // Prepare: two buckets, one data file each; one batch updates a key of each (one Puffin file, two
    // vectors); a run compacts one group only
    const route = { ...upsertRoute('shared', { 'format-version': '3' }), partitionBy: 'bucket(2, id)' };
    const model = new Map<number, string>();
    const first: Change[] = [1, 2, 3, 4, 5, 6].map((id) => [id, `v1-${id}`]);
    await feed(wh, route, first, 0, model);
    await feed(
      wh,
      route,
      [1, 2, 3, 4, 5, 6].map((id): Change => [id, `v2-${id}`]),
      10,
      model,
    );
    const before = await wh.catalog.loadTable(route.table);
    const vectors = (await liveEntries(before)).filter((e) => e.data_file.content === 1);
    const settings = { ...resolveSettings(before.metadata), minInputFiles: 2, maxGroupsPerRun: 1 };
    const { plan } = await planCompaction(before, settings, 'shared-run', 'shop.shared');
    const outcomes = [await compactGroup(before, plan!, 0)];

    // Act
    const result = await commitRewrite(wh.catalog, route.table, plan!, outcomes);

    // Assess: the other file's vector stays live, in the same Puffin file
    expect(new Set(vectors.map((e) => e.data_file.file_path)).size).toBe(1);
    expect(vectors).toHaveLength(2);
    expect(result).toMatchObject({ status: 'committed', deleteFilesRemoved: 1 });
    const table = await wh.catalog.loadTable(route.table);
    const left = (await liveEntries(table)).filter((e) => e.data_file.content === 1);
    expect(left).toHaveLength(1);
    expect(left[0].data_file.file_path).toBe(vectors[0].data_file.file_path);
    await checkV3(table);
    expect(await rowsOf(wh, route)).toEqual(modelRows(model));
    expect(await duckRows(wh, route)).toEqual(modelRows(model));
  });
});
