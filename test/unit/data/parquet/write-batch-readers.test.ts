import { describe, expect, it } from 'vitest';
import * as arrow from 'apache-arrow';
import { Compression, Table as WasmTable, WriterPropertiesBuilder, writeParquet } from 'parquet-wasm';
import { readFooterMetrics } from '../../../../functions/core/data/parquet/write/footer-metrics.js';
import {
  type ArrowParquetOptions,
  encodeBatchAsParquet,
} from '../../../../functions/core/data/parquet/write/write-batch.js';
import { readDataFile } from '../../../../functions/core/data/parquet/read/read-data-file.js';
import { LocalFileIO } from '../../../../functions/core/io/local-file-io.js';
import { allTypesRows, allTypesSchema } from '../all-types-fixture.js';
import { sqlString } from '../parquet-test-helpers.js';
import { batchOf, fromDuck, hyparquetAnnotated, hyparquetRows, metadataOf, duckAndDir } from './read-back.js';

const schema = allTypesSchema;
const rows = allTypesRows;
const kv = new Map([['iceberg.schema', JSON.stringify(schema)]]);

const configs: [string, ArrowParquetOptions][] = [
  ['zstd, one row group', { codec: 'zstd', rowGroupRows: 1000, keyValueMetadata: kv }],
  ['gzip, a row group per row', { codec: 'gzip', rowGroupRows: 1, keyValueMetadata: kv }],
  ['uncompressed, two row groups', { codec: 'uncompressed', rowGroupRows: 3, keyValueMetadata: kv }],
];

describe('encodeBatchAsParquet: every type, read back by other readers', () => {
  const env = duckAndDir();

  async function duckRows(file: string): Promise<Record<string, unknown>[]> {
    const read = await env.duck.rows(`SELECT * FROM read_parquet(${sqlString(file)})`);
    return read.map((r) =>
      Object.fromEntries(schema.fields.map((f) => [f.name, fromDuck(f.type, r[f.name])])),
    );
  }

  it.each(configs)('hyparquet reads exact values (%s)', async (_, opts) => {
    // Act
    const { bytes } = encodeBatchAsParquet(schema, batchOf(schema, rows), opts);

    // Assess
    expect(await hyparquetRows(bytes, schema)).toEqual(rows);
  });

  it.each(configs)('DuckDB reads exact values (%s)', async (name, opts) => {
    // Prepare
    const { bytes } = encodeBatchAsParquet(schema, batchOf(schema, rows), opts);

    // Act
    const read = await duckRows(await env.dir.file(`${name}.parquet`, bytes));

    // Assess
    expect(read).toEqual(rows);
  });

  it.each(configs)('computes the footer metrics readFooterMetrics reads back (%s)', (_, opts) => {
    // Act
    const { bytes, footer } = encodeBatchAsParquet(schema, batchOf(schema, rows), opts);

    // Assess
    expect(footer).toEqual(readFooterMetrics(bytes));
    expect(footer.splitOffsets).toHaveLength(Math.ceil(rows.length / opts.rowGroupRows));
  });

  it('is read by floe’s own reader (parquet-wasm) with the same values', async () => {
    // Prepare
    const { bytes } = encodeBatchAsParquet(schema, batchOf(schema, rows), configs[0][1]);
    const file = await env.dir.file('own-reader.parquet', bytes);

    // Act
    const read = await readDataFile(new LocalFileIO(), file, schema);

    // Assess
    expect(read).toEqual(rows);
  });

  it('gives DuckDB the same values as parquet-wasm’s file of the same rows', async () => {
    // Prepare
    const batch = batchOf(schema, rows);
    const ours = encodeBatchAsParquet(schema, batch, configs[0][1]).bytes;
    // parquet-wasm called directly, as encode-parquet.ts did before this writer.
    const ipc = arrow.tableToIPC(new arrow.Table([batch]), 'stream');
    const props = new WriterPropertiesBuilder()
      .setCompression(Compression.ZSTD)
      .setKeyValueMetadata(kv)
      .build();
    const theirs = writeParquet(WasmTable.fromIPCStream(ipc), props);
    expect(metadataOf(theirs).created_by).toMatch(/^parquet-rs/);

    // Act
    const a = await duckRows(await env.dir.file('ours.parquet', ours));
    const b = await duckRows(await env.dir.file('theirs.parquet', theirs));

    // Assess
    expect(a).toEqual(b);
  });

  it('lets hyparquet apply the logical types (dates, timestamps, decimals, uuid)', async () => {
    // Prepare
    const { bytes } = encodeBatchAsParquet(schema, batchOf(schema, rows), configs[0][1]);

    // Act
    const [first, second] = await hyparquetAnnotated(bytes);

    // Assess
    expect(first.dt).toEqual(new Date('0001-01-01T00:00:00Z'));
    expect(second.ts).toEqual(new Date('9999-12-31T23:59:59.999Z'));
    expect(first.u).toBe('00000000-0000-0000-0000-000000000000');
    expect(second.dec9).toBe(9999999.99);
    expect(second.dec38).toBeCloseTo(1e28, -14);
    expect(second.s).toBe('héllo 日本 😀');
  });

  it('writes the schema Iceberg Java writes: field ids, types, annotations, 3-level lists and maps', async () => {
    // Prepare
    const { bytes } = encodeBatchAsParquet(schema, batchOf(schema, rows), configs[0][1]);
    const file = await env.dir.file('schema.parquet', bytes);

    // Act
    const elements = await env.duck.rowsJS(
      `SELECT name, type, type_length, repetition_type, num_children, converted_type, scale, precision,
        field_id, logical_type FROM parquet_schema(${sqlString(file)})`,
    );

    // Assess
    const row = (
      name: string,
      type: string | null,
      repetition: string | null,
      fieldId: number | null,
      extra: Record<string, unknown> = {},
    ) => ({
      name,
      type,
      type_length: null,
      repetition_type: repetition,
      num_children: null,
      converted_type: null,
      scale: null,
      precision: null,
      field_id: fieldId === null ? null : BigInt(fieldId),
      logical_type: null,
      ...extra,
    });
    const micros = 'unit=TimeUnit(MILLIS=<null>, MICROS=MicroSeconds(), NANOS=<null>)';
    expect(elements).toEqual([
      row('table', null, null, null, { num_children: 20n }),
      row('b', 'BOOLEAN', 'OPTIONAL', 1),
      row('i', 'INT32', 'OPTIONAL', 2),
      row('l', 'INT64', 'REQUIRED', 3),
      row('f', 'FLOAT', 'OPTIONAL', 4),
      row('d', 'DOUBLE', 'OPTIONAL', 5),
      row('dt', 'INT32', 'OPTIONAL', 6, { converted_type: 'DATE', logical_type: 'DateType()' }),
      row('t', 'INT64', 'OPTIONAL', 7, {
        converted_type: 'TIME_MICROS',
        logical_type: `TimeType(isAdjustedToUTC=0, ${micros})`,
      }),
      row('ts', 'INT64', 'OPTIONAL', 8, {
        converted_type: 'TIMESTAMP_MICROS',
        logical_type: `TimestampType(isAdjustedToUTC=0, ${micros})`,
      }),
      row('tstz', 'INT64', 'OPTIONAL', 9, {
        converted_type: 'TIMESTAMP_MICROS',
        logical_type: `TimestampType(isAdjustedToUTC=1, ${micros})`,
      }),
      row('s', 'BYTE_ARRAY', 'OPTIONAL', 10, { converted_type: 'UTF8', logical_type: 'StringType()' }),
      row('u', 'FIXED_LEN_BYTE_ARRAY', 'OPTIONAL', 11, { type_length: '16', logical_type: 'UUIDType()' }),
      row('fx', 'FIXED_LEN_BYTE_ARRAY', 'OPTIONAL', 12, { type_length: '5' }),
      row('bin', 'BYTE_ARRAY', 'OPTIONAL', 13),
      row('dec9', 'INT32', 'OPTIONAL', 14, {
        converted_type: 'DECIMAL',
        scale: 2n,
        precision: 9n,
        logical_type: 'DecimalType(scale=2, precision=9)',
      }),
      row('dec18', 'INT64', 'OPTIONAL', 15, {
        converted_type: 'DECIMAL',
        scale: 6n,
        precision: 18n,
        logical_type: 'DecimalType(scale=6, precision=18)',
      }),
      row('dec38', 'FIXED_LEN_BYTE_ARRAY', 'OPTIONAL', 16, {
        type_length: '16',
        converted_type: 'DECIMAL',
        scale: 10n,
        precision: 38n,
        logical_type: 'DecimalType(scale=10, precision=38)',
      }),
      row('st', null, 'OPTIONAL', 17, { num_children: 2n }),
      row('a', 'INT32', 'REQUIRED', 18),
      row('inner', null, 'OPTIONAL', 19, { num_children: 1n }),
      row('z', 'BYTE_ARRAY', 'OPTIONAL', 20, { converted_type: 'UTF8', logical_type: 'StringType()' }),
      row('tags', null, 'OPTIONAL', 21, {
        num_children: 1n,
        converted_type: 'LIST',
        logical_type: 'ListType()',
      }),
      row('list', null, 'REPEATED', null, { num_children: 1n }),
      row('element', 'INT64', 'OPTIONAL', 22),
      row('attrs', null, 'OPTIONAL', 23, {
        num_children: 1n,
        converted_type: 'MAP',
        logical_type: 'MapType()',
      }),
      row('key_value', null, 'REPEATED', null, { num_children: 2n }),
      row('key', 'BYTE_ARRAY', 'REQUIRED', 24, { converted_type: 'UTF8', logical_type: 'StringType()' }),
      row('value', 'DOUBLE', 'OPTIONAL', 25),
      row('points', null, 'OPTIONAL', 26, {
        num_children: 1n,
        converted_type: 'LIST',
        logical_type: 'ListType()',
      }),
      row('list', null, 'REPEATED', null, { num_children: 1n }),
      row('element', null, 'REQUIRED', 27, { num_children: 2n }),
      row('x', 'DOUBLE', 'REQUIRED', 28),
      row('y', 'DOUBLE', 'OPTIONAL', 29),
    ]);
  });

  it('writes version 1, created_by, key-value metadata and one TypeDefinedOrder per leaf', async () => {
    // Prepare
    const { bytes } = encodeBatchAsParquet(schema, batchOf(schema, rows), configs[0][1]);
    const file = await env.dir.file('file-meta.parquet', bytes);

    // Act
    const md = metadataOf(bytes);
    const [duckMeta] = await env.duck.rowsJS(
      `SELECT created_by, format_version, column_orders FROM parquet_file_metadata(${sqlString(file)})`,
    );

    // Assess
    expect(md.version).toBe(1);
    expect(md.created_by).toBe('floe version 0.1.0');
    expect(md.key_value_metadata).toEqual([{ key: 'iceberg.schema', value: JSON.stringify(schema) }]);
    expect(md.num_rows).toBe(BigInt(rows.length));
    const leaves = md.schema.filter((e) => !e.num_children).length;
    expect(duckMeta.created_by).toBe('floe version 0.1.0');
    expect(duckMeta.column_orders).toEqual(
      Array.from({ length: leaves }, () => 'ColumnOrder(TYPE_ORDER=TypeDefinedOrder())'),
    );
  });
});
