import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readFooterMetrics } from '../../../../functions/core/data/parquet/write/footer-metrics.js';
import {
  type ArrowParquetOptions,
  encodeBatchAsParquet,
} from '../../../../functions/core/data/parquet/write/write-batch.js';
import type { Row, Value } from '../../../../functions/core/spec/types.js';
import { schemaOf, sqlString } from '../parquet-test-helpers.js';
import { batchOf, fromDuck, hyparquetRows, duckAndDir } from './read-back.js';

/** Nesting to depth 2 of repetition, with nulls possible at every optional level. */
const schema = schemaOf([
  { id: 1, name: 'id', required: true, type: 'long' },
  { id: 2, name: 'b', required: false, type: 'boolean' },
  { id: 3, name: 's', required: false, type: 'string' },
  { id: 4, name: 'f', required: false, type: 'float' },
  { id: 5, name: 'dec', required: false, type: 'decimal(20, 3)' },
  { id: 6, name: 'u', required: false, type: 'uuid' },
  {
    id: 7,
    name: 'grid',
    required: false,
    type: {
      type: 'list',
      'element-id': 8,
      'element-required': false,
      element: { type: 'list', 'element-id': 9, element: 'long', 'element-required': false },
    },
  },
  {
    id: 10,
    name: 'st',
    required: false,
    type: {
      type: 'struct',
      fields: [
        { id: 11, name: 'a', required: true, type: 'int' },
        {
          id: 12,
          name: 'items',
          required: false,
          type: {
            type: 'list',
            'element-id': 13,
            'element-required': true,
            element: {
              type: 'struct',
              fields: [
                { id: 14, name: 'x', required: false, type: 'string' },
                { id: 15, name: 'y', required: true, type: 'double' },
              ],
            },
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
            value: { type: 'struct', fields: [{ id: 19, name: 'z', required: false, type: 'date' }] },
            'value-required': false,
          },
        },
      ],
    },
  },
  {
    id: 20,
    name: 'm2',
    required: true,
    type: {
      type: 'map',
      'key-id': 21,
      key: 'long',
      'value-id': 22,
      value: 'binary',
      'value-required': false,
    },
  },
]);

const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null, freq: 4 });
const long = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
// Few distinct values often, so dictionary encoding is exercised as well as PLAIN.
const text = fc.oneof(fc.constantFrom('a', 'b', 'ü'), fc.string({ unit: 'grapheme', maxLength: 6 }));
// Map keys come back from hyparquet as object keys: keep them from clashing with Object.prototype.
const key = fc.string({ maxLength: 4 }).filter((k) => k !== '__proto__');
const mapOf = <K, V>(k: fc.Arbitrary<K>, v: fc.Arbitrary<V>) =>
  fc
    .uniqueArray(fc.tuple(k, v), { selector: (e) => e[0], maxLength: 3 })
    .map((es) => new Map<Value, Value>(es as [Value, Value][]));

const row: fc.Arbitrary<Row> = fc.record({
  id: long,
  b: opt(fc.boolean()),
  s: opt(text),
  f: opt(fc.float()),
  dec: opt(fc.bigInt({ min: -(10n ** 20n - 1n), max: 10n ** 20n - 1n })),
  u: opt(fc.uuid()),
  grid: opt(fc.array(opt(fc.array(opt(long), { maxLength: 3 })), { maxLength: 3 })),
  st: opt(
    fc.record({
      a: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
      items: opt(fc.array(fc.record({ x: opt(text), y: fc.double() }), { maxLength: 3 })),
      m: opt(mapOf(key, opt(fc.record({ z: opt(fc.integer({ min: -1e6, max: 1e6 })) })))),
    }),
  ),
  m2: mapOf(long, opt(fc.uint8Array({ maxLength: 4 }))),
});

const options: fc.Arbitrary<ArrowParquetOptions> = fc.record({
  codec: fc.constantFrom('zstd', 'gzip', 'uncompressed'),
  rowGroupRows: fc.integer({ min: 1, max: 8 }),
  keyValueMetadata: fc.constant(new Map<string, string>()),
  dictionary: fc.boolean(),
  pageBytes: fc.constantFrom(1, 40, 300, 1 << 20),
});

describe('encodeBatchAsParquet: random nested rows', () => {
  const env = duckAndDir();

  it('hyparquet reads back exactly the rows written, and the footer metrics match', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(row, { maxLength: 30 }), options, async (rows, opts) => {
        // Act
        const { bytes, footer } = encodeBatchAsParquet(schema, batchOf(schema, rows), opts);

        // Assess
        expect(await hyparquetRows(bytes, schema)).toEqual(rows);
        expect(footer).toEqual(readFooterMetrics(bytes));
      }),
      { numRuns: 150 },
    );
  });

  it('DuckDB reads back exactly the rows written', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(row, { minLength: 1, maxLength: 30 }), options, async (rows, opts) => {
        // Prepare
        const { bytes } = encodeBatchAsParquet(schema, batchOf(schema, rows), opts);
        const file = await env.dir.file(`p${n++}.parquet`, bytes);

        // Act
        const read = await env.duck.rows(`SELECT * FROM read_parquet(${sqlString(file)})`);

        // Assess
        const decoded = read.map((r) =>
          Object.fromEntries(schema.fields.map((f) => [f.name, fromDuck(f.type, r[f.name])])),
        );
        expect(decoded).toEqual(rows);
      }),
      { numRuns: 40 },
    );
  });
});
