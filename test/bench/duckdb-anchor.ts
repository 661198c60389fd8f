/**
 * The anchor floe's ingest is measured against: DuckDB (single-threaded) reading the same records as
 * NDJSON with the table's column types and writing one ZSTD Parquet file — the same work (parse JSON,
 * type every column, encode Parquet) done by a mature native engine.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { statSync } from 'node:fs';

/**
 * DuckDB column types of the orders table plus `_kafka` (floe's lineage struct), so DuckDB types
 * exactly the columns floe writes.
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
  _kafka:
    'STRUCT(topic VARCHAR, "partition" INTEGER, "offset" BIGINT, "timestamp" TIMESTAMPTZ, timestamp_type VARCHAR, "key" BLOB, headers STRUCT("key" VARCHAR, "value" BLOB)[])',
};

const sql = (text: string) => `'${text.replace(/'/g, "''")}'`;

export interface DuckdbAnchor {
  /** Runs one NDJSON → Parquet conversion; returns the Parquet file's size. */
  run(iteration: number): Promise<{ parquetBytes: number }>;
  close(): void;
}

/** Opens a single-threaded in-memory DuckDB with the NDJSON written to `dir`. */
export async function openDuckdbAnchor(dir: string, ndjson: string): Promise<DuckdbAnchor> {
  const input = join(dir, 'orders.ndjson');
  await writeFile(input, ndjson);
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
    close() {
      connection.closeSync();
      instance.closeSync();
    },
  };
}
