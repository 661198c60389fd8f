/**
 * The anchors floe's ingest is measured against, DuckDB single-threaded writing one ZSTD Parquet file
 * with the table's column types:
 *   - the anchor: the same records as NDJSON (parse JSON, type every column, encode Parquet);
 *   - the same input as floe's handler: the MSK ESM event itself (the event JSON, base64 keys and
 *     values, header byte arrays, the `_kafka` lineage) — the whole job a Lambda does before its
 *     Iceberg commit, done by a mature native engine.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { statSync } from 'node:fs';

/**
 * DuckDB column types of the orders table as floe writes it (after its first batch added `channel`
 * and `coupon`) plus `_kafka` (floe's lineage struct), so DuckDB types exactly the columns floe writes.
 */
const ORDERS_COLUMNS: Record<string, string> = {
  order_id: 'BIGINT',
  customer_id: 'BIGINT',
  order_ts: 'TIMESTAMPTZ',
  amount: 'DECIMAL(10,2)',
  currency: 'VARCHAR',
  country: 'VARCHAR',
  status: 'VARCHAR',
  shipping: 'STRUCT(city VARCHAR, postcode VARCHAR)',
  lines: 'STRUCT(sku VARCHAR, qty INTEGER, unit_price DECIMAL(10,2))[]',
  // The two fields the table lacks at first: floe's first batch adds them as columns (evolution).
  channel: 'VARCHAR',
  coupon: 'VARCHAR',
  _kafka:
    'STRUCT(topic VARCHAR, "partition" INTEGER, "offset" BIGINT, "timestamp" TIMESTAMPTZ, timestamp_type VARCHAR, "key" BLOB, headers STRUCT("key" VARCHAR, "value" BLOB)[])',
};

const sql = (text: string) => `'${text.replace(/'/g, "''")}'`;

/** from_json structure of an order value: the same column types (from_json takes DuckDB type names). */
const ORDER_STRUCTURE = JSON.stringify(
  Object.fromEntries(Object.entries(ORDERS_COLUMNS).filter(([name]) => name !== '_kafka')),
);

/** from_json structure of one ESM record (headers: objects `{ name: [bytes] }`). */
const ESM_RECORD_STRUCTURE = JSON.stringify([
  {
    topic: 'VARCHAR',
    partition: 'INTEGER',
    offset: 'BIGINT',
    timestamp: 'BIGINT',
    timestampType: 'VARCHAR',
    key: 'VARCHAR',
    value: 'VARCHAR',
    headers: 'JSON[]',
  },
]);

/**
 * The ESM event → the orders columns + `_kafka`, as floe's handler reads it: every "topic-partition"
 * group of `records`, base64 key and value, the value's JSON typed by the table's columns, header
 * names and byte arrays as (key, BLOB) pairs.
 */
function eventQuery(input: string): string {
  const header = `{'key': json_keys(h)[1], 'value': unhex(array_to_string(list_transform(from_json(json_extract(h, '$."' || json_keys(h)[1] || '"'), '["UTINYINT"]'), b -> printf('%02x', b)), ''))}`;
  return (
    // One parse of the event for every group ($.records.*: faster than a json_extract per group key).
    `WITH doc AS (SELECT json_extract(content, '$.records.*') AS groups FROM read_text(${sql(input)})), ` +
    `grp AS (SELECT unnest(groups) AS g FROM doc), ` +
    `recs AS (SELECT unnest(from_json(g, ${sql(ESM_RECORD_STRUCTURE)})) AS r FROM grp) ` +
    `SELECT v.*, {'topic': r.topic, 'partition': r.partition, 'offset': r.offset, ` +
    `'timestamp': make_timestamptz(r.timestamp * 1000), 'timestamp_type': r.timestampType, ` +
    `'key': from_base64(r.key), 'headers': list_transform(r.headers, h -> ${header})} AS _kafka ` +
    `FROM (SELECT r, from_json(decode(from_base64(r.value)), ${sql(ORDER_STRUCTURE)}) AS v FROM recs)`
  );
}

export interface DuckdbAnchor {
  /** Runs one NDJSON → Parquet conversion; returns the Parquet file's size. */
  run(iteration: number): Promise<{ parquetBytes: number }>;
  /** Runs one ESM event → Parquet conversion (floe's own input); returns the Parquet file's size. */
  runEvent(iteration: number): Promise<{ parquetBytes: number; output: string }>;
  /** Rows in a Parquet file DuckDB wrote (checked outside the timing). */
  rowsOf(parquet: string): Promise<number>;
  close(): void;
}

/** Opens a single-threaded in-memory DuckDB with the NDJSON and the ESM event written to `dir`. */
export async function openDuckdbAnchor(
  dir: string,
  ndjson: string,
  eventJson: string,
): Promise<DuckdbAnchor> {
  const input = join(dir, 'orders.ndjson');
  await writeFile(input, ndjson);
  const eventInput = join(dir, 'event.json');
  await writeFile(eventInput, eventJson);
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  const connection: DuckDBConnection = await instance.connect();
  await connection.run('SET threads = 1');
  await connection.run("SET TimeZone = 'UTC'");
  const columns = Object.entries(ORDERS_COLUMNS)
    .map(([name, type]) => `${sql(name)}: ${sql(type)}`)
    .join(', ');
  return {
    async run(iteration) {
      const output = join(dir, `duckdb-${iteration}.parquet`);
      await connection.run(
        `COPY (SELECT * FROM read_json(${sql(input)}, format = 'newline_delimited', columns = {${columns}})) ` +
          `TO ${sql(output)} (FORMAT parquet, COMPRESSION zstd)`,
      );
      return { parquetBytes: statSync(output).size };
    },
    async runEvent(iteration) {
      const output = join(dir, `duckdb-event-${iteration}.parquet`);
      await connection.run(
        `COPY (${eventQuery(eventInput)}) TO ${sql(output)} (FORMAT parquet, COMPRESSION zstd)`,
      );
      return { parquetBytes: statSync(output).size, output };
    },
    async rowsOf(parquet) {
      const count = await connection.runAndReadAll(`SELECT count(*) FROM read_parquet(${sql(parquet)})`);
      return Number(count.getRows()[0][0]);
    },
    close() {
      connection.closeSync();
      instance.closeSync();
    },
  };
}
