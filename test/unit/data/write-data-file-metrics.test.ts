import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDataFiles } from '../../../functions/core/data/parquet/write/write-data-file.js';
import { decodeValue } from '../../../functions/core/spec/conversions.js';
import type { DataFile, PrimitiveType, Row, Schema, Value } from '../../../functions/core/spec/types.js';
import {
  type DuckDB,
  type TempWarehouse,
  createTempWarehouse,
  fromDuckDB,
  openDuckDB,
  schemaOf,
  sqlString,
} from './parquet-test-helpers.js';

/** Leaf columns with bounds: SQL expression, field id, Iceberg type. */
const leaves: { sql: string; id: number; type: PrimitiveType }[] = [
  { sql: 'b', id: 1, type: 'boolean' },
  { sql: 'i', id: 2, type: 'int' },
  { sql: 'l', id: 3, type: 'long' },
  { sql: 'f', id: 4, type: 'float' },
  { sql: 'd', id: 5, type: 'double' },
  { sql: 'dt', id: 6, type: 'date' },
  { sql: 't', id: 7, type: 'time' },
  { sql: 'tstz', id: 8, type: 'timestamptz' },
  { sql: 's', id: 9, type: 'string' },
  { sql: 'u', id: 10, type: 'uuid' },
  { sql: 'fx', id: 11, type: 'fixed[3]' },
  { sql: 'bin', id: 12, type: 'binary' },
  { sql: 'dec', id: 13, type: 'decimal(20, 3)' },
  { sql: 'st.a', id: 15, type: 'long' },
  { sql: 'st.inner.z', id: 17, type: 'string' },
];

const schema = schemaOf([
  ...leaves.slice(0, 13).map((c) => ({ id: c.id, name: c.sql, required: c.id === 3, type: c.type })),
  {
    id: 14,
    name: 'st',
    required: false,
    type: {
      type: 'struct',
      fields: [
        { id: 15, name: 'a', required: true, type: 'long' },
        {
          id: 16,
          name: 'inner',
          required: false,
          type: { type: 'struct', fields: [{ id: 17, name: 'z', required: false, type: 'string' }] },
        },
      ],
    },
  },
  {
    id: 18,
    name: 'tags',
    required: false,
    type: { type: 'list', 'element-id': 19, element: 'int', 'element-required': false },
  },
  {
    id: 20,
    name: 'attrs',
    required: false,
    type: {
      type: 'map',
      'key-id': 21,
      key: 'string',
      'value-id': 22,
      value: 'long',
      'value-required': false,
    },
  },
]);

/** Deterministic rows with nulls sprinkled through every optional column. */
function makeRows(n: number): Row[] {
  let seed = 7;
  const rand = (m: number) => {
    seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
    return seed % m;
  };
  const maybe = <T extends Value>(v: T): T | null => (rand(7) === 0 ? null : v);
  const hexByte = () => rand(256).toString(16).padStart(2, '0');
  return Array.from({ length: n }, (_, k) => ({
    b: maybe(rand(2) === 0),
    i: maybe(rand(2_000_000) - 1_000_000),
    l: BigInt(rand(1_000_000)) * 1_000_003n - 500_000_000_000n,
    f: maybe((rand(20_000) - 10_000) / 8),
    d: maybe((rand(2_000_000) - 1_000_000) / 1024),
    dt: maybe(rand(40_000) - 10_000),
    t: maybe(BigInt(rand(86_400)) * 1_000_000n + BigInt(rand(1_000_000))),
    tstz: maybe(1_700_000_000_000_000n + BigInt(rand(1_000_000_000)) * 1000n + BigInt(rand(1000))),
    s: maybe(`v${rand(100_000)}-${'é'.repeat(rand(3))}`),
    u: maybe(
      `${Array.from({ length: 4 }, hexByte).join('')}-0000-4000-8000-${Array.from({ length: 6 }, hexByte).join('')}`,
    ),
    fx: maybe(Uint8Array.of(rand(256), rand(256), rand(256))),
    bin: maybe(Uint8Array.from({ length: rand(5) }, () => rand(256))),
    dec: maybe(BigInt(rand(2_000_000_000)) * 10_000_000_000n - 10n ** 19n + BigInt(k)),
    st: maybe({ a: BigInt(rand(1000) - 500), inner: maybe({ z: maybe(`z${rand(1000)}`) }) }),
    tags: maybe(Array.from({ length: rand(4) }, () => maybe(rand(100)))),
    attrs: maybe(
      new Map<Value, Value>(Array.from({ length: rand(3) }, (_, j) => [`k${j}`, maybe(BigInt(rand(10)))])),
    ),
  }));
}

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
    specId: 3,
    partition: { region: 'eu' },
    nextLocation: wh.locations(prefix),
    ...extra,
  });
  expect(files).toHaveLength(1);
  return files[0];
}

describe('writeDataFiles: column metrics', () => {
  let wh: TempWarehouse;
  let duck: DuckDB;
  const rows = makeRows(500);
  let dataFile: DataFile;
  let path: string;

  beforeAll(async () => {
    wh = await createTempWarehouse();
    duck = await openDuckDB();
    dataFile = await writeOne(wh, 'metrics', schema, rows);
    path = sqlString(dataFile.file_path);
  });

  afterAll(async () => {
    duck?.close();
    await wh?.cleanup();
  });

  it('fills the DataFile envelope from the options and the written file', async () => {
    // Act
    const stat = await wh.io.stat(dataFile.file_path);
    const [count] = await duck.rowsJS(`SELECT count(*) AS n FROM read_parquet(${path})`);
    const [kv] = await duck.rowsJS(
      `SELECT decode(value) AS json FROM parquet_kv_metadata(${path}) WHERE decode(key) = 'iceberg.schema'`,
    );

    // Assess
    expect(dataFile).toMatchObject({
      content: 0,
      file_format: 'PARQUET',
      spec_id: 3,
      partition: { region: 'eu' },
      record_count: 500n,
      equality_ids: null,
      sort_order_id: null,
    });
    expect(count.n).toBe(500n);
    expect(dataFile.file_size_in_bytes).toBe(BigInt(stat!.size));
    expect(JSON.parse(kv.json as string)).toEqual(schema);
  });

  it('has lower/upper bounds equal to the min/max DuckDB computes, for every leaf outside lists and maps', async () => {
    // Act
    const select = leaves.map((c, k) => `min(${c.sql}) AS min${k}, max(${c.sql}) AS max${k}`).join(', ');
    const [minMax] = await duck.rows(`SELECT ${select} FROM read_parquet(${path})`);

    // Assess
    for (const [k, c] of leaves.entries()) {
      expect({ id: c.id, lower: bound(dataFile.lower_bounds, c.id, c.type) }).toEqual({
        id: c.id,
        lower: fromDuckDB(c.type, minMax[`min${k}`]),
      });
      expect({ id: c.id, upper: bound(dataFile.upper_bounds, c.id, c.type) }).toEqual({
        id: c.id,
        upper: fromDuckDB(c.type, minMax[`max${k}`]),
      });
    }
    // Repeated leaves get counts but no bounds, as in Iceberg Java.
    for (const id of [19, 21, 22]) {
      expect(dataFile.lower_bounds!.has(id)).toBe(false);
      expect(dataFile.upper_bounds!.has(id)).toBe(false);
    }
  });

  it('has value and null counts equal to what DuckDB counts', async () => {
    // Act
    const select = leaves.map((c, k) => `count(*) - count(${c.sql}) AS nulls${k}`).join(', ');
    const [counts] = await duck.rowsJS(`SELECT ${select} FROM read_parquet(${path})`);

    // Assess
    for (const [k, c] of leaves.entries()) {
      expect({ id: c.id, values: dataFile.value_counts!.get(c.id) }).toEqual({ id: c.id, values: 500n });
      expect({ id: c.id, nulls: dataFile.null_value_counts!.get(c.id) }).toEqual({
        id: c.id,
        nulls: counts[`nulls${k}`],
      });
    }
  });

  it('has column sizes, value counts and null counts matching DuckDB parquet_metadata for every leaf', async () => {
    // Act
    const meta = await duck.rowsJS(
      `SELECT path_in_schema, sum(total_compressed_size) AS size, sum(num_values) AS vals, sum(stats_null_count) AS nulls
       FROM parquet_metadata(${path}) GROUP BY path_in_schema`,
    );
    const schemaIds = await duck.rowsJS(
      `SELECT name, field_id FROM parquet_schema(${path}) WHERE num_children IS NULL`,
    );

    // Assess: parquet_metadata names leaves by path; parquet_schema lists leaves in the same order.
    expect(meta).toHaveLength(18);
    const sizes = new Map<number, bigint>();
    const values = new Map<number, bigint>();
    const nulls = new Map<number, bigint>();
    const ordered = await duck.rowsJS(
      `SELECT DISTINCT column_id, path_in_schema FROM parquet_metadata(${path}) ORDER BY column_id`,
    );
    ordered.forEach((col, k) => {
      const id = Number(schemaIds[k].field_id);
      const row = meta.find((m) => m.path_in_schema === col.path_in_schema)!;
      sizes.set(id, BigInt(row.size as bigint));
      values.set(id, BigInt(row.vals as bigint));
      nulls.set(id, BigInt(row.nulls as bigint));
    });
    expect(dataFile.column_sizes).toEqual(sizes);
    expect(dataFile.value_counts).toEqual(values);
    expect(dataFile.null_value_counts).toEqual(nulls);
  });

  it('splits at the row groups DuckDB sees, when the row-group size makes several', async () => {
    // Prepare
    const many = makeRows(6000);

    // Act
    const file = await writeOne(wh, 'row-groups', schema, many, { rowGroupSizeBytes: 64 * 1024 });
    const groups = await duck.rowsJS(
      `SELECT row_group_id, coalesce(least(dictionary_page_offset, data_page_offset), data_page_offset) AS start
       FROM parquet_metadata(${sqlString(file.file_path)}) WHERE column_id = 0 ORDER BY row_group_id`,
    );

    // Assess
    expect(groups.length).toBeGreaterThan(2);
    expect(file.split_offsets).toEqual(groups.map((g) => BigInt(g.start as bigint)));
    expect([...file.split_offsets!].sort((a, b) => (a < b ? -1 : 1))).toEqual(file.split_offsets);
    const [count] = await duck.rowsJS(`SELECT count(*) AS n FROM read_parquet(${sqlString(file.file_path)})`);
    expect(count.n).toBe(6000n);
  });
});
