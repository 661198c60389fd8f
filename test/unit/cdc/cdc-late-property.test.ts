/**
 * The late-batch property: whatever the change stream, however it is cut into batches and in
 * whatever order the batches arrive (redriven on-failure batches, a backfill under the live tail),
 * once every batch has committed the table equals the source table — with `_kafka` lineage, a late
 * batch never undoes a newer change of the same partition.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import {
  buildStream,
  CDC_TOPIC,
  type CdcTestMode,
  esmEvent,
  ITEMS_SCHEMA,
  itemKey,
  modelKeys,
  stepArb,
} from '../../support/cdc-stream.js';
import { tempWarehouse } from '../../support/tables.js';

/** Cuts [0, total) at the given points (deduplicated, in range) into consecutive deliveries. */
function cut(total: number, points: number[]): { from: number; to: number }[] {
  const inner = [...new Set(points.map((p) => p % total))].filter((p) => p > 0).sort((a, b) => a - b);
  const bounds = [0, ...inner, total];
  return bounds.slice(1).map((to, i) => ({ from: bounds[i], to }));
}

describe('CDC tables after batches delivered out of order', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  let tableNumber = 0;
  beforeAll(async () => {
    wh = await tempWarehouse();
  });
  afterAll(() => wh.cleanup());

  it('equal the source table once every batch has committed, in any order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<CdcTestMode>('debezium', 'upsert'),
        fc.constantFrom(undefined, 'bucket(2, id)', 'region'),
        fc.array(stepArb, { minLength: 1, maxLength: 25 }),
        fc.array(fc.nat(), { maxLength: 5 }),
        fc.array(fc.nat(), { minLength: 6, maxLength: 6 }),
        async (mode, partitionBy, steps, points, order) => {
          // Prepare
          const route: TableRoute = {
            table: { namespace: ['cdc'], name: `late_${tableNumber++}` },
            topics: [CDC_TOPIC],
            schema: ITEMS_SCHEMA,
            partitionBy,
            mode,
            identifierColumns: ['id'],
            kafkaLineage: true,
            properties: {},
          };
          const stream = buildStream(steps, mode);
          const batches = cut(stream.records.length, points);
          // A shuffle by the random ranks: batch i goes where its rank sorts it
          const shuffled = batches
            .map((b, i) => ({ b, rank: order[i % order.length] * 16 + i }))
            .sort((x, y) => x.rank - y.rank)
            .map((x) => x.b);

          // Act
          for (const delivery of shuffled) {
            const report = await ingestEvent(
              { catalog: wh.catalog, routes: [route] },
              esmEvent(stream.records, delivery),
            );
            expect(report.tables[0].status).toBe('committed');
          }

          // Assess
          const table = await wh.catalog.loadTable(route.table);
          const rows = await readScanRows(table, await planScan(table));
          expect(rows.map(itemKey).sort()).toEqual(modelKeys(stream.states[stream.records.length - 1]));
        },
      ),
      { numRuns: 60 },
    );
  });
});
