import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDataFile } from '../../../functions/core/data/parquet/read/read-data-file.js';
import { writeDataFiles } from '../../../functions/core/data/parquet/write/write-data-file.js';
import { NotFoundError, ValidationError } from '../../../functions/core/errors.js';
import type { Row, Schema, Value } from '../../../functions/core/spec/types.js';
import { allTypesRows, allTypesSchema } from './all-types-fixture.js';
import {
  type DuckDB,
  type TempWarehouse,
  createTempWarehouse,
  openDuckDB,
  schemaOf,
  sqlString,
} from './parquet-test-helpers.js';

describe('readDataFile', () => {
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

  async function writeOne(prefix: string, schema: Schema, rows: Row[]): Promise<string> {
    const files = await writeDataFiles(rows, {
      io: wh.io,
      schema,
      specId: 0,
      partition: {},
      nextLocation: wh.locations(prefix),
    });
    return files[0].file_path;
  }

  it('reads back every type exactly as written', async () => {
    // Prepare
    const location = await writeOne('all-types', allTypesSchema, allTypesRows);

    // Act
    const rows = await readDataFile(wh.io, location, allTypesSchema);

    // Assess
    expect(rows).toEqual(allTypesRows);
  });

  it('projects by field id: renamed columns map, int → long and float → double promote, missing fields are null', async () => {
    // Prepare
    const written = schemaOf([
      { id: 1, name: 'count', required: true, type: 'int' },
      { id: 2, name: 'ratio', required: false, type: 'float' },
      { id: 3, name: 'dropped', required: false, type: 'string' },
      { id: 4, name: 'amount', required: false, type: 'decimal(9, 2)' },
      {
        id: 5,
        name: 'info',
        required: false,
        type: { type: 'struct', fields: [{ id: 6, name: 'x', required: false, type: 'int' }] },
      },
    ]);
    const location = await writeOne('projection', written, [
      { count: 7, ratio: 0.5, dropped: 'gone', amount: 12345n, info: { x: -3 } },
      { count: -2147483648, ratio: null, dropped: null, amount: null, info: null },
    ]);
    const evolved = schemaOf([
      {
        id: 5,
        name: 'details',
        required: false,
        type: {
          type: 'struct',
          fields: [
            { id: 6, name: 'x_renamed', required: false, type: 'long' },
            { id: 8, name: 'added_inner', required: false, type: 'string' },
          ],
        },
      },
      { id: 1, name: 'total', required: true, type: 'long' },
      { id: 2, name: 'ratio', required: false, type: 'double' },
      { id: 4, name: 'amount', required: false, type: 'decimal(20, 2)' },
      { id: 7, name: 'added', required: false, type: 'string' },
    ]);

    // Act
    const rows = await readDataFile(wh.io, location, evolved);

    // Assess
    expect(rows).toEqual([
      { details: { x_renamed: -3n, added_inner: null }, total: 7n, ratio: 0.5, amount: 12345n, added: null },
      { details: null, total: -2147483648n, ratio: null, amount: null, added: null },
    ]);
    expect(Object.keys(rows[0])).toEqual(['details', 'total', 'ratio', 'amount', 'added']);
  });

  it('gives one all-null row per file row when no requested field is in the file', async () => {
    // Prepare
    const location = await writeOne(
      'disjoint',
      schemaOf([{ id: 1, name: 'a', required: true, type: 'int' }]),
      [{ a: 1 }, { a: 2 }, { a: 3 }],
    );

    // Act
    const rows = await readDataFile(
      wh.io,
      location,
      schemaOf([{ id: 9, name: 'z', required: false, type: 'int' }]),
    );

    // Assess
    expect(rows).toEqual([{ z: null }, { z: null }, { z: null }]);
  });

  it('keeps file order across read batches, so row index is the position', async () => {
    // Prepare: more rows than one Arrow batch (65,536) of the reader.
    const schema = schemaOf([{ id: 1, name: 'pos', required: true, type: 'long' }]);
    const input = Array.from({ length: 70_000 }, (_, k) => ({ pos: BigInt(k) }));
    const location = await writeOne('order', schema, input);

    // Act
    const rows = await readDataFile(wh.io, location, schema);

    // Assess
    expect(rows).toHaveLength(70_000);
    expect(rows.every((r, k) => r.pos === BigInt(k))).toBe(true);
  });

  it('reads a file DuckDB wrote with field ids (its own physical choices: INT32/INT64 decimals, UUID type)', async () => {
    // Prepare
    const location = path.join(wh.dir, 'duckdb.parquet');
    await duck.run(
      `COPY (SELECT * FROM (VALUES
         (1::INTEGER, 12.34::DECIMAL(9,2), -123456789012.345678::DECIMAL(18,6),
          '0189e0c2-6d4f-7c3a-9b1e-5f2a4d6c8e00'::UUID, TIMESTAMPTZ '2024-01-01 00:00:00.123456+00',
          TIMESTAMP '1969-12-31 23:59:59.999999', DATE '2024-02-29', TIME '12:34:56.789012', 'héllo',
          '\\xAA\\xBB'::BLOB, [1, NULL, 3]::BIGINT[], {'x': 5::BIGINT, 'y': NULL::VARCHAR},
          MAP {'a': 1.5::DOUBLE}, 1.25::FLOAT, true),
         (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
       ) t(i, d9, d18, u, tstz, ts, dt, tm, s, bin, tags, st, m, f, b))
       TO ${sqlString(location)} (FORMAT parquet, FIELD_IDS {
         i: 1, d9: 2, d18: 3, u: 4, tstz: 5, ts: 6, dt: 7, tm: 8, s: 9, bin: 10,
         tags: {__duckdb_field_id: 11, element: 12}, st: {__duckdb_field_id: 13, x: 14, y: 15},
         m: {__duckdb_field_id: 16, key: 17, value: 18}, f: 19, b: 20})`,
    );
    const schema = schemaOf([
      { id: 1, name: 'i', required: false, type: 'long' },
      { id: 2, name: 'd9', required: false, type: 'decimal(9, 2)' },
      { id: 3, name: 'd18', required: false, type: 'decimal(18, 6)' },
      { id: 4, name: 'u', required: false, type: 'uuid' },
      { id: 5, name: 'tstz', required: false, type: 'timestamptz' },
      { id: 6, name: 'ts', required: false, type: 'timestamp' },
      { id: 7, name: 'dt', required: false, type: 'date' },
      { id: 8, name: 'tm', required: false, type: 'time' },
      { id: 9, name: 's', required: false, type: 'string' },
      { id: 10, name: 'bin', required: false, type: 'binary' },
      {
        id: 11,
        name: 'tags',
        required: false,
        type: { type: 'list', 'element-id': 12, element: 'long', 'element-required': false },
      },
      {
        id: 13,
        name: 'st',
        required: false,
        type: {
          type: 'struct',
          fields: [
            { id: 14, name: 'x', required: false, type: 'long' },
            { id: 15, name: 'y', required: false, type: 'string' },
          ],
        },
      },
      {
        id: 16,
        name: 'm',
        required: false,
        type: {
          type: 'map',
          'key-id': 17,
          key: 'string',
          'value-id': 18,
          value: 'double',
          'value-required': false,
        },
      },
      { id: 19, name: 'f', required: false, type: 'double' },
      { id: 20, name: 'b', required: false, type: 'boolean' },
    ]);

    // Act
    const rows = await readDataFile(wh.io, location, schema);

    // Assess
    expect(rows[0]).toEqual({
      i: 1n,
      d9: 1234n,
      d18: -123456789012345678n,
      u: '0189e0c2-6d4f-7c3a-9b1e-5f2a4d6c8e00',
      tstz: BigInt(Date.UTC(2024, 0, 1)) * 1000n + 123456n,
      ts: -1n,
      dt: Date.UTC(2024, 1, 29) / 86_400_000,
      tm: ((12n * 60n + 34n) * 60n + 56n) * 1_000_000n + 789012n,
      s: 'héllo',
      bin: Uint8Array.of(0xaa, 0xbb),
      tags: [1n, null, 3n],
      st: { x: 5n, y: null },
      m: new Map<Value, Value>([['a', 1.5]]),
      f: 1.25,
      b: true,
    });
    expect(rows[1]).toEqual(Object.fromEntries(schema.fields.map((f) => [f.name, null])));
  });

  it('refuses a file without field ids (it would need a name mapping)', async () => {
    // Prepare
    const location = path.join(wh.dir, 'no-ids.parquet');
    await duck.run(`COPY (SELECT 1 AS a) TO ${sqlString(location)} (FORMAT parquet)`);

    // Act
    const attempt = readDataFile(
      wh.io,
      location,
      schemaOf([{ id: 1, name: 'a', required: false, type: 'int' }]),
    );

    // Assess
    await expect(attempt).rejects.toThrow(ValidationError);
    await expect(attempt).rejects.toThrow(/field ids/);
  });

  it('refuses a column that cannot be read as the requested type, naming it', async () => {
    // Prepare
    const location = await writeOne(
      'mismatch',
      schemaOf([{ id: 1, name: 's', required: false, type: 'string' }]),
      [{ s: 'text' }],
    );

    // Act
    const attempt = readDataFile(
      wh.io,
      location,
      schemaOf([{ id: 1, name: 'n', required: false, type: 'int' }]),
    );

    // Assess
    await expect(attempt).rejects.toThrow(ValidationError);
    await expect(attempt).rejects.toThrow("'n'");
  });

  it('reports a missing file as NotFoundError and garbage as ValidationError', async () => {
    // Prepare
    const garbage = path.join(wh.dir, 'garbage.parquet');
    await fs.writeFile(garbage, 'not parquet at all');
    const schema = schemaOf([{ id: 1, name: 'a', required: false, type: 'int' }]);

    // Act + Assess
    await expect(readDataFile(wh.io, path.join(wh.dir, 'absent.parquet'), schema)).rejects.toThrow(
      NotFoundError,
    );
    await expect(readDataFile(wh.io, garbage, schema)).rejects.toThrow(ValidationError);
  });
});
