/** Compacting the index's log: one live entry per live key, the same view, the same coverage. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compactIndex, indexFiles } from '../../../functions/core/key-index/compact-index.js';
import { indexIdentifier, readCoverage } from '../../../functions/core/key-index/index-table.js';
import { readIndexView } from '../../../functions/core/key-index/index-locator.js';
import { verifyIndex } from '../../../functions/core/key-index/verify-index.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { tempWarehouse } from '../../support/tables.js';
import { feed, upsertRoute } from '../../support/upsert-table.js';

describe('key index compaction', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(() => wh.cleanup());

  it('keeps one entry per live key, the view and the coverage; later batches append on it', async () => {
    // Prepare
    const route = upsertRoute('compacted_index');
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
    await feed(
      wh,
      route,
      [
        [1, null],
        [5, 'e2'],
      ],
      20,
    );
    const before = await wh.catalog.loadTable(indexIdentifier(route.table));
    const viewBefore = await readIndexView(before);

    // Act
    const after = (await compactIndex(wh.catalog, before))!;
    await feed(
      wh,
      route,
      [
        [2, 'b3'],
        [6, 'f'],
      ],
      30,
    );

    // Assess
    const rows = await readScanRows(after, await planScan(after));
    expect(rows.map((r) => r.key).sort()).toEqual(['i2', 'i4', 'i5']);
    expect(rows.every((r) => r.live === true)).toBe(true);
    expect(indexFiles(after)).toBeLessThan(indexFiles(before));
    expect(readCoverage(after)).toEqual(readCoverage(before));
    const viewAfter = await readIndexView(after);
    for (const key of ['i1', 'i2', 'i3', 'i4', 'i5'])
      expect(viewAfter.state(key)).toEqual(viewBefore.state(key));
    expect(await verifyIndex(wh.catalog, await wh.catalog.loadTable(route.table))).toEqual([]);
  });
});
