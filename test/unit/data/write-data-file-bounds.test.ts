import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDataFiles } from '../../../functions/core/data/parquet/write/write-data-file.js';
import { compareValues, decodeValue } from '../../../functions/core/spec/conversions.js';
import type { DataFile, PrimitiveType, Row, Schema, Value } from '../../../functions/core/spec/types.js';
import {
  type DuckDB,
  type TempWarehouse,
  createTempWarehouse,
  openDuckDB,
  schemaOf,
  sqlString,
} from './parquet-test-helpers.js';

function bound(map: Map<number, Uint8Array> | undefined, id: number, type: PrimitiveType): Value | undefined {
  const raw = map?.get(id);
  return raw === undefined ? undefined : decodeValue(type, raw);
}

async function writeOne(
  wh: TempWarehouse,
  prefix: string,
  s: Schema,
  rows: Row[],
  extra = {},
): Promise<DataFile> {
  const files = await writeDataFiles(rows, {
    io: wh.io,
    schema: s,
    specId: 0,
    partition: {},
    nextLocation: wh.locations(prefix),
    ...extra,
  });
  expect(files).toHaveLength(1);
  return files[0];
}

describe('writeDataFiles: truncated bounds, NaN and signed zero', () => {
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

  const maxCodePoint = String.fromCodePoint(0x10ffff);
  const stringSchema = schemaOf([
    { id: 1, name: 'latin', required: false, type: 'string' },
    { id: 2, name: 'emoji', required: false, type: 'string' },
    { id: 3, name: 'stuck', required: false, type: 'string' },
    { id: 4, name: 'carry', required: false, type: 'string' },
    { id: 5, name: 'short', required: false, type: 'string' },
  ]);
  const stringRows: Row[] = [
    {
      latin: 'abcdefghijklmnopqrstuvwxyz',
      emoji: '😀'.repeat(20),
      stuck: maxCodePoint.repeat(17),
      carry: `a${maxCodePoint.repeat(20)}`,
      short: 'zz',
    },
    { latin: 'abcdefghijklmnopzzz', emoji: '😀'.repeat(18), stuck: null, carry: 'a', short: 'aa' },
  ];

  it('truncates string bounds to 16 code points and rounds the upper bound up, as DuckDB confirms', async () => {
    // Act
    const file = await writeOne(wh, 'strings', stringSchema, stringRows);
    // The SQL rounding (last code point + 1) is only valid where no carry is needed: latin, emoji, short.
    const sql = ['latin', 'emoji', 'short']
      .map(
        (c) =>
          `substring(min(${c}), 1, 16) AS ${c}_lower, max(${c}) AS ${c}_max,
           CASE WHEN length(max(${c})) <= 16 THEN max(${c})
                ELSE substring(max(${c}), 1, 15) || chr(unicode(substring(max(${c}), 16, 1)) + 1) END AS ${c}_upper`,
      )
      .join(', ');
    const [expected] = await duck.rowsJS(
      `SELECT ${sql}, substring(min(stuck), 1, 16) AS stuck_lower, substring(min(carry), 1, 16) AS carry_lower,
              max(carry) AS carry_max
       FROM read_parquet(${sqlString(file.file_path)})`,
    );

    // Assess
    const lower = (id: number) => bound(file.lower_bounds, id, 'string');
    const upper = (id: number) => bound(file.upper_bounds, id, 'string');
    expect(lower(1)).toBe(expected.latin_lower);
    expect(lower(1)).toBe('abcdefghijklmnop');
    expect(upper(1)).toBe(expected.latin_upper);
    expect(upper(1)).toBe('abcdefghijklmnoq');
    expect(lower(2)).toBe(expected.emoji_lower);
    expect(upper(2)).toBe(expected.emoji_upper);
    expect(Array.from(upper(2) as string)).toHaveLength(16);
    expect(lower(3)).toBe(expected.stuck_lower);
    expect(lower(3)).toBe(maxCodePoint.repeat(16));
    expect(file.upper_bounds!.has(3)).toBe(false); // no 16-code-point string is ≥ every such value
    expect(lower(4)).toBe(expected.carry_lower);
    expect(upper(4)).toBe('b'); // U+10FFFF cannot grow: the carry moves to the 'a'
    expect(lower(5)).toBe('aa');
    expect(upper(5)).toBe(expected.short_upper);
    for (const id of [1, 2, 4]) {
      const max = expected[`${stringSchema.fields[id - 1].name}_max`] as string;
      expect(compareValues(upper(id)!, max)).toBeGreaterThanOrEqual(0);
    }
  });

  it('honours metricsTruncateLength', async () => {
    // Act
    const file = await writeOne(wh, 'strings-4', stringSchema, stringRows, { metricsTruncateLength: 4 });

    // Assess
    expect(bound(file.lower_bounds, 1, 'string')).toBe('abcd');
    expect(bound(file.upper_bounds, 1, 'string')).toBe('abce');
  });

  it('truncates binary bounds to 16 bytes and drops an upper bound of all 0xff', async () => {
    // Prepare
    const s = schemaOf([
      { id: 1, name: 'ff', required: false, type: 'binary' },
      { id: 2, name: 'mixed', required: false, type: 'binary' },
      { id: 3, name: 'fx', required: false, type: 'fixed[20]' },
    ]);
    const ff = new Uint8Array(20).fill(0xff);
    const mixed = Uint8Array.from([1, ...new Uint8Array(19).fill(0xff)]);

    // Act
    const file = await writeOne(wh, 'binary', s, [
      { ff, mixed, fx: mixed },
      { ff: Uint8Array.of(0), mixed: Uint8Array.of(1), fx: ff },
    ]);
    const [minMax] = await duck.rowsJS(
      `SELECT hex(min(mixed)) AS mixed_min, hex(max(fx)) AS fx_max FROM read_parquet(${sqlString(file.file_path)})`,
    );

    // Assess
    expect(file.lower_bounds!.get(1)).toEqual(Uint8Array.of(0));
    expect(file.upper_bounds!.has(1)).toBe(false);
    expect(file.lower_bounds!.get(2)).toEqual(Uint8Array.of(1));
    expect(minMax.mixed_min).toBe('01');
    expect(file.upper_bounds!.get(2)).toEqual(Uint8Array.of(2));
    // fixed is not truncated (Iceberg Java truncates only string and binary)
    expect(Buffer.from(file.upper_bounds!.get(3)!).toString('hex').toUpperCase()).toBe(minMax.fx_max);
  });

  it('counts NaN apart from nulls and keeps it out of the bounds', async () => {
    // Prepare
    const s = schemaOf([
      { id: 1, name: 'f', required: false, type: 'float' },
      { id: 2, name: 'd', required: false, type: 'double' },
      { id: 3, name: 'all_nan', required: false, type: 'double' },
      {
        id: 4,
        name: 'nested',
        required: false,
        type: { type: 'list', 'element-id': 5, element: 'double', 'element-required': false },
      },
    ]);
    const values = [1.5, Number.NaN, null, -2.25, Number.NaN, 0];
    const rows = values.map((v, k) => ({
      f: v,
      d: v,
      all_nan: Number.NaN,
      nested: k === 0 ? [Number.NaN, 1] : null,
    }));

    // Act
    const file = await writeOne(wh, 'nan', s, rows);
    const [oracle] = await duck.rowsJS(
      `SELECT count(*) FILTER (WHERE isnan(f)) AS f_nan, count(*) FILTER (WHERE isnan(d)) AS d_nan,
              count(*) - count(d) AS d_null,
              min(d) FILTER (WHERE NOT isnan(d)) AS d_min, max(d) FILTER (WHERE NOT isnan(d)) AS d_max,
              min(f) FILTER (WHERE NOT isnan(f)) AS f_min, max(f) FILTER (WHERE NOT isnan(f)) AS f_max
       FROM read_parquet(${sqlString(file.file_path)})`,
    );

    // Assess
    expect(file.nan_value_counts).toEqual(
      new Map([
        [1, BigInt(oracle.f_nan as bigint)],
        [2, BigInt(oracle.d_nan as bigint)],
        [3, 6n],
        [5, 1n],
      ]),
    );
    expect(file.nan_value_counts!.get(2)).toBe(2n);
    expect(file.null_value_counts!.get(2)).toBe(oracle.d_null);
    expect(file.value_counts!.get(2)).toBe(6n);
    expect(bound(file.lower_bounds, 2, 'double')).toBe(oracle.d_min);
    expect(bound(file.upper_bounds, 2, 'double')).toBe(oracle.d_max);
    expect(bound(file.lower_bounds, 1, 'float')).toBe(oracle.f_min);
    expect(bound(file.upper_bounds, 1, 'float')).toBe(oracle.f_max);
    expect(file.lower_bounds!.has(3)).toBe(false);
    expect(file.upper_bounds!.has(3)).toBe(false);
  });

  it('orders -0 below +0 in float bounds', async () => {
    // Prepare
    const s = schemaOf([
      { id: 1, name: 'both', required: false, type: 'double' },
      { id: 2, name: 'neg', required: false, type: 'double' },
    ]);

    // Act
    const file = await writeOne(wh, 'zero', s, [
      { both: 0, neg: -0 },
      { both: -0, neg: -0 },
    ]);

    // Assess
    expect(Object.is(bound(file.lower_bounds, 1, 'double'), -0)).toBe(true);
    expect(Object.is(bound(file.upper_bounds, 1, 'double'), 0)).toBe(true);
    expect(Object.is(bound(file.lower_bounds, 2, 'double'), -0)).toBe(true);
    expect(Object.is(bound(file.upper_bounds, 2, 'double'), -0)).toBe(true);
  });
});
