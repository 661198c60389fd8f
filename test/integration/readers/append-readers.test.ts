/**
 * What floe's ingest path writes is read back by readers no one here wrote: DuckDB over every live
 * DataFile (values, field ids, stats), and icebird over the whole table through a loopback HTTP
 * server (its only way in). All three must agree with floe's own scan.
 */
import { readFileSync } from 'node:fs';
import { icebergRead } from 'icebird';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { decodeValue } from '../../../functions/core/spec/conversions.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { parseSchema } from '../../../functions/core/spec/schema.js';
import { findField } from '../../../functions/core/spec/schema-index.js';
import { currentSchema, currentSnapshot } from '../../../functions/core/spec/metadata.js';
import type { Row } from '../../../functions/core/spec/types.js';
import { type HttpWarehouse, startHttpWarehouse } from '../../support/http-warehouse.js';
import { duckdbQuery, liveEntries, sqlString } from '../../support/readers.js';

const event = (name: string) => JSON.parse(readFileSync(`events/${name}`, 'utf8'));
const schema = parseSchema(JSON.parse(readFileSync('events/orders.schema.json', 'utf8')));

function route(kafkaLineage: boolean, name: string): TableRoute {
  return {
    table: { namespace: ['sales'], name },
    topics: ['orders'],
    schema,
    partitionBy: 'day(order_ts)',
    kafkaLineage,
    // icebird crashes on deflate Avro blocks under ~1 KB (a known shortcut of its reader)
    properties: { 'write.avro.compression-codec': 'uncompressed' },
  };
}

const cents = (unscaled: unknown) => Number(unscaled);

describe('tables written by the ingest path, read by DuckDB and icebird', () => {
  let wh: HttpWarehouse;
  let table: LoadedTable;
  let floeRows: Row[];

  beforeAll(async () => {
    wh = await startHttpWarehouse();
    for (const r of [route(true, 'orders'), route(false, 'orders_plain')]) {
      for (const f of ['orders-batch-1.json', 'orders-batch-2.json', 'orders-batch-1.json']) {
        await ingestEvent({ catalog: wh.catalog, routes: [r] }, event(f));
      }
    }
    table = await wh.catalog.loadTable({ namespace: ['sales'], name: 'orders' });
    floeRows = await readScanRows(table, await planScan(table));
  });
  afterAll(() => wh.close());

  it('committed each batch once (the replayed batch added nothing)', () => {
    expect(table.metadata.snapshots).toHaveLength(2);
    expect(floeRows).toHaveLength(238);
    expect(new Set(floeRows.map((r) => r.order_id)).size).toBe(238);
    expect(currentSnapshot(table.metadata)!.summary['total-records']).toBe('238');
  });

  it('DuckDB reads every live DataFile with the same rows as floe', async () => {
    const entries = await liveEntries(table);
    const paths = entries.map((e) => sqlString(e.data_file.file_path.replace(wh.url, wh.dir)));
    const rows = await duckdbQuery(
      `select order_id, customer_id, epoch_us(order_ts) as ts, amount::varchar as amount, country,
              shipping.city as city, len(lines) as nlines, _kafka.topic as topic, _kafka."offset" as off,
              _kafka.partition as part
       from read_parquet([${paths.join(',')}]) order by order_id`,
    );
    expect(rows).toHaveLength(floeRows.length);
    const byId = new Map(floeRows.map((r) => [r.order_id, r]));
    for (const d of rows) {
      const f = byId.get(d.order_id as bigint)!;
      expect(f, `order ${d.order_id}`).toBeDefined();
      expect(d.customer_id).toBe(f.customer_id);
      expect(d.ts).toBe(f.order_ts);
      expect(d.amount).toBe((Number(f.amount) / 100).toFixed(2));
      expect(d.country).toBe(f.country);
      expect(d.city).toBe((f.shipping as Row).city);
      expect(Number(d.nlines)).toBe((f.lines as Row[]).length);
      const kafka = f._kafka as Row;
      expect([d.topic, d.off, d.part]).toEqual([kafka.topic, kafka.offset, kafka.partition]);
    }
  });

  it('DuckDB sees the Iceberg field id on every column, nested ones too', async () => {
    const [entry] = await liveEntries(table);
    const cols = await duckdbQuery(
      `select name, field_id from parquet_schema(${sqlString(entry.data_file.file_path.replace(wh.url, wh.dir))})
       where name <> 'schema' and field_id is not null`,
    );
    const ids = new Set(cols.map((c) => Number(c.field_id)));
    const s = currentSchema(table.metadata);
    for (let id = 1; id <= table.metadata['last-column-id']; id++) {
      if (findField(s, id)) expect(ids.has(id), `field id ${id}`).toBe(true);
    }
  });

  it("the DataFile stats match DuckDB's min/max and counts", async () => {
    const s = currentSchema(table.metadata);
    for (const { data_file: f } of await liveEntries(table)) {
      const [d] = await duckdbQuery(
        `select count(*) as n, min(order_id) as lo, max(order_id) as hi, min(epoch_us(order_ts)) as tlo,
                max(epoch_us(order_ts)) as thi, count(status) as statuses
         from read_parquet(${sqlString(f.file_path.replace(wh.url, wh.dir))})`,
      );
      expect(f.record_count).toBe(d.n);
      expect(decodeValue(findField(s, 1)!.type, f.lower_bounds!.get(1)!)).toBe(d.lo);
      expect(decodeValue(findField(s, 1)!.type, f.upper_bounds!.get(1)!)).toBe(d.hi);
      expect(decodeValue('timestamptz', f.lower_bounds!.get(3)!)).toBe(d.tlo);
      expect(decodeValue('timestamptz', f.upper_bounds!.get(3)!)).toBe(d.thi);
      expect(f.value_counts!.get(7)! - f.null_value_counts!.get(7)!).toBe(d.statuses);
    }
  });

  it('icebird reads the whole table with the same rows as floe', async () => {
    // icebird's bundled hyparquet 1.19 cannot read a struct holding a list of structs (our `_kafka`
    // headers; hyparquet 1.33 and DuckDB read it), so icebird gets the table without the lineage struct.
    const plain = await wh.catalog.loadTable({ namespace: ['sales'], name: 'orders_plain' });
    const floe = await readScanRows(plain, await planScan(plain));
    const ice = await icebergRead({ tableUrl: `${wh.url}/sales/orders_plain` });
    expect(ice).toHaveLength(floe.length);
    const byId = new Map(floe.map((r) => [r.order_id, r]));
    for (const row of ice as Record<string, unknown>[]) {
      const f = byId.get(row.order_id as bigint)!;
      expect(f).toBeDefined();
      expect((row.order_ts as Date).getTime() * 1000).toBe(Number(f.order_ts) - (Number(f.order_ts) % 1000));
      expect(Math.round((row.amount as number) * 100)).toBe(cents(f.amount));
      expect(row.country).toBe(f.country);
      expect((row.lines as unknown[]).length).toBe((f.lines as Row[]).length);
    }
  });
});
