/**
 * A data file read as columns (compaction's reader) holds what readDataFile reads as rows, also for
 * files floe did not write: DuckDB's physical choices (INT32/INT64 decimals, the UUID type, TINYINT,
 * millisecond timestamps), renamed fields, promotions and fields the file lacks.
 */
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readColumnValues } from '../../../functions/core/data/arrow/arrow-to-values.js';
import { projectFile, readArrowFile } from '../../../functions/core/data/parquet/read/read-arrow-columns.js';
import { readDataFile } from '../../../functions/core/data/parquet/read/read-data-file.js';
import { ValidationError } from '../../../functions/core/errors.js';
import type { Row, Schema } from '../../../functions/core/spec/types.js';
import {
  type DuckDB,
  type TempWarehouse,
  createTempWarehouse,
  openDuckDB,
  schemaOf,
  sqlString,
} from './parquet-test-helpers.js';

/** The projected columns turned into rows, as readDataFile shapes them. */
async function rowsFromColumns(wh: TempWarehouse, location: string, schema: Schema): Promise<Row[]> {
  const file = await readArrowFile(wh.io, location);
  const rows: Row[] = [];
  for (const columns of projectFile(file, schema)) {
    const values = schema.fields.map((f, j) => readColumnValues(f.type, columns[j], f.name));
    for (let i = 0; i < (columns[0]?.length ?? 0); i++) {
      rows.push(Object.fromEntries(schema.fields.map((f, j) => [f.name, values[j][i]])));
    }
  }
  return rows;
}

describe('readArrowFile + projectFile', () => {
  let wh: TempWarehouse;
  let duck: DuckDB;

  beforeAll(async () => {
    wh = await createTempWarehouse();
    duck = await openDuckDB();
  });

  afterAll(async () => {
    duck?.close();
    await wh?.cleanup();
  });

  it('projects a DuckDB file by field id exactly as readDataFile reads it', async () => {
    // Prepare
    const location = path.join(wh.dir, 'duckdb.parquet');
    await duck.run(
      `COPY (SELECT * FROM (VALUES
         (1::TINYINT, 12.34::DECIMAL(9,2), -123456789012.345678::DECIMAL(18,6),
          '0189e0c2-6d4f-7c3a-9b1e-5f2a4d6c8e00'::UUID, TIMESTAMP_MS '2024-01-01 00:00:00.123',
          DATE '2024-02-29', 'héllo', '\\xAA\\xBB'::BLOB, [1, NULL, 3]::BIGINT[],
          {'x': 5::INTEGER, 'y': NULL::VARCHAR}, MAP {'a': 1.5::FLOAT}, 1.25::FLOAT, true),
         (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
         (-7::TINYINT, -0.01::DECIMAL(9,2), 0::DECIMAL(18,6), NULL, TIMESTAMP_MS '1969-12-31 23:59:59.999',
          DATE '1900-01-01', '', ''::BLOB, []::BIGINT[], NULL, MAP {}::MAP(VARCHAR, FLOAT), -0.0::FLOAT, false)
       ) t(i, d9, d18, u, ts, dt, s, bin, tags, st, m, f, b))
       TO ${sqlString(location)} (FORMAT parquet, FIELD_IDS {
         i: 1, d9: 2, d18: 3, u: 4, ts: 5, dt: 6, s: 7, bin: 8,
         tags: {__duckdb_field_id: 9, element: 10}, st: {__duckdb_field_id: 11, x: 12, y: 13},
         m: {__duckdb_field_id: 14, key: 15, value: 16}, f: 17, b: 18})`,
    );
    const schema = schemaOf([
      { id: 1, name: 'i_long', required: false, type: 'long' },
      { id: 2, name: 'd9', required: false, type: 'decimal(12, 2)' },
      { id: 3, name: 'd18', required: false, type: 'decimal(18, 6)' },
      { id: 4, name: 'u', required: false, type: 'uuid' },
      { id: 5, name: 'ts', required: false, type: 'timestamp' },
      { id: 6, name: 'dt', required: false, type: 'date' },
      { id: 7, name: 's', required: false, type: 'string' },
      { id: 8, name: 'bin', required: false, type: 'binary' },
      {
        id: 9,
        name: 'tags',
        required: false,
        type: { type: 'list', 'element-id': 10, element: 'long', 'element-required': false },
      },
      {
        id: 11,
        name: 'st',
        required: false,
        type: {
          type: 'struct',
          fields: [
            { id: 12, name: 'x', required: false, type: 'long' },
            { id: 13, name: 'y', required: false, type: 'string' },
            { id: 30, name: 'added', required: false, type: 'int' },
          ],
        },
      },
      {
        id: 14,
        name: 'm',
        required: false,
        type: {
          type: 'map',
          'key-id': 15,
          key: 'string',
          'value-id': 16,
          value: 'double',
          'value-required': false,
        },
      },
      { id: 17, name: 'f', required: false, type: 'double' },
      { id: 18, name: 'b', required: false, type: 'boolean' },
      { id: 31, name: 'missing', required: false, type: 'string' },
    ]);

    // Act
    const columns = await rowsFromColumns(wh, location, schema);

    // Assess
    const rows = await readDataFile(wh.io, location, schema);
    expect(columns).toEqual(rows);
    expect(rows[0]).toMatchObject({
      i_long: 1n,
      d9: 1234n,
      ts: BigInt(Date.UTC(2024, 0, 1)) * 1000n + 123000n,
    });
    expect(rows[2]).toMatchObject({ i_long: -7n, ts: -1000n, st: null, f: -0 });
  });

  it('refuses a file without field ids, and a column that cannot be read as its type, naming it', async () => {
    // Prepare
    const noIds = path.join(wh.dir, 'no-ids.parquet');
    await duck.run(`COPY (SELECT 1 AS a) TO ${sqlString(noIds)} (FORMAT parquet)`);
    const text = path.join(wh.dir, 'text.parquet');
    await duck.run(`COPY (SELECT 'x' AS s) TO ${sqlString(text)} (FORMAT parquet, FIELD_IDS {s: 1})`);

    // Act
    const withoutIds = await readArrowFile(wh.io, noIds).catch((error: unknown) => error);
    const file = await readArrowFile(wh.io, text);
    const mismatch = () => projectFile(file, schemaOf([{ id: 1, name: 'n', required: false, type: 'int' }]));

    // Assess
    expect(withoutIds).toBeInstanceOf(ValidationError);
    expect(String(withoutIds)).toMatch(/field ids/);
    expect(mismatch).toThrow(ValidationError);
    expect(mismatch).toThrow("'n'");
  });
});
