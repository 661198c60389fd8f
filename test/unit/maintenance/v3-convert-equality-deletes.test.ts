/**
 * Converting equality deletes on a format-version 3 table: the rows they delete become deletion vectors,
 * each merged with its data file's vector, which leaves in the same snapshot (one vector per data file);
 * floe's version carriers stay, both the data files whose rows a vector deletes (cdc/version-carriers.ts)
 * and the equality deletes named `key-versions-` floe wrote before; a CDC batch that changes a data
 * file's vector meanwhile sends the group back to planning. Read by floe and DuckDB against a model.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { convertEqualityDeletes } from '../../../functions/core/maintenance/convert-equality-deletes.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
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
   * vectors and a key-versions carrier on the same first data file.
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
    await commitEqualityCarrier(wh.catalog, route.table, TOPIC, 4n, 21n);
    return route;
  }

  it('turns them into deletion vectors merged with each data file’s vector, and keeps the key-versions carriers', async () => {
    // Prepare
    const model = new Map<number, string>();
    const route = await mixedTable('merged', model);
    const before = await liveEntries(await wh.catalog.loadTable(route.table));
    const carriers = ofContent(before, 2).filter(isCarrier);
    const converted = ofContent(before, 2).filter((e) => !isCarrier(e));

    // Act
    const result = await convertEqualityDeletes(wh.catalog, route.table);

    // Assess: the equality deletes left, the carriers stayed, one vector per data file holds every
    // position deleted before; the data files are the same
    expect(carriers.length).toBeGreaterThan(0);
    expect(converted.length).toBeGreaterThan(0);
    expect(ofContent(before, 1).length).toBeGreaterThan(0);
    expect(result).toMatchObject({
      status: 'converted',
      equalityDeleteFiles: converted.length,
      equalityDeletesRemoved: converted.length,
      rowsDeleted: 2,
      positionDeleteFilesAdded: 1,
    });
    const table = await wh.catalog.loadTable(route.table);
    expect(currentSnapshot(table.metadata)!.summary.operation).toBe('replace');
    const after = await liveEntries(table);
    expect(ofContent(after, 2).map((e) => e.data_file.file_path)).toEqual(
      carriers.map((e) => e.data_file.file_path),
    );
    expect(ofContent(after, 0).map((e) => e.data_file.file_path)).toEqual(
      ofContent(before, 0).map((e) => e.data_file.file_path),
    );
    // The data file carrying key 4's version, and the vector deleting it, stay
    const [dataCarrier] = ofContent(before, 0).filter(isCarrier);
    expect(
      ofContent(after, 1).filter((e) => e.data_file.referenced_data_file === dataCarrier.data_file.file_path),
    ).toHaveLength(1);
    const firstFile = firstDataFile(before);
    const vectors = ofContent(after, 1).filter((e) => e.data_file.referenced_data_file === firstFile);
    expect(vectors.map((e) => e.data_file.record_count)).toEqual([4n]);
    await checkV3(table);
    expect(await rowsOf(wh, route)).toEqual(modelRows(model));
    expect(await duckRows(table)).toEqual(modelRows(model));
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
    expect(ofContent(live, 2).every(isCarrier)).toBe(true);
    const firstFile = firstDataFile(live);
    const vectors = ofContent(live, 1).filter((e) => e.data_file.referenced_data_file === firstFile);
    expect(vectors.map((e) => e.data_file.record_count)).toEqual([5n]);
    await checkV3(table);
    expect(await rowsOf(wh, route)).toEqual(modelRows(model));
    expect(await duckRows(table)).toEqual(modelRows(model));
  });
});
