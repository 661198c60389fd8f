/**
 * Converting equality deletes on a format-version 3 table: the rows they delete become deletion vectors,
 * each merged with its data file's vector, which leaves in the same snapshot (one vector per data file);
 * floe's version carriers — data files whose rows a vector deletes (cdc/version-carriers.ts) — stay, and
 * the equality deletes named `key-versions-` floe wrote before become such carriers, their versions
 * kept against late batches; a CDC batch that changes a data file's vector meanwhile sends the group
 * back to planning. Read by floe and DuckDB against a model.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { verifyIndex } from '../../../functions/core/key-index/verify-index.js';
import { convertEqualityDeletes } from '../../../functions/core/maintenance/convert-equality-deletes.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { readDataFile } from '../../../functions/core/data/parquet/read/read-data-file.js';
import { isVersionCarrierDataFile } from '../../../functions/core/scan/delete-index.js';
import { currentSchema, currentSnapshot } from '../../../functions/core/spec/metadata.js';
import type { ManifestEntry } from '../../../functions/core/spec/types.js';
import { commitEqualityCarrier } from '../../support/equality-carrier.js';
import { duckdbLiveRows, liveEntries } from '../../support/readers.js';
import { FaultyCatalog, tempWarehouse } from '../../support/tables.js';
import { type Change, feed, modelRows, rowsOf, TOPIC, upsertRoute } from '../../support/upsert-table.js';
import { checkV3 } from '../../support/v3-rules.js';

type Warehouse = Awaited<ReturnType<typeof tempWarehouse>>;

const isCarrier = (e: ManifestEntry) => /\/[^/]*key-versions-[^/]*$/.test(e.data_file.file_path);
const ofContent = (entries: ManifestEntry[], content: number) =>
  entries.filter((e) => e.data_file.content === content);

/** The first batch's data file (its five rows). */
const firstDataFile = (entries: ManifestEntry[]) =>
  ofContent(entries, 0).find((e) => e.data_file.record_count === 5n)!.data_file.file_path;

async function duckRows(table: LoadedTable): Promise<string[]> {
  return (await duckdbLiveRows(table, ['id', 'v'], ['id'])).map((r) => `${r.id}=${r.v}`).sort();
}

describe('converting equality deletes of a format-version 3 table', () => {
  let wh: Warehouse;
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(() => wh.cleanup());

  /**
   * Batches written with equality deletes, then (in floe.delete-mode=position) one with deletion
   * vectors and a version carrier on the same first data file, and key 3's version (deleted at offset
   * 11) in an equality carrier, as floe wrote them before.
   */
  async function mixedTable(name: string, model: Map<number, string>): Promise<TableRoute> {
    const route = upsertRoute(name, { 'format-version': '3', 'floe.delete-mode': 'equality' });
    const batches: Change[][] = [
      [
        [1, 'a'],
        [2, 'b'],
        [3, 'c'],
        [4, 'd'],
        [5, 'e'],
      ],
      [
        [2, 'b2'],
        [3, null],
      ],
    ];
    for (const [i, batch] of batches.entries()) await feed(wh, route, batch, i * 10, model);
    await wh.catalog.commitTable(
      route.table,
      [],
      [{ action: 'set-properties', updates: { 'floe.delete-mode': 'position' } }],
    );
    await feed(
      wh,
      route,
      [
        [1, 'a3'],
        [4, null],
      ],
      20,
      model,
    );
    await commitEqualityCarrier(wh.catalog, route.table, TOPIC, 3n, 11n);
    return route;
  }

  it('turns them into deletion vectors merged with each data file’s vector, and equality carriers into data file carriers', async () => {
    // Prepare
    const model = new Map<number, string>();
    const route = await mixedTable('merged', model);
    const before = await liveEntries(await wh.catalog.loadTable(route.table));
    const carriers = ofContent(before, 2).filter(isCarrier);
    const converted = ofContent(before, 2).filter((e) => !isCarrier(e));

    // Act
    const result = await convertEqualityDeletes(wh.catalog, route.table);

    // Assess: every equality delete left, the carrier's included, one vector per data file holds every
    // position deleted before; the data files are the same, and one more: key 3's version, which its
    // own vector deletes whole
    expect(carriers.length).toBeGreaterThan(0);
    expect(converted.length).toBeGreaterThan(0);
    expect(ofContent(before, 1).length).toBeGreaterThan(0);
    expect(result).toMatchObject({
      status: 'converted',
      equalityDeleteFiles: converted.length + carriers.length,
      equalityDeletesRemoved: converted.length + carriers.length,
      rowsDeleted: 2,
      positionDeleteFilesAdded: 1,
    });
    const table = await wh.catalog.loadTable(route.table);
    expect(currentSnapshot(table.metadata)!.summary.operation).toBe('replace');
    const after = await liveEntries(table);
    expect(ofContent(after, 2)).toEqual([]);
    const added = ofContent(after, 0).filter(
      (e) => !ofContent(before, 0).some((b) => b.data_file.file_path === e.data_file.file_path),
    );
    expect(ofContent(after, 0)).toHaveLength(ofContent(before, 0).length + 1);
    expect(added.map((e) => isVersionCarrierDataFile(table.metadata, e.data_file))).toEqual([true]);
    const [rewritten] = await readDataFile(
      table.io,
      added[0].data_file.file_path,
      currentSchema(table.metadata),
    );
    expect(rewritten).toMatchObject({ id: 3n, v: null, _kafka: { topic: TOPIC, partition: 0, offset: 11n } });
    // Every data file carrying a version has one vector, of all its rows
    for (const carrier of ofContent(after, 0).filter(isCarrier)) {
      const of = ofContent(after, 1).filter(
        (e) => e.data_file.referenced_data_file === carrier.data_file.file_path,
      );
      expect(of.map((e) => e.data_file.record_count)).toEqual([carrier.data_file.record_count]);
    }
    const firstFile = firstDataFile(before);
    const vectors = ofContent(after, 1).filter((e) => e.data_file.referenced_data_file === firstFile);
    expect(vectors.map((e) => e.data_file.record_count)).toEqual([4n]);
    await checkV3(table);
    expect(await rowsOf(wh, route)).toEqual(modelRows(model));
    expect(await duckRows(table)).toEqual(modelRows(model));

    // Act: a late batch (offsets 5–6) writes key 3 again, and key 6
    await feed(
      wh,
      route,
      [
        [3, 'late'],
        [6, 'f'],
      ],
      5,
    );

    // Assess: key 3 stays deleted, by the version its rewritten carrier holds; the key index followed
    // the conversion's snapshot (the carrier's row is no live entry)
    model.set(6, 'f');
    expect(await rowsOf(wh, route)).toEqual(modelRows(model));
    expect(await verifyIndex(wh.catalog, await wh.catalog.loadTable(route.table))).toEqual([]);
  });

  it('plans again when a CDC batch changed the vector of a data file it writes one for', async () => {
    // Prepare: a batch deleting key 5 (in the first data file) commits just before the conversion does
    const model = new Map<number, string>();
    const route = await mixedTable('raced', model);
    const faulty = new FaultyCatalog(wh.catalog);
    faulty.beforeCommit = () => feed(wh, route, [[5, null]], 30, model);

    // Act
    const result = await convertEqualityDeletes(faulty, route.table);

    // Assess: planned twice; the first data file's one vector holds the batch's position too
    expect(result).toMatchObject({ status: 'converted', replans: 1, rowsDeleted: 2 });
    const table = await wh.catalog.loadTable(route.table);
    const live = await liveEntries(table);
    expect(ofContent(live, 2)).toEqual([]);
    const firstFile = firstDataFile(live);
    const vectors = ofContent(live, 1).filter((e) => e.data_file.referenced_data_file === firstFile);
    expect(vectors.map((e) => e.data_file.record_count)).toEqual([5n]);
    await checkV3(table);
    expect(await rowsOf(wh, route)).toEqual(modelRows(model));
    expect(await duckRows(table)).toEqual(modelRows(model));
  });
});
