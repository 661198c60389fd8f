import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDataFiles } from '../../../functions/core/data/parquet/write/write-data-file.js';
import { allTypesRows, allTypesSchema } from './all-types-fixture.js';
import type { IcebergType } from '../../../functions/core/spec/types.js';
import {
  type DuckDB,
  type TempWarehouse,
  createTempWarehouse,
  fromDuckDB,
  openDuckDB,
  sqlString,
} from './parquet-test-helpers.js';

const schema = allTypesSchema;
const rows = allTypesRows;

describe('writeDataFiles: types, as DuckDB reads them', () => {
  let wh: TempWarehouse;
  let duck: DuckDB;
  let file: string;

  beforeAll(async () => {
    wh = await createTempWarehouse();
    duck = await openDuckDB();
    const files = await writeDataFiles(rows, {
      io: wh.io,
      schema,
      specId: 0,
      partition: {},
      nextLocation: wh.locations('types'),
    });
    expect(files).toHaveLength(1);
    file = files[0].file_path;
  });

  afterAll(async () => {
    duck?.close();
    await wh?.cleanup();
  });

  it('round-trips every primitive and nested type with exact values and nulls', async () => {
    // Prepare
    const columns = schema.fields.map((f) => `"${f.name}"`).join(', ');

    // Act
    const read = await duck.rows(`SELECT ${columns} FROM read_parquet(${sqlString(file)})`);

    // Assess
    const decoded = read.map((r) =>
      Object.fromEntries(schema.fields.map((f) => [f.name, fromDuckDB(f.type, r[f.name])])),
    );
    expect(decoded).toEqual(rows);
  });

  it('gives DuckDB the SQL types the Iceberg types stand for', async () => {
    // Act
    const [types] = await duck.rowsJS(
      `SELECT ${schema.fields.map((f) => `typeof("${f.name}") AS "${f.name}"`).join(', ')} FROM read_parquet(${sqlString(file)}) LIMIT 1`,
    );

    // Assess
    expect(types).toEqual({
      b: 'BOOLEAN',
      i: 'INTEGER',
      l: 'BIGINT',
      f: 'FLOAT',
      d: 'DOUBLE',
      dt: 'DATE',
      t: 'TIME',
      ts: 'TIMESTAMP',
      tstz: 'TIMESTAMP WITH TIME ZONE',
      s: 'VARCHAR',
      u: 'UUID',
      fx: 'BLOB',
      bin: 'BLOB',
      dec9: 'DECIMAL(9,2)',
      dec18: 'DECIMAL(18,6)',
      dec38: 'DECIMAL(38,10)',
      st: 'STRUCT(a INTEGER, "inner" STRUCT(z VARCHAR))',
      tags: 'BIGINT[]',
      attrs: 'MAP(VARCHAR, DOUBLE)',
      points: 'STRUCT(x DOUBLE, y DOUBLE)[]',
    });
  });

  it('writes the Parquet physical and logical types the Iceberg spec lists', async () => {
    // Act
    const elements = await duck.rowsJS(
      `SELECT name, type, type_length, logical_type, converted_type FROM parquet_schema(${sqlString(file)})`,
    );

    // Assess
    const byName = new Map(elements.map((e) => [e.name, e]));
    const at = (name: string) => byName.get(name)!;
    expect(at('l')).toMatchObject({ type: 'INT64', logical_type: null });
    expect(at('dt')).toMatchObject({ type: 'INT32', converted_type: 'DATE' });
    expect(at('t').type).toBe('INT64');
    expect(at('t').logical_type).toMatch(/TimeType\(isAdjustedToUTC=0, unit=.*MICROS=MicroSeconds\(\)/);
    expect(at('ts').logical_type).toMatch(/TimestampType\(isAdjustedToUTC=0, unit=.*MICROS=MicroSeconds\(\)/);
    expect(at('tstz').logical_type).toMatch(
      /TimestampType\(isAdjustedToUTC=1, unit=.*MICROS=MicroSeconds\(\)/,
    );
    expect(at('s')).toMatchObject({ type: 'BYTE_ARRAY', converted_type: 'UTF8' });
    // fixed[16] with the UUID logical type, as Iceberg Java writes it.
    expect(at('u').type).toBe('FIXED_LEN_BYTE_ARRAY');
    expect(at('u').logical_type).toMatch(/UUID/);
    expect(String(at('u').type_length)).toBe('16');
    expect(at('fx')).toMatchObject({ type: 'FIXED_LEN_BYTE_ARRAY', logical_type: null });
    expect(String(at('fx').type_length)).toBe('5');
    expect(at('bin')).toMatchObject({ type: 'BYTE_ARRAY', logical_type: null, converted_type: null });
    expect(at('dec9')).toMatchObject({ type: 'INT32', logical_type: 'DecimalType(scale=2, precision=9)' });
    expect(at('dec18')).toMatchObject({ type: 'INT64', logical_type: 'DecimalType(scale=6, precision=18)' });
    expect(at('dec38')).toMatchObject({
      type: 'FIXED_LEN_BYTE_ARRAY',
      logical_type: 'DecimalType(scale=10, precision=38)',
    });
  });

  it('carries the Iceberg field id on every column, nested ones too', async () => {
    // Prepare: the schema tree in Parquet's depth-first order; repeated groups carry no id.
    const expected: { name: string; id: number | null }[] = [];
    const visit = (name: string, id: number, type: IcebergType): void => {
      expected.push({ name, id });
      if (typeof type === 'string') return;
      if (type.type === 'struct') for (const f of type.fields) visit(f.name, f.id, f.type);
      else if (type.type === 'list') {
        expected.push({ name: '<repeated>', id: null });
        visit('element', type['element-id'], type.element);
      } else {
        expected.push({ name: '<repeated>', id: null });
        visit('key', type['key-id'], type.key);
        visit('value', type['value-id'], type.value);
      }
    };
    for (const f of schema.fields) visit(f.name, f.id, f.type);

    // Act
    const elements = await duck.rowsJS(
      `SELECT name, field_id, repetition_type FROM parquet_schema(${sqlString(file)})`,
    );

    // Assess
    const actual = elements.slice(1).map((e) => ({
      name: e.repetition_type === 'REPEATED' ? '<repeated>' : String(e.name),
      id: e.field_id === null ? null : Number(e.field_id),
    }));
    expect(actual).toEqual(expected);
    expect(expected.filter((e) => e.id !== null)).toHaveLength(29);
  });
});
