/**
 * The columnar evaluator (evaluate-columns.ts) decides every row exactly as the row evaluator
 * (evaluate-row.ts) does — true, false and unknown alike — over generated data of every primitive type
 * with nulls, NaN, ±0 and ±Infinity, multi-byte strings, and a field inside a nullable struct, for any
 * and/or/not of predicates. The data goes through floe's Parquet writer and parquet-wasm, so the Arrow
 * layouts are the ones a scan meets.
 */
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchRows } from '../../../functions/core/data/parquet/read/data-batch.js';
import { openDataFile } from '../../../functions/core/data/parquet/read/read-data-file.js';
import { writeDataFiles } from '../../../functions/core/data/parquet/write/write-data-file.js';
import { LocalFileIO } from '../../../functions/core/io/local-file-io.js';
import {
  columnBatchOf,
  evaluateColumns,
  selectRows,
  TRUE,
  UNKNOWN,
} from '../../../functions/core/scan/evaluate-columns.js';
import { evaluate, evaluateRow } from '../../../functions/core/scan/evaluate-row.js';
import type { BoundExpression, BoundReference } from '../../../functions/core/scan/expression.js';
import type { PrimitiveType, Row, Schema, Value } from '../../../functions/core/spec/types.js';
import { filterOf } from './filter-arbitrary.js';

const bytes = (...b: number[]) => Uint8Array.from(b);

/** Each column's type and the values it draws from (literals come from the same pool, so some match). */
const COLUMNS: { name: string; type: PrimitiveType; pool: Value[] }[] = [
  { name: 'b', type: 'boolean', pool: [true, false] },
  { name: 'i', type: 'int', pool: [-2_147_483_648, -2, -1, 0, 1, 7, 2_147_483_647] },
  {
    name: 'l',
    type: 'long',
    // Around the 32-bit halves the typed-array comparison splits a long into, and the 64-bit ends.
    pool: [
      -(2n ** 63n),
      -(2n ** 32n),
      -(2n ** 31n) - 1n,
      -3n,
      -1n,
      0n,
      1n,
      5n,
      2n ** 31n,
      2n ** 32n - 1n,
      2n ** 32n,
      2n ** 32n + 1n,
      2n ** 60n,
      2n ** 63n - 1n,
    ],
  },
  {
    name: 'f',
    type: 'float',
    pool: [-1.5, -0, 0, Math.fround(0.1), 2.25, Number.NaN, Number.POSITIVE_INFINITY],
  },
  {
    name: 'd',
    type: 'double',
    pool: [-1.5, -0, 0, 0.1, 2.5, 1e300, Number.NaN, Number.NEGATIVE_INFINITY],
  },
  { name: 'dt', type: 'date', pool: [-1, 0, 19_000, 19_001] },
  { name: 't', type: 'time', pool: [0n, 1n, 43_200_000_000n, 86_399_999_999n] },
  {
    name: 'ts',
    type: 'timestamp',
    pool: [-(2n ** 32n) - 1n, -1n, 0n, 2n ** 32n, 1_700_000_000_000_000n, 1_700_000_000_000_001n],
  },
  { name: 'tz', type: 'timestamptz', pool: [-5n, 0n, 1_700_000_000_000_000n] },
  { name: 's', type: 'string', pool: ['', 'a', 'ab', 'b', 'Ä', 'ÄÖ', '😀', 'z', '\uffff'] },
  {
    name: 'u',
    type: 'uuid',
    pool: ['00000000-0000-0000-0000-000000000000', 'f81d4fae-7dec-11d0-a765-00a0c91e6bf6'],
  },
  { name: 'bin', type: 'binary', pool: [bytes(), bytes(0), bytes(0, 1), bytes(255)] },
  { name: 'fx', type: 'fixed[3]', pool: [bytes(0, 0, 0), bytes(1, 2, 3), bytes(255, 0, 1)] },
  { name: 'dec', type: 'decimal(9, 2)', pool: [-100n, 0n, 1n, 12_345n] },
  { name: 'dec38', type: 'decimal(38, 10)', pool: [-(10n ** 30n), 0n, 10n ** 20n + 1n] },
];

const STRUCT_ID = 100;
const NESTED: BoundReference = {
  fieldId: 102,
  name: 'st.z',
  path: ['st', 'z'],
  type: 'string',
  required: false,
};

const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    ...COLUMNS.map((c, k) => ({ id: k + 1, name: c.name, required: false, type: c.type })),
    {
      id: STRUCT_ID,
      name: 'st',
      required: false,
      type: {
        type: 'struct',
        fields: [
          { id: 101, name: 'n', required: false, type: 'int' },
          { id: NESTED.fieldId, name: 'z', required: false, type: 'string' },
        ],
      },
    },
  ],
};

const REFS: { ref: BoundReference; pool: Value[] }[] = [
  ...COLUMNS.map((c, k) => ({
    ref: { fieldId: k + 1, name: c.name, path: [c.name], type: c.type, required: false },
    pool: c.pool,
  })),
  { ref: NESTED, pool: ['', 'a', 'Ä'] },
];

const rowArb: fc.Arbitrary<Row> = fc
  .tuple(
    fc.tuple(...COLUMNS.map((c) => fc.option(fc.constantFrom(...c.pool), { nil: null, freq: 4 }))),
    fc.option(
      fc.record({
        n: fc.option(fc.integer({ min: -3, max: 3 }), { nil: null }),
        z: fc.option(fc.constantFrom('', 'a', 'Ä'), { nil: null }),
      }),
      { nil: null, freq: 4 },
    ),
  )
  .map(([values, st]) => ({ ...Object.fromEntries(COLUMNS.map((c, k) => [c.name, values[k]])), st }));

const isFloat = (t: PrimitiveType) => t === 'float' || t === 'double';

const predicateArb: fc.Arbitrary<BoundExpression> = fc.constantFrom(...REFS).chain(({ ref, pool }) => {
  // Literals are what binding produces: no NaN (binding refuses it), floats rounded to float32.
  const literals = pool.filter((v) => !(typeof v === 'number' && Number.isNaN(v)));
  const literal = fc.constantFrom(...literals);
  const unary = isFloat(ref.type)
    ? (['is-null', 'not-null', 'is-nan', 'not-nan'] as const)
    : (['is-null', 'not-null'] as const);
  return fc.oneof(
    fc.record({
      op: fc.constantFrom('eq', 'not-eq', 'lt', 'lt-eq', 'gt', 'gt-eq' as const),
      term: fc.constant(ref),
      value: literal,
    }),
    fc.record({
      op: fc.constantFrom('in', 'not-in' as const),
      term: fc.constant(ref),
      values: fc.uniqueArray(literal, { minLength: 2, maxLength: 4 }),
    }),
    fc.record({ op: fc.constantFrom(...unary), term: fc.constant(ref) }),
  );
});

const filterArb = filterOf(predicateArb);

const io = new LocalFileIO();
let root: string;
let counter = 0;

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-evaluate-columns-'));
});
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

describe('evaluateColumns', () => {
  it('decides every row as evaluate-row does: true, false and unknown, for any data and filter', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(rowArb, { minLength: 1, maxLength: 60 }),
        fc.array(filterArb, { minLength: 1, maxLength: 5 }),
        async (rows, filters) => {
          // Prepare
          const [file] = await writeDataFiles(rows, {
            io,
            schema: SCHEMA,
            specId: 0,
            partition: {},
            nextLocation: (i) => `${root}/f${counter++}-${i}.parquet`,
          });
          const opened = await openDataFile(io, file.file_path);
          const batches = await opened.readBatches(SCHEMA).finally(() => opened.close());

          for (const batch of batches) {
            const read = batchRows(SCHEMA, batch);
            for (const filter of filters) {
              // Act
              const columns = columnBatchOf(SCHEMA, batch);
              const decided = Array.from(evaluateColumns(filter, columns));
              const selected = Array.from(selectRows(filter, columns));

              // Assess
              const expected = read.map((row) => {
                const v = evaluate(filter, row);
                return v === null ? UNKNOWN : v ? TRUE : 0;
              });
              expect(decided).toEqual(expected);
              expect(selected).toEqual(read.flatMap((row, k) => (evaluateRow(filter, row) ? [k] : [])));
            }
          }
        },
      ),
      { numRuns: 80 },
    );
  }, 120_000);

  it('reads a column the file does not have as all null', () => {
    // Prepare
    const batch = { length: 3, columns: new Map() };
    const term = REFS[1].ref;

    // Act
    const isNull = evaluateColumns({ op: 'is-null', term }, columnBatchOf(SCHEMA, batch));
    const eq = evaluateColumns({ op: 'eq', term, value: 1 }, columnBatchOf(SCHEMA, batch));

    // Assess
    expect(Array.from(isNull)).toEqual([TRUE, TRUE, TRUE]);
    expect(Array.from(eq)).toEqual([UNKNOWN, UNKNOWN, UNKNOWN]);
  });
});
