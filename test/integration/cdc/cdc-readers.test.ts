/**
 * CDC tables read by readers no one here wrote, against the same in-memory model of the source
 * table the property test uses, after every commit:
 *   - DuckDB over the live DataFiles, position DeleteFiles (anti-joined on file and row number) and
 *     equality DeleteFiles, with the spec's rules in SQL (support/readers.ts duckdbLiveRows);
 *   - icebird over loopback HTTP: it applies position deletes by file path. Its shortcuts (equality deletes ignore partition scoping and
 *     equality_ids; a null in a delete row matches anything) cannot bite here: floe's delete files
 *     hold only the key columns, keys are required (never null), and a partitioned delete file sits in
 *     the partition its keys decide, so scoping it or not removes the same rows.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { icebergRead } from 'icebird';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { parseSchema } from '../../../functions/core/spec/schema.js';
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
import { type HttpWarehouse, startHttpWarehouse } from '../../support/http-warehouse.js';
import { duckdbLiveRows } from '../../support/readers.js';

describe('CDC tables read by DuckDB and icebird', () => {
  let wh: HttpWarehouse;
  let n = 0;
  beforeAll(async () => {
    wh = await startHttpWarehouse();
  });
  afterAll(() => wh.close());

  it('random streams: floe, DuckDB and icebird all equal the source table after every commit', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<CdcTestMode>('debezium', 'upsert'),
        fc.constantFrom('position', 'equality'),
        fc.constantFrom(undefined, 'bucket(2, id)', 'region'),
        fc.array(stepArb, { minLength: 1, maxLength: 25 }),
        deliveryPlanArb,
        async (mode, deleteMode, partitionBy, steps, plan) => {
          // Prepare
          const route: TableRoute = {
            table: { namespace: ['cdc'], name: `items_${n++}` },
            topics: [CDC_TOPIC],
            schema: ITEMS_SCHEMA,
            partitionBy,
            mode,
            identifierColumns: ['id'],
            kafkaLineage: false,
            // icebird crashes on deflate Avro blocks under ~1 KB (a known shortcut of its reader)
            properties: { 'write.avro.compression-codec': 'uncompressed', 'floe.delete-mode': deleteMode },
          };
          const stream = buildStream(steps, mode);
          let delivered = 0;
          for (const delivery of planDeliveries(stream.records.length, plan)) {
            // Act
            await ingestEvent({ catalog: wh.catalog, routes: [route] }, esmEvent(stream.records, delivery));
            delivered = Math.max(delivered, delivery.to);
            const table = await wh.catalog.loadTable(route.table);

            // Assess
            const expected = modelKeys(stream.states[delivered - 1]);
            const floe = await readScanRows(table, await planScan(table));
            expect(floe.map(itemKey).sort(), 'floe').toEqual(expected);
            const local = (uri: string) => uri.replace(wh.url, wh.dir);
            const duck = await duckdbLiveRows(table, ['id', 'region', 'amount', 'note'], ['id'], local);
            expect(duck.map(itemKey).sort(), 'DuckDB').toEqual(expected);
            // icebird refuses a snapshot with delete manifests but no data manifest ("No data manifest
            // files found"), which a first batch that creates and deletes the same key commits.
            if (currentSnapshot(table.metadata)?.summary['total-data-files'] === '0') {
              expect(expected, 'no data files, so no rows').toEqual([]);
              continue;
            }
            const ice = (await icebergRead({ tableUrl: `${wh.url}/cdc/${route.table.name}` })) as Record<
              string,
              unknown
            >[];
            expect(ice.map(itemKey).sort(), 'icebird').toEqual(expected);
          }
        },
      ),
      { numRuns: 12, seed: 20261205 },
    );
  });

  it('the CDC sample of events/: all three readers see the same current orders', async () => {
    // Prepare
    const route: TableRoute = {
      table: { namespace: ['sales'], name: 'orders_current' },
      topics: ['shop.public.orders', '__debezium-heartbeat.shop'],
      schema: parseSchema(JSON.parse(readFileSync('events/orders-cdc-schema.json', 'utf8'))),
      partitionBy: 'bucket(4, order_id)',
      mode: 'debezium',
      identifierColumns: ['order_id'],
      kafkaLineage: false,
      properties: { 'write.avro.compression-codec': 'uncompressed' },
    };

    // Act
    for (const name of ['orders-cdc-1.json', 'orders-cdc-2.json']) {
      await ingestEvent(
        { catalog: wh.catalog, routes: [route] },
        JSON.parse(readFileSync(`events/${name}`, 'utf8')),
      );
    }

    // Assess
    const table = await wh.catalog.loadTable(route.table);
    const show = (r: Record<string, unknown>) => `${r.order_id} ${r.status} ${r.customer_id}`;
    const floe = (await readScanRows(table, await planScan(table))).map(show).sort();
    expect(floe).toHaveLength(11);
    const local = (uri: string) => uri.replace(wh.url, wh.dir);
    const duck = await duckdbLiveRows(table, ['order_id', 'status', 'customer_id'], ['order_id'], local);
    expect(duck.map(show).sort()).toEqual(floe);
    const ice = (await icebergRead({ tableUrl: `${wh.url}/sales/orders_current` })) as Record<
      string,
      unknown
    >[];
    expect(ice.map(show).sort()).toEqual(floe);
  });
});
