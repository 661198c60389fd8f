/**
 * The index RowLocator: it finds the rows a scan finds; an index naming a row the table does not have
 * is never deleted by (the lookup falls back to the scan and says why); an index ahead of the loaded
 * snapshot falls back too.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scanRowLocator } from '../../../functions/core/cdc/locate-rows.js';
import { keyFromRow } from '../../../functions/core/cdc/record-key.js';
import { appendEntries } from '../../../functions/core/key-index/index-commit.js';
import { indexIdentifier, readCoverage } from '../../../functions/core/key-index/index-table.js';
import { keyIndexLocator } from '../../../functions/core/key-index/index-locator.js';
import { LiveFilesCache } from '../../../functions/core/key-index/live-files.js';
import { keyColumnsOf, verifyIndex } from '../../../functions/core/key-index/verify-index.js';
import { IndexViewCache } from '../../../functions/core/key-index/view-cache.js';
import { tempWarehouse } from '../../support/tables.js';
import { feed, upsertRoute } from '../../support/upsert-table.js';

const where = (rows: { file: { file_path: string }; pos: number; key: string }[]) =>
  rows.map((r) => `${r.key} ${r.file.file_path}@${r.pos}`).sort();

describe('the key index locator', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  const route = upsertRoute('located');
  beforeEach(async () => {
    wh = await tempWarehouse();
    await feed(
      wh,
      route,
      [
        [1, 'a'],
        [2, 'b'],
        [3, 'c'],
        [4, 'd'],
      ],
      0,
    );
    await feed(
      wh,
      route,
      [
        [2, 'b2'],
        [3, null],
        [5, 'e'],
      ],
      10,
    );
  });
  afterEach(() => wh.cleanup());

  const keys = [1, 2, 3, 5, 9].map((id) =>
    keyFromRow({ id: BigInt(id) }, [{ id: 1, name: 'id', path: ['id'], type: 'long' }]),
  );

  it('finds the rows the scan finds, from the index', async () => {
    // Prepare
    const main = await wh.catalog.loadTable(route.table);
    const columns = keyColumnsOf(main);
    const fallbacks: string[] = [];

    // Act
    const indexed = await keyIndexLocator(wh.catalog, (r) => fallbacks.push(r)).locate(main, columns, keys);
    const scanned = await scanRowLocator.locate(main, columns, keys);

    // Assess
    expect(fallbacks).toEqual([]);
    expect(indexed.snapshotId).toBe(scanned.snapshotId);
    expect(where(indexed.rows)).toEqual(where(scanned.rows));
    expect(indexed.rows.map((r) => r.key).sort()).toEqual(['i1', 'i2', 'i5'].sort());
  });

  it("loads nothing of the index on the snapshot this process's own commit left", async () => {
    // Prepare: the beforeEach batches ran here, so the process's view covers the table's snapshot.
    const main = await wh.catalog.loadTable(route.table);
    const columns = keyColumnsOf(main);
    const loaded: string[] = [];
    const watched = new Proxy(wh.catalog, {
      get(target, property) {
        const value = Reflect.get(target, property);
        if (property !== 'loadTable' || typeof value !== 'function') return value;
        return (id: { name: string }) => {
          loaded.push(id.name);
          return value.call(target, id);
        };
      },
    });

    // Act
    const indexed = await keyIndexLocator(watched).locate(main, columns, keys);

    // Assess
    expect(loaded).toEqual([]);
    expect(where(indexed.rows)).toEqual(where((await scanRowLocator.locate(main, columns, keys)).rows));
  });

  it('finds the same rows reading the index by keys when its view is too large to keep', async () => {
    // Prepare
    const main = await wh.catalog.loadTable(route.table);
    const columns = keyColumnsOf(main);
    const caches = { views: new IndexViewCache({ maxBytes: 1 }), files: new LiveFilesCache() };
    const fallbacks: string[] = [];

    // Act
    const indexed = await keyIndexLocator(wh.catalog, (r) => fallbacks.push(r), caches).locate(
      main,
      columns,
      keys,
    );

    // Assess
    expect(fallbacks).toEqual([]);
    expect(caches.views.stats().unkept).toBe(1);
    expect(where(indexed.rows)).toEqual(where((await scanRowLocator.locate(main, columns, keys)).rows));
  });

  it('never deletes by an index naming a row the table does not have: it scans and says why', async () => {
    // Prepare: a wrong entry, newer than the others, for key 1.
    const main = await wh.catalog.loadTable(route.table);
    const columns = keyColumnsOf(main);
    const index = await wh.catalog.loadTable(indexIdentifier(route.table));
    const covered = readCoverage(index)!;
    const wrong = { key: keys[0].text, filePath: `${main.metadata.location}/data/nothing.parquet`, pos: 0n };
    await appendEntries(
      wh.catalog,
      index,
      [{ ...wrong, live: true, seq: 99n, version: null }],
      covered,
      () => 'append',
    );
    const fallbacks: [string, string][] = [];

    // Act
    const indexed = await keyIndexLocator(wh.catalog, (r, k) => fallbacks.push([k, r])).locate(
      main,
      columns,
      keys,
    );
    const scanned = await scanRowLocator.locate(main, columns, keys);

    // Assess
    expect(where(indexed.rows)).toEqual(where(scanned.rows));
    expect(await verifyIndex(wh.catalog, main)).toEqual([
      expect.stringMatching(/^key i1: the index says .*nothing\.parquet@0, the table has .*@\d+$/),
    ]);
    expect(fallbacks).toEqual([
      ['failed', expect.stringContaining('nothing.parquet, which is not live in the table')],
    ]);
  });

  it('scans when the index covers a newer snapshot than the one loaded', async () => {
    // Prepare
    const old = await wh.catalog.loadTable(route.table);
    await feed(wh, route, [[1, 'a3']], 20);
    const fallbacks: string[] = [];

    // Act
    const located = await keyIndexLocator(wh.catalog, (_r, k) => fallbacks.push(k)).locate(
      old,
      keyColumnsOf(old),
      keys,
    );

    // Assess
    expect(fallbacks).toEqual(['ahead']);
    expect(where(located.rows)).toEqual(
      where((await scanRowLocator.locate(old, keyColumnsOf(old), keys)).rows),
    );
  });
});
