/**
 * A CDC table whose equality delete files carry the deleting change's `_kafka` columns beside the key
 * (and a late batch that must not bring a deleted key back), read by a reader no one here wrote:
 * DuckDB over the live DataFiles and equality DeleteFiles, with the spec's rule in SQL, comparing
 * only the delete files' `equality_ids` column (the key) — as Spark, Trino and PyIceberg do.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { CDC_TOPIC, ITEMS_SCHEMA } from '../../support/cdc-stream.js';
import { type HttpWarehouse, startHttpWarehouse } from '../../support/http-warehouse.js';
import { jsonEvent } from '../../support/json-event.js';
import { duckdbQuery, liveEntries, sqlString } from '../../support/readers.js';

/** Upsert records of `ids` (null region: a tombstone) at offsets first.. of partition 0. */
const upserts = (first: number, changes: [number, string | null][]) =>
  jsonEvent(
    CDC_TOPIC,
    changes.map(([id, region]) => (region === null ? null : { id, region })),
    { firstOffset: first, key: (_v, i) => JSON.stringify({ id: changes[i][0] }) },
  );

describe('a CDC table with versioned equality deletes, read by DuckDB', () => {
  let wh: HttpWarehouse;
  beforeAll(async () => {
    wh = await startHttpWarehouse();
  });
  afterAll(() => wh.close());

  it('shows a key deleted by a newer batch as deleted after a late batch updated it', async () => {
    // Prepare
    const route: TableRoute = {
      table: { namespace: ['cdc'], name: 'late_items' },
      topics: [CDC_TOPIC],
      schema: ITEMS_SCHEMA,
      mode: 'upsert',
      identifierColumns: ['id'],
      kafkaLineage: true,
      // The equality form on purpose (position-deletes-model.test.ts reads late batches by position).
      properties: { 'floe.delete-mode': 'equality' },
    };
    const ingest = (event: unknown) => ingestEvent({ catalog: wh.catalog, routes: [route] }, event);

    // Act: keys 1–3 (offsets 0–2); B2 (offsets 10–11) deletes key 2, updates key 3; late B1 (5–6) updates 2 and 3
    await ingest(
      upserts(0, [
        [1, 'a'],
        [2, 'a'],
        [3, 'a'],
      ]),
    );
    await ingest(
      upserts(10, [
        [2, null],
        [3, 'new'],
      ]),
    );
    await ingest(
      upserts(5, [
        [2, 'old'],
        [3, 'old'],
      ]),
    );

    // Assess: floe's reader
    const table = await wh.catalog.loadTable(route.table);
    const show = (r: Record<string, unknown>) => `${r.id} ${r.region}`;
    const floe = (await readScanRows(table, await planScan(table))).map(show).sort();
    expect(floe).toEqual(['1 a', '3 new']);

    // DuckDB: data rows minus the delete rows of the same key with a greater sequence number
    const entries = await liveEntries(table);
    const local = (path: string) => path.replace(wh.url, wh.dir);
    const files = (content: number) => entries.filter((e) => e.data_file.content === content);
    const list = (content: number) => files(content).map((e) => sqlString(local(e.data_file.file_path)));
    const seqs = (content: number) =>
      files(content)
        .map((e) => `(${sqlString(local(e.data_file.file_path))}, ${e.sequence_number})`)
        .join(', ');
    expect(files(2).every((e) => JSON.stringify(e.data_file.equality_ids) === '[1]')).toBe(true);
    const duck = await duckdbQuery(
      `with data as (
         select d.id, d.region, f.seq from read_parquet([${list(0).join(', ')}], filename = true) d
         join (values ${seqs(0)}) f(path, seq) on d.filename = f.path
       ), dels as (
         select e.id, f.seq from read_parquet([${list(2).join(', ')}], filename = true) e
         join (values ${seqs(2)}) f(path, seq) on e.filename = f.path
       )
       select id, region from data
       where not exists (select 1 from dels where dels.id = data.id and dels.seq > data.seq)`,
    );
    expect(duck.map(show).sort()).toEqual(floe);

    // The extra columns are plain Parquet columns DuckDB reads: key 2's tombstone at offset 10
    const versions = await duckdbQuery(
      `select id, _kafka.partition as p, _kafka.offset as o from read_parquet([${list(2).join(', ')}])
       where id = 2 order by o`,
    );
    expect(versions.map((v) => `${v.id}@${v.p}:${v.o}`)).toEqual(['2@0:10']);
  });
});
