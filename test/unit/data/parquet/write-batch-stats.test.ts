import * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../../functions/core/errors.js';
import {
  encodeBatchAsParquet,
  nativeParquetAvailable,
} from '../../../../functions/core/data/parquet/write/write-batch.js';
import type { Row, Schema } from '../../../../functions/core/spec/types.js';
import { schemaOf, sqlString } from '../parquet-test-helpers.js';
import { batchOf, metadataOf, duckAndDir } from './read-back.js';

const kv = new Map<string, string>();
const opts = { codec: 'zstd', rowGroupRows: 1000, keyValueMetadata: kv } as const;

interface ChunkStats {
  path: string;
  min: string | null;
  max: string | null;
  min_value: string | null;
  max_value: string | null;
  nulls: bigint | null;
}

describe('encodeBatchAsParquet: statistics', () => {
  const env = duckAndDir();

  async function stats(schema: Schema, rows: Row[], name: string): Promise<Record<string, ChunkStats>> {
    const { bytes } = encodeBatchAsParquet(schema, batchOf(schema, rows), opts);
    const file = await env.dir.file(name, bytes);
    const read = (await env.duck.rowsJS(
      `SELECT path_in_schema AS path, stats_min AS min, stats_max AS max, stats_min_value AS min_value,
         stats_max_value AS max_value, stats_null_count AS nulls FROM parquet_metadata(${sqlString(file)})`,
    )) as unknown as ChunkStats[];
    return Object.fromEntries(read.map((r) => [r.path, r]));
  }

  it('writes signed min/max (deprecated and current fields) for numeric leaves, and null counts', async () => {
    // Prepare
    const schema = schemaOf([
      { id: 1, name: 'i', required: false, type: 'int' },
      { id: 2, name: 'l', required: false, type: 'long' },
      { id: 3, name: 'dt', required: false, type: 'date' },
      { id: 4, name: 'ts', required: false, type: 'timestamptz' },
      { id: 5, name: 'd9', required: false, type: 'decimal(9, 2)' },
      { id: 6, name: 'd18', required: false, type: 'decimal(18, 2)' },
    ]);
    const rows: Row[] = [
      { i: -3, l: -(2n ** 40n), dt: 19000, ts: 1n, d9: -150n, d18: 10n ** 17n },
      { i: null, l: null, dt: null, ts: null, d9: null, d18: null },
      { i: 7, l: 5n, dt: -1, ts: -5n, d9: 99n, d18: -(10n ** 17n) },
    ];

    // Act
    const s = await stats(schema, rows, 'numeric.parquet');

    // Assess
    const expected = (min: string, max: string): ChunkStats =>
      expect.objectContaining({ min, max, min_value: min, max_value: max, nulls: 1n });
    expect(s.i).toEqual(expected('-3', '7'));
    expect(s.l).toEqual(expected('-1099511627776', '5'));
    expect(s.dt).toEqual(expected('1969-12-31', '2022-01-08'));
    expect(s.ts).toEqual(expected('1969-12-31 23:59:59.999995+00', '1970-01-01 00:00:00.000001+00'));
    expect(s.d9).toEqual(expected('-1.50', '0.99'));
    expect(s.d18).toEqual(expected('-1000000000000000.00', '1000000000000000.00'));
  });

  it('leaves NaN out of float bounds, writes -0 as min and +0 as max, and no bounds when all NaN', async () => {
    // Prepare
    const schema = schemaOf([
      { id: 1, name: 'withNaN', required: false, type: 'double' },
      { id: 2, name: 'zeros', required: false, type: 'float' },
      { id: 3, name: 'allNaN', required: false, type: 'double' },
    ]);
    const rows: Row[] = [
      { withNaN: Number.NaN, zeros: 0, allNaN: Number.NaN },
      { withNaN: 2.5, zeros: 0, allNaN: null },
      { withNaN: -1, zeros: 0, allNaN: Number.NaN },
    ];

    // Act
    const { bytes } = encodeBatchAsParquet(schema, batchOf(schema, rows), opts);

    // Assess
    const [withNaN, zeros, allNaN] = metadataOf(bytes).row_groups[0].columns.map(
      (c) => c.meta_data?.statistics,
    );
    expect(withNaN).toMatchObject({ min_value: -1, max_value: 2.5, null_count: 0n });
    expect(Object.is(zeros?.min_value, -0)).toBe(true);
    expect(Object.is(zeros?.max_value, 0)).toBe(true);
    expect(allNaN).toEqual({ null_count: 1n });
  });

  it('bounds strings in unsigned byte order, everywhere they nest, but not past 64 bytes', async () => {
    // Prepare
    const schema = schemaOf([
      { id: 1, name: 's', required: false, type: 'string' },
      { id: 2, name: 'long', required: false, type: 'string' },
      { id: 3, name: 'inner', required: false, type: 'string' },
      {
        id: 4,
        name: 'tags',
        required: false,
        type: { type: 'list', 'element-id': 5, element: 'string', 'element-required': false },
      },
    ]);
    const long = 'x'.repeat(65);
    const rows: Row[] = [
      { s: 'b', long: 'a', inner: 'a', tags: ['é', null] },
      { s: 'é', long, inner: long, tags: null },
      { s: 'z', long: 'b', inner: 'z', tags: [] },
      { s: null, long: null, inner: 'b', tags: ['a'] },
    ];

    // Act
    const s = await stats(schema, rows, 'strings.parquet');

    // Assess: 'é' (0xC3 0xA9) sorts after 'z' as bytes; no deprecated min/max for unsigned order.
    expect(s.s).toMatchObject({ min: null, max: null, min_value: 'b', max_value: 'é', nulls: 1n });
    expect(s.long).toMatchObject({ min_value: null, max_value: null, nulls: 1n });
    expect(s.inner).toMatchObject({ min_value: 'a', max_value: 'z', nulls: 0n });
    // Levels without a value: null element, null list, empty list.
    expect(s['tags, list, element']).toMatchObject({ min_value: 'a', max_value: 'é', nulls: 3n });
  });

  it('writes only null counts for boolean, binary, fixed, uuid and wide decimals', async () => {
    // Prepare
    const schema = schemaOf([
      { id: 1, name: 'b', required: false, type: 'boolean' },
      { id: 2, name: 'bin', required: false, type: 'binary' },
      { id: 3, name: 'fx', required: false, type: 'fixed[2]' },
      { id: 4, name: 'u', required: false, type: 'uuid' },
      { id: 5, name: 'd', required: false, type: 'decimal(30, 2)' },
    ]);
    const rows: Row[] = [
      {
        b: true,
        bin: Uint8Array.of(1),
        fx: Uint8Array.of(1, 2),
        u: '00000000-0000-0000-0000-000000000001',
        d: 1n,
      },
      { b: null, bin: null, fx: null, u: null, d: null },
    ];

    // Act
    const { bytes } = encodeBatchAsParquet(schema, batchOf(schema, rows), opts);

    // Assess
    const all = metadataOf(bytes).row_groups[0].columns.map((c) => c.meta_data?.statistics);
    expect(all).toEqual(all.map(() => ({ null_count: 1n })));
  });
});

describe('encodeBatchAsParquet: what it refuses', () => {
  const schema = schemaOf([{ id: 1, name: 'a', required: false, type: 'int' }]);

  it('knows which codecs it has', () => {
    expect(nativeParquetAvailable('zstd')).toBe(true); // Node ≥ 22.15 here
    expect(nativeParquetAvailable('gzip')).toBe(true);
    expect(nativeParquetAvailable('uncompressed')).toBe(true);
    expect(nativeParquetAvailable('snappy')).toBe(false);
  });

  it('refuses a codec it does not have', () => {
    const batch = batchOf(schema, [{ a: 1 }]);
    expect(() => encodeBatchAsParquet(schema, batch, { ...opts, codec: 'snappy' as 'zstd' })).toThrow(
      ValidationError,
    );
  });

  it('refuses a null in a field the schema requires', () => {
    // Prepare: the batch was built for the optional field
    const batch = batchOf(schema, [{ a: 1 }, { a: null }]);
    const required = schemaOf([{ id: 1, name: 'a', required: true, type: 'int' }]);

    // Act / Assess
    expect(() => encodeBatchAsParquet(required, batch, opts)).toThrow("required field 'a' is null");
  });

  it('refuses a batch whose Arrow types do not match the schema', () => {
    const batch = batchOf(schema, [{ a: 1 }]);
    const other = schemaOf([{ id: 1, name: 'a', required: false, type: 'long' }]);
    expect(() => encodeBatchAsParquet(other, batch, opts)).toThrow(ValidationError);
  });

  it('refuses sliced Arrow data rather than misreading it', () => {
    const batch = batchOf(schema, [{ a: 1 }, { a: 2 }, { a: 3 }]).slice(1);
    expect(batch).toBeInstanceOf(arrow.RecordBatch);
    expect(() => encodeBatchAsParquet(schema, batch, opts)).toThrow(/sliced/);
  });
});
