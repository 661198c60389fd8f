/**
 * The CDC property: whatever the change stream (random inserts, updates, deletes over a few keys),
 * however it is cut into batches and delivered (replays and overlapping redeliveries included), and
 * however the table is partitioned, the table read back after every commit equals the source table.
 * And delivered in any order (redriven on-failure batches, a backfill under the live tail), once
 * every batch has committed: with `_kafka` lineage, a late batch never undoes a newer change.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import {
  buildStream,
  CDC_TOPIC,
  type CdcTestMode,
  deliveryPlanArb,
  esmEvent,
  ITEMS_SCHEMA,
  itemKey,
  modelKeys,
  planDeliveries,
  stepArb,
} from '../../support/cdc-stream.js';
import { liveEntries } from '../../support/readers.js';
import { tempWarehouse } from '../../support/tables.js';

const LAYOUTS = [undefined, 'bucket(2, id)', 'region'] as const;

function itemsRoute(name: string, mode: CdcTestMode, partitionBy: string | undefined): TableRoute {
  return {
    table: { namespace: ['prop'], name },
    topics: [CDC_TOPIC],
    schema: ITEMS_SCHEMA,
    partitionBy,
    mode,
    identifierColumns: ['id'],
    kafkaLineage: true,
    // merge manifests early, so merged data and delete manifests are part of what is checked
    properties: { 'commit.manifest.min-count-to-merge': '3' },
  };
}

/** Cuts [0, total) at the given points (deduplicated, in range) into consecutive deliveries. */
function cut(total: number, points: number[]): { from: number; to: number }[] {
  const inner = [...new Set(points.map((p) => p % total))].filter((p) => p > 0).sort((a, b) => a - b);
  const bounds = [0, ...inner, total];
  return bounds.slice(1).map((to, i) => ({ from: bounds[i], to }));
}

describe('CDC tables equal the source table after every commit', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  let tableNumber = 0;
  beforeAll(async () => {
    wh = await tempWarehouse();
  });
  afterAll(() => wh.cleanup());

  it('holds for random streams, batches, redeliveries and partition layouts', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<CdcTestMode>('debezium', 'upsert'),
        fc.constantFrom(...LAYOUTS),
        fc.array(stepArb, { minLength: 1, maxLength: 30 }),
        deliveryPlanArb,
        async (mode, partitionBy, steps, plan) => {
          // Prepare
          const route = itemsRoute(`items_${tableNumber++}`, mode, partitionBy);
          const stream = buildStream(steps, mode);
          let delivered = 0;
          for (const delivery of planDeliveries(stream.records.length, plan)) {
            // Act
            const report = await ingestEvent(
              { catalog: wh.catalog, routes: [route] },
              esmEvent(stream.records, delivery),
            );
            const replayed = Math.max(0, Math.min(delivery.to, delivered) - delivery.from);
            delivered = Math.max(delivered, delivery.to);

            // Assess
            const [t] = report.tables;
            expect(t.deadLettered).toBe(0);
            expect(t.skippedAsReplayed).toBe(replayed);
            const table = await wh.catalog.loadTable(route.table);
            const rows = await readScanRows(table, await planScan(table));
            expect(rows.map(itemKey).sort()).toEqual(modelKeys(stream.states[delivered - 1]));
            const live = await liveEntries(table);
            const liveEqDeletes = live
              .filter((e) => e.data_file.content === 2)
              .reduce((s, e) => s + e.data_file.record_count, 0n);
            expect(currentSnapshot(table.metadata)?.summary['total-equality-deletes'] ?? '0').toBe(
              String(liveEqDeletes),
            );
          }
        },
      ),
      { numRuns: 50 },
    );
  });

  it('holds once every batch has committed, whatever order the batches arrive in', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<CdcTestMode>('debezium', 'upsert'),
        fc.constantFrom(...LAYOUTS),
        fc.array(stepArb, { minLength: 1, maxLength: 30 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.array(fc.nat({ max: 20 }), { minLength: 7, maxLength: 7 }),
        async (mode, partitionBy, steps, points, ranks) => {
          // Prepare: the stream cut into batches, shuffled by the random ranks
          const route = itemsRoute(`late_${tableNumber++}`, mode, partitionBy);
          const stream = buildStream(steps, mode);
          const shuffled = cut(stream.records.length, points)
            .map((b, i) => ({ b, rank: ranks[i % ranks.length] * 16 + i }))
            .sort((x, y) => x.rank - y.rank);

          // Act
          for (const { b } of shuffled) {
            const report = await ingestEvent(
              { catalog: wh.catalog, routes: [route] },
              esmEvent(stream.records, b),
            );
            expect(report.tables[0]).toMatchObject({ status: 'committed', deadLettered: 0 });
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
