/**
 * Catching a key index up from the snapshot it covers: across a compaction (rows moved, deletes
 * applied), from a covered snapshot that was rolled back (rebuilt instead), and with two writers'
 * index commits in either order. After each, the index agrees with a full scan (verify-index.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main as cli } from '../../../functions/cli/main.js';
import { catchUpIndex, KeyIndexRebuildError } from '../../../functions/core/key-index/catch-up.js';
import { indexIdentifier, readCoverage } from '../../../functions/core/key-index/index-table.js';
import { indexStatus, keyColumnsOf, verifyIndex } from '../../../functions/core/key-index/verify-index.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import { tempWarehouse } from '../../support/tables.js';
import { type Change, feed, modelRows, rowsOf, upsertRoute } from '../../support/upsert-table.js';

const BATCHES: Change[][] = [
  [
    [1, 'a'],
    [2, 'b'],
    [3, 'c'],
    [4, 'd'],
  ],
  [
    [2, 'b2'],
    [3, null],
    [5, 'e'],
  ],
  [
    [1, null],
    [3, 'c3'],
    [5, 'e2'],
  ],
];

describe('key index catch-up', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(() => wh.cleanup());

  it('follows a compaction that moved rows and applied deletes, from its files alone', async () => {
    // Prepare
    const route = upsertRoute('compacted');
    const model = new Map<number, string>();
    for (const [i, batch] of BATCHES.entries()) await feed(wh, route, batch, i * 10, model);
    const quiet = process.stdout.write;
    process.stdout.write = (() => true) as typeof process.stdout.write;
    try {
      expect(await cli(['maintain', 'compact', '--warehouse', wh.dir, '--table', 'shop.compacted'])).toBe(0);
    } finally {
      process.stdout.write = quiet;
    }
    const main = await wh.catalog.loadTable(route.table);
    expect((await indexStatus(wh.catalog, main)).behind).toBe(1);

    // Act
    const up = await catchUpIndex(wh.catalog, main, keyColumnsOf(main));
    await feed(
      wh,
      route,
      [
        [2, 'b4'],
        [4, null],
        [6, 'f'],
      ],
      40,
      model,
    );

    // Assess
    expect(up).toMatchObject({ kind: 'covered', how: 'caught-up', snapshots: 1 });
    const after = await wh.catalog.loadTable(route.table);
    expect(await verifyIndex(wh.catalog, after)).toEqual([]);
    expect(await rowsOf(wh, route)).toEqual(modelRows(model));
  });

  it('rebuilds when the snapshot it covers was rolled back', async () => {
    // Prepare: the index covers batch 2's snapshot; the table goes back to batch 1's and moves on.
    const route = upsertRoute('rolled');
    await feed(wh, route, BATCHES[0], 0);
    const first = currentSnapshot((await wh.catalog.loadTable(route.table)).metadata)!;
    await feed(wh, route, BATCHES[1], 10);
    const loaded = await wh.catalog.loadTable(route.table);
    await wh.catalog.commitTable(
      route.table,
      [],
      [
        {
          action: 'set-snapshot-ref',
          'ref-name': 'main',
          type: 'branch',
          'snapshot-id': first['snapshot-id'],
        },
      ],
      loaded,
    );
    const rolled = await wh.catalog.loadTable(route.table);

    // Act
    const up = await catchUpIndex(wh.catalog, rolled, keyColumnsOf(rolled));

    // Assess
    expect(up).toMatchObject({ kind: 'covered', how: 'rebuilt' });
    expect(await verifyIndex(wh.catalog, rolled)).toEqual([]);
  });

  it('leaves a rebuild larger than a batch may scan to floe index rebuild', async () => {
    // Prepare: a table written without its index.
    const route = upsertRoute('unindexed', { 'floe.key-index': 'off' });
    await feed(wh, route, BATCHES[0], 0);
    const main = await wh.catalog.loadTable(route.table);

    // Act
    const refused = await catchUpIndex(wh.catalog, main, keyColumnsOf(main), { maxRebuildRows: 3 }).catch(
      (e) => e,
    );
    const allowed = await catchUpIndex(wh.catalog, main, keyColumnsOf(main), { maxRebuildRows: 4 });

    // Assess
    expect(refused).toBeInstanceOf(KeyIndexRebuildError);
    expect(refused.message).toContain('from 4 rows');
    expect(allowed).toMatchObject({ kind: 'covered', how: 'rebuilt' });
    expect(await verifyIndex(wh.catalog, main)).toEqual([]);
  });

  for (const order of ['older first', 'newer first'] as const) {
    it(`keeps the newer coverage when two writers' index commits land ${order}`, async () => {
      // Prepare: batches committed without the index; it is built at the first.
      const route = upsertRoute(`two_${order === 'older first' ? 'a' : 'b'}`, { 'floe.key-index': 'off' });
      await feed(wh, route, BATCHES[0], 0);
      const s0 = await wh.catalog.loadTable(route.table);
      const columns = keyColumnsOf(s0);
      await catchUpIndex(wh.catalog, s0, columns);
      await feed(wh, route, BATCHES[1], 10);
      const s1 = await wh.catalog.loadTable(route.table);
      await feed(wh, route, BATCHES[2], 20);
      const s2 = await wh.catalog.loadTable(route.table);

      // Act
      const [a, b] = order === 'older first' ? [s1, s2] : [s2, s1];
      const first = await catchUpIndex(wh.catalog, a, columns);
      const second = await catchUpIndex(wh.catalog, b, columns);

      // Assess
      const index = await wh.catalog.loadTable(indexIdentifier(route.table));
      expect(readCoverage(index)?.snapshotId).toBe(currentSnapshot(s2.metadata)?.['snapshot-id']);
      expect(first).toMatchObject({ kind: 'covered', how: 'caught-up' });
      expect(second.kind).toBe(order === 'older first' ? 'covered' : 'ahead');
      expect(await verifyIndex(wh.catalog, s2)).toEqual([]);
    });
  }
});
