/**
 * The CDC property: whatever the change stream (random inserts, updates, deletes over a few keys),
 * however it is cut into batches and delivered (replays and overlapping redeliveries included), and
 * however the table is partitioned, the table read back after every commit equals the source table.
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
          const route: TableRoute = {
            table: { namespace: ['prop'], name: `items_${tableNumber++}` },
            topics: [CDC_TOPIC],
            schema: ITEMS_SCHEMA,
            partitionBy,
            mode,
            identifierColumns: ['id'],
            kafkaLineage: true,
            // merge manifests early, so merged data and delete manifests are part of what is checked
            properties: { 'commit.manifest.min-count-to-merge': '3' },
          };
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
});
