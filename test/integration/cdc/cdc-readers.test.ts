/**
 * CDC tables read by readers no one here wrote, against the same in-memory model of the source
 * table the property test uses, after every commit:
 *   - DuckDB over the live DataFiles and equality DeleteFiles, with the spec's rule in SQL: a delete
 *     row removes a data row with the same key when the delete's data sequence number is strictly
 *     greater, and the delete's spec is unpartitioned or its spec and partition are the data file's;
 *   - icebird over loopback HTTP. Its shortcuts (equality deletes ignore partition scoping and
 *     equality_ids; a null in a delete row matches anything) cannot bite here: floe's delete files
 *     hold only the key columns, keys are required (never null), and a partitioned delete file sits in
 *     the partition its keys decide, so scoping it or not removes the same rows.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { icebergRead } from 'icebird';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { specById } from '../../../functions/core/spec/metadata.js';
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
import { duckdbQuery, liveEntries, sqlString } from '../../support/readers.js';

const partKey = (partition: Record<string, unknown>) =>
  JSON.stringify(partition, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));

/** The live rows by DuckDB: data files minus equality deletes, the sequence-number rule in SQL. */
async function duckdbLiveRows(
  wh: HttpWarehouse,
  table: LoadedTable,
  columns: string[],
): Promise<Record<string, unknown>[]> {
  const entries = await liveEntries(table);
  const local = (path: string) => path.replace(wh.url, wh.dir);
  const data = entries.filter((e) => e.data_file.content === 0);
  const deletes = entries.filter((e) => e.data_file.content === 2);
  if (data.length === 0) return [];
  const fileRows = (list: typeof entries) =>
    list
      .map((e) => {
        const global = specById(table.metadata, e.data_file.spec_id).fields.length === 0;
        return `(${sqlString(local(e.data_file.file_path))}, ${e.sequence_number}, ${e.data_file.spec_id}, ${sqlString(partKey(e.data_file.partition))}, ${global})`;
      })
      .join(', ');
  const key = 'id';
  const deletesCte =
    deletes.length === 0
      ? `select null::bigint as ${key}, 0 as seq, 0 as spec, '' as part, false as global where false`
      : `select e.${key}, f.seq, f.spec, f.part, f.global
         from read_parquet([${deletes.map((e) => sqlString(local(e.data_file.file_path))).join(', ')}], filename = true) e
         join (values ${fileRows(deletes)}) f(path, seq, spec, part, global) on e.filename = f.path`;
  return duckdbQuery(
    `with data as (
       select d.*, f.seq, f.spec, f.part
       from read_parquet([${data.map((e) => sqlString(local(e.data_file.file_path))).join(', ')}], filename = true) d
       join (values ${fileRows(data)}) f(path, seq, spec, part, global) on d.filename = f.path
     ), dels as (${deletesCte})
     select ${columns.join(', ')} from data
     where not exists (
       select 1 from dels
       where dels.${key} = data.${key} and dels.seq > data.seq
         and (dels.global or (dels.spec = data.spec and dels.part = data.part)))`,
  );
}

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
        fc.constantFrom(undefined, 'bucket(2, id)', 'region'),
        fc.array(stepArb, { minLength: 1, maxLength: 25 }),
        deliveryPlanArb,
        async (mode, partitionBy, steps, plan) => {
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
            properties: { 'write.avro.compression-codec': 'uncompressed' },
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
            const duck = await duckdbLiveRows(wh, table, ['id', 'region', 'amount', 'note']);
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
      { numRuns: 8 },
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
    const entries = await liveEntries(table);
    const local = (path: string) => path.replace(wh.url, wh.dir);
    const data = entries.filter((e) => e.data_file.content === 0);
    const deletes = entries.filter((e) => e.data_file.content === 2);
    const values = (list: typeof entries) =>
      list
        .map(
          (e) =>
            `(${sqlString(local(e.data_file.file_path))}, ${e.sequence_number}, ${sqlString(partKey(e.data_file.partition))})`,
        )
        .join(', ');
    const duck = await duckdbQuery(
      `with data as (
         select d.*, f.seq, f.part from read_parquet([${data.map((e) => sqlString(local(e.data_file.file_path))).join(', ')}], filename = true) d
         join (values ${values(data)}) f(path, seq, part) on d.filename = f.path
       ), dels as (
         select e.order_id, f.seq, f.part from read_parquet([${deletes.map((e) => sqlString(local(e.data_file.file_path))).join(', ')}], filename = true) e
         join (values ${values(deletes)}) f(path, seq, part) on e.filename = f.path
       )
       select order_id, status, customer_id from data
       where not exists (select 1 from dels where dels.order_id = data.order_id and dels.seq > data.seq and dels.part = data.part)`,
    );
    expect(duck.map(show).sort()).toEqual(floe);
    const ice = (await icebergRead({ tableUrl: `${wh.url}/sales/orders_current` })) as Record<
      string,
      unknown
    >[];
    expect(ice.map(show).sort()).toEqual(floe);
  });
});
