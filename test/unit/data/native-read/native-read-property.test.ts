/**
 * floe's own Parquet reader (data/parquet/read/native/) against parquet-wasm on files floe's writer wrote: random
 * Iceberg schemas (every primitive floe maps, structs, lists of primitives and of structs, maps,
 * optional and required at every level) and random rows (nulls at every level, empty lists, NaN and
 * -0, multi-byte and empty strings), cut into several row groups, pages and batches. The tables must
 * be the same field by field (name, type, nullability, field id metadata) and slot by slot.
 */
import type * as arrow from 'apache-arrow';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toArrowSchema } from '../../../../functions/core/data/arrow/arrow-schema.js';
import { encodeParquetFile } from '../../../../functions/core/data/parquet/write/encode-parquet.js';
import { decodeFloeParquet } from '../../../../functions/core/data/parquet/read/native/read-floe-parquet.js';
import { encodeBatchAsParquet } from '../../../../functions/core/data/parquet/write/write-batch.js';
import { readWithParquetWasm } from '../../../../functions/core/data/parquet/read/read-arrow-columns.js';
import type { IcebergType, Row, Schema, StructField, Value } from '../../../../functions/core/spec/types.js';
import { batchOf } from '../parquet/read-back.js';
import { tableShape } from './arrow-shape.js';

const PRIMITIVES: IcebergType[] = [
  'boolean',
  'int',
  'long',
  'float',
  'double',
  'date',
  'time',
  'timestamp',
  'timestamptz',
  'string',
  'binary',
  'uuid',
  'fixed[1]',
  'fixed[7]',
  'decimal(1, 0)',
  'decimal(9, 2)',
  'decimal(10, 10)',
  'decimal(18, 3)',
  'decimal(19, 0)',
  'decimal(27, 5)',
  'decimal(38, 12)',
];

/** A type without ids (0 placeholders); ids are given in order afterwards. */
const typeOf: (depth: number) => fc.Arbitrary<IcebergType> = (depth) => {
  const primitive = fc.constantFrom(...PRIMITIVES);
  if (depth === 0) return primitive;
  const inner = typeOf(depth - 1);
  const field = fc.record({ required: fc.boolean(), type: inner });
  return fc.oneof(
    { weight: 4, arbitrary: primitive },
    {
      weight: 2,
      arbitrary: fc.array(field, { minLength: 1, maxLength: 3 }).map(
        (fs): IcebergType => ({
          type: 'struct',
          fields: fs.map((f, i) => ({ id: 0, name: `f${i}`, required: f.required, type: f.type })),
        }),
      ),
    },
    {
      weight: 2,
      arbitrary: fc.record({ required: fc.boolean(), element: inner }).map(
        (l): IcebergType => ({
          type: 'list',
          'element-id': 0,
          'element-required': l.required,
          element: l.element,
        }),
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .record({
          key: fc.constantFrom<IcebergType>('string', 'long', 'int'),
          required: fc.boolean(),
          value: inner,
        })
        .map(
          (m): IcebergType => ({
            type: 'map',
            'key-id': 0,
            key: m.key,
            'value-id': 0,
            value: m.value,
            'value-required': m.required,
          }),
        ),
    },
  );
};

function withIds(type: IcebergType, next: () => number): IcebergType {
  if (typeof type === 'string') return type;
  if (type.type === 'struct') {
    return {
      type: 'struct',
      fields: type.fields.map((f) => ({ ...f, id: next(), type: withIds(f.type, next) })),
    };
  }
  if (type.type === 'list') return { ...type, 'element-id': next(), element: withIds(type.element, next) };
  return { ...type, 'key-id': next(), 'value-id': next(), value: withIds(type.value, next) };
}

const schemaArb: fc.Arbitrary<Schema> = fc
  .array(fc.record({ required: fc.boolean(), type: typeOf(2) }), { minLength: 1, maxLength: 5 })
  .map((fs) => {
    let id = 0;
    const next = () => ++id;
    const fields: StructField[] = fs.map((f, i) => {
      const fid = next();
      return { id: fid, name: `c${i}`, required: f.required, type: withIds(f.type, next) };
    });
    return { type: 'struct', 'schema-id': 0, fields };
  });

function decimalDigits(type: string): number {
  return Number(/decimal\((\d+)/.exec(type)?.[1] ?? 0);
}

const text = fc.oneof(
  fc.constantFrom('', 'a', 'ü', '日本', '😀x'),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
);

function valueArb(type: IcebergType, required: boolean): fc.Arbitrary<Value> {
  const v = nonNull(type);
  return required ? v : fc.option(v, { nil: null, freq: 3 });
}

function nonNull(type: IcebergType): fc.Arbitrary<Value> {
  if (typeof type !== 'string') {
    if (type.type === 'struct') {
      return fc.record(
        Object.fromEntries(type.fields.map((f) => [f.name, valueArb(f.type, f.required)])),
      ) as fc.Arbitrary<Value>;
    }
    if (type.type === 'list')
      return fc.array(valueArb(type.element, type['element-required']), { maxLength: 4 });
    const value = valueArb(type.value, type['value-required']);
    return fc
      .uniqueArray(fc.tuple(nonNull(type.key), value), { selector: (e) => String(e[0]), maxLength: 3 })
      .map((es) => new Map<Value, Value>(es));
  }
  switch (type) {
    case 'boolean':
      return fc.boolean();
    case 'int':
    case 'date':
      return fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return type === 'time'
        ? fc.bigInt({ min: 0n, max: 86_399_999_999n })
        : fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
    case 'float':
      return fc.float();
    case 'double':
      return fc.oneof(fc.double(), fc.constantFrom(Number.NaN, -0, 0));
    case 'string':
      return text;
    case 'binary':
      return fc.uint8Array({ maxLength: 6 });
    case 'uuid':
      return fc.uuid();
    case 'fixed[1]':
      return fc.uint8Array({ minLength: 1, maxLength: 1 });
    case 'fixed[7]':
      return fc.uint8Array({ minLength: 7, maxLength: 7 });
  }
  const limit = 10n ** BigInt(decimalDigits(type)) - 1n;
  return fc.bigInt({ min: -limit, max: limit });
}

interface Layout {
  codec: 'zstd' | 'gzip' | 'uncompressed';
  /** Through encodeParquetFile (compaction's and ingest's writer) or straight to encodeBatchAsParquet. */
  viaFile: boolean;
  rowGroupBytes: number;
  rowGroupRows: number;
  pageRows: number;
  pageBytes: number;
  dictionary: boolean;
  batchRows: number;
}

const layoutArb: fc.Arbitrary<Layout> = fc.record({
  codec: fc.constantFrom('zstd', 'gzip', 'uncompressed'),
  viaFile: fc.boolean(),
  rowGroupBytes: fc.integer({ min: 1, max: 4000 }),
  rowGroupRows: fc.integer({ min: 1, max: 12 }),
  pageRows: fc.integer({ min: 1, max: 6 }),
  pageBytes: fc.constantFrom(1, 30, 200, 1 << 20),
  dictionary: fc.boolean(),
  batchRows: fc.constantFrom(1, 3, 7, 65_536),
});

function write(schema: Schema, rows: Row[], layout: Layout): Uint8Array {
  const keyValueMetadata = new Map([['iceberg.schema', JSON.stringify(schema)]]);
  if (layout.viaFile) {
    return encodeParquetFile(schema, toArrowSchema(schema), rows, 0, rows.length, {
      codec: layout.codec,
      rowGroupSizeBytes: layout.rowGroupBytes,
      pageRows: layout.pageRows,
      keyValueMetadata,
    }).bytes;
  }
  return encodeBatchAsParquet(schema, batchOf(schema, rows), {
    codec: layout.codec,
    rowGroupRows: layout.rowGroupRows,
    pageRows: layout.pageRows,
    pageBytes: layout.pageBytes,
    dictionary: layout.dictionary,
    keyValueMetadata,
  }).bytes;
}

const caseArb = schemaArb.chain((schema) =>
  fc.record({
    schema: fc.constant(schema),
    rows: fc.array(valueArb(schema, true) as fc.Arbitrary<Row>, { minLength: 1, maxLength: 25 }),
    layout: layoutArb,
  }),
);

describe('decodeFloeParquet: random schemas and rows written by floe', () => {
  it('reads the same Arrow table as parquet-wasm: types, nullability, field ids, every slot', async () => {
    // The table read before, to check that reading the next file (scratch memory reused) leaves it be.
    let previous: { table: arrow.Table; shape: unknown } | undefined;
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ schema, rows, layout }) => {
        // Prepare
        const bytes = write(schema, rows, layout);

        // Act
        const native = decodeFloeParquet(bytes, layout.batchRows);

        // Assess
        const expected = tableShape(await readWithParquetWasm(bytes, 'random.parquet', layout.batchRows));
        expect(tableShape(native)).toEqual(expected);
        if (previous) expect(tableShape(previous.table)).toEqual(previous.shape);
        previous = { table: native, shape: expected };
      }),
      { numRuns: 300 },
    );
  });

  it('reads low-cardinality strings (dictionary pages) over many row groups and pages', async () => {
    // Prepare
    const schema: Schema = {
      type: 'struct',
      'schema-id': 0,
      fields: [
        { id: 1, name: 'country', required: true, type: 'string' },
        { id: 2, name: 'status', required: false, type: 'string' },
        {
          id: 3,
          name: 'tags',
          required: false,
          type: { type: 'list', 'element-id': 4, 'element-required': true, element: 'string' },
        },
      ],
    };
    const rows: Row[] = Array.from({ length: 3000 }, (_, i) => ({
      country: ['DE', 'FR', 'São Paulo'][i % 3],
      status: i % 7 === 0 ? null : ['new', 'paid'][i % 2],
      tags: i % 5 === 0 ? null : Array.from({ length: i % 4 }, (_, k) => ['x', 'yy', ''][(i + k) % 3]),
    }));
    const bytes = write(schema, rows, {
      codec: 'zstd',
      viaFile: false,
      rowGroupBytes: 0,
      rowGroupRows: 1100,
      pageRows: 250,
      pageBytes: 1 << 20,
      dictionary: true,
      batchRows: 1000,
    });

    // Act
    const native = decodeFloeParquet(bytes, 1000);

    // Assess
    expect(native.batches.map((b) => b.numRows)).toEqual([1000, 1000, 1000]);
    expect(tableShape(native)).toEqual(tableShape(await readWithParquetWasm(bytes, 'strings.parquet', 1000)));
  });
});
