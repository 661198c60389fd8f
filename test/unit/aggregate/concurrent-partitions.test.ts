/**
 * Two partitions' batches feeding the same windows, committed at the same time (two Lambda
 * invocations): the loser's merged rows were made on a base that moved, so they are dropped and the
 * batch is merged again on the winner's snapshot. The sums must be the sums of both, by hand.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { parseRoutes } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { tempWarehouse } from '../../support/tables.js';

const T0 = Date.UTC(2026, 10, 21, 12, 0, 0);

function eventOf(partition: number, items: { user: number; amount: number; sec: number }[]) {
  return {
    eventSource: 'aws:kafka',
    records: {
      [`orders-${partition}`]: items.map((it, i) => ({
        topic: 'orders',
        partition,
        offset: i,
        timestamp: T0,
        timestampType: 'CREATE_TIME',
        value: Buffer.from(
          JSON.stringify({
            user_id: it.user,
            amount: it.amount,
            order_ts: new Date(T0 + it.sec * 1000).toISOString(),
          }),
        ).toString('base64'),
        headers: [],
      })),
    },
  };
}

describe('aggregate: two partitions at once', () => {
  let wh: { catalog: EmbeddedCatalog; cleanup: () => Promise<void> };
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(async () => wh.cleanup());

  it('merges both into one row per window', async () => {
    // Prepare
    const routes = parseRoutes([
      {
        topics: ['orders'],
        table: 'rt.per_user',
        schema: {
          type: 'struct',
          'schema-id': 0,
          fields: [
            { id: 1, name: 'user_id', required: true, type: 'long' },
            { id: 2, name: 'amount', required: true, type: 'long' },
            { id: 3, name: 'order_ts', required: true, type: 'timestamptz' },
          ],
        },
        aggregate: {
          sql: "SELECT user_id, SUM(amount) AS paid, COUNT(*) AS n, MAX(amount) AS top FROM orders GROUP BY user_id, TUMBLE(order_ts, INTERVAL '1' MINUTE)",
          partitions: 2,
        },
      },
    ]);
    const options = { catalog: wh.catalog, routes };
    // The table exists before the race (creation races are the catalog's business, tested elsewhere).
    await ingestEvent(options, eventOf(2, [{ user: 9, amount: 1, sec: 1 }]));
    // Act
    const reports = await Promise.all([
      ingestEvent(
        options,
        eventOf(0, [
          { user: 1, amount: 10, sec: 5 },
          { user: 2, amount: 4, sec: 61 },
        ]),
      ),
      ingestEvent(
        options,
        eventOf(1, [
          { user: 1, amount: 7, sec: 30 },
          { user: 2, amount: 5, sec: 62 },
        ]),
      ),
    ]);
    // Assess
    expect(reports.map((r) => r.tables[0].status)).toEqual(['committed', 'committed']);
    const table = await wh.catalog.loadTable(routes[0].table);
    const rows = await readScanRows(table, await planScan(table));
    const view = rows
      .map((r) => ({
        user: r.user_id,
        start: Number(((r.window_start as bigint) / 1000n - BigInt(T0)) / 1000n),
        paid: r.paid,
        n: r.n,
        top: r.top,
      }))
      .sort((a, b) => Number(a.user) - Number(b.user));
    expect(view).toEqual([
      { user: 1n, start: 0, paid: 17n, n: 2n, top: 10n },
      { user: 2n, start: 60, paid: 9n, n: 2n, top: 5n },
      { user: 9n, start: 0, paid: 1n, n: 1n, top: 1n },
    ]);
  });
});
