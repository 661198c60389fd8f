/**
 * Typed leaf storage (leaf-column.ts + build-typed-data.ts) must be invisible: the same values pushed
 * into a leaf build the same Arrow Data (buffers, validity) and the same stats as
 * build-primitive-data.ts builds from the `Value`s, for every typed kind, with nulls, masked slots,
 * non-ASCII text, binary values, -0, values past 2^53 (which move the leaf to generic storage), and after take/slice.
 */
import type * as arrow from 'apache-arrow';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toArrowSchema } from '../../../functions/core/data/arrow/arrow-schema.js';
import { buildPrimitiveData } from '../../../functions/core/data/arrow/build-primitive-data.js';
import { buildTypedLeaf } from '../../../functions/core/data/arrow/build-typed-data.js';
import type { StatsSink } from '../../../functions/core/data/arrow/column-stats.js';
import { type ColumnTarget, MASKED } from '../../../functions/core/data/arrow/column-target.js';
import { LeafColumn } from '../../../functions/core/data/arrow/leaf-column.js';
import type { PrimitiveType } from '../../../functions/core/spec/types.js';
import { plain } from '../evolution/fitting-arbitraries.js';

const TYPES: PrimitiveType[] = [
  'boolean',
  'int',
  'date',
  'long',
  'timestamptz',
  'timestamp',
  'float',
  'double',
  'decimal(10, 2)',
  'decimal(38, 4)',
  'string',
  'binary',
];

const safe = fc.maxSafeInteger();
const bigs = fc.oneof(
  safe.map(BigInt),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
  fc.constantFrom(2n ** 53n, -(2n ** 53n), 2n ** 53n - 1n, 0n),
);

function valueArb(type: PrimitiveType): fc.Arbitrary<unknown> {
  switch (type) {
    case 'boolean':
      return fc.boolean();
    case 'int':
    case 'date':
      return fc.oneof(fc.integer(), fc.constant(-0));
    case 'float':
      return fc.float({ noNaN: false }).map(Math.fround);
    case 'double':
      return fc.oneof(fc.double(), fc.constantFrom(-0, 0, Number.NaN));
    case 'string':
      return fc.oneof(
        fc.string(),
        fc.string({ unit: 'grapheme' }),
        fc.constantFrom('', 'é', 'z', '\u{1F600}'),
      );
    case 'binary':
      return fc.oneof(fc.uint8Array({ maxLength: 24 }), fc.constant(Uint8Array.of(255)));
    case 'decimal(10, 2)':
      return fc.bigInt({ min: -(10n ** 10n) + 1n, max: 10n ** 10n - 1n });
    default:
      return bigs;
  }
}

const slotArb = (type: PrimitiveType) =>
  fc.oneof({ weight: 6, arbitrary: valueArb(type) }, fc.constant(null), fc.constant(MASKED));

function built(
  type: PrimitiveType,
  col: ColumnTarget,
  build: (field: arrow.Field, stats: StatsSink) => arrow.Data,
) {
  const field = toArrowSchema({
    type: 'struct',
    fields: [{ id: 1, name: 'c', required: col.required, type }],
  }).fields[0];
  const stats: StatsSink = new Map();
  const data = build(field, stats);
  const bytes = (a: ArrayBufferView | undefined) =>
    a && Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');
  return plain({
    values: bytes(data.values),
    nulls: data.nullCount > 0 ? bytes(data.nullBitmap) : undefined,
    nullCount: data.nullCount,
    offsets: data.valueOffsets ? [...data.valueOffsets] : undefined,
    stats: [...stats],
  });
}

function leafOf(type: PrimitiveType, slots: unknown[]): LeafColumn {
  const leaf = new LeafColumn(type);
  for (const v of slots) leaf.pushValue(v);
  return leaf;
}

describe('typed leaf columns', () => {
  it('build the same Arrow data and stats as the Value builders, for every typed kind', () => {
    let typed = 0;
    fc.assert(
      fc.property(
        fc
          .constantFrom(...TYPES)
          .chain((type) => fc.tuple(fc.constant(type), fc.array(slotArb(type), { maxLength: 150 }))),
        fc.boolean(),
        ([type, slots], bounded) => {
          const col: ColumnTarget = { id: 1, path: 'c', required: false, bounded };
          const leaf = leafOf(type, slots);
          if (!leaf.values) typed++;
          const fromLeaf = built(type, col, (f, s) =>
            leaf.values
              ? buildPrimitiveData(type, f.type, col, leaf.values, s)
              : buildTypedLeaf(type, f.type, col, leaf, s),
          );
          const fromValues = built(type, col, (f, s) => buildPrimitiveData(type, f.type, col, slots, s));
          expect(fromLeaf).toEqual(fromValues);
          // Rows read back as the values pushed.
          for (let i = 0; i < slots.length; i++) {
            const expected = slots[i] === MASKED ? undefined : slots[i];
            const v = leaf.valueAt(i);
            if (typeof expected === 'number' && Number.isNaN(expected)) expect(v).toBeNaN();
            else expect(Object.is(v, expected) || plain(v) === plain(expected)).toBe(true);
          }
        },
      ),
      { seed: 20261205, numRuns: 600 },
    );
    expect(typed).toBeGreaterThan(200);
  });

  it('take and slice rows as the Value arrays do', () => {
    fc.assert(
      fc.property(
        fc
          .constantFrom(...TYPES)
          .chain((type) =>
            fc.tuple(fc.constant(type), fc.array(slotArb(type), { minLength: 1, maxLength: 60 })),
          ),
        fc.array(fc.nat(), { maxLength: 80 }),
        fc.nat(),
        fc.nat(),
        ([type, slots], picks, a, b) => {
          const col: ColumnTarget = { id: 1, path: 'c', required: false, bounded: true };
          const leaf = leafOf(type, slots);
          const indices = picks.map((p) => p % slots.length);
          const start = a % (slots.length + 1);
          const end = start + (b % (slots.length - start + 1));
          for (const [part, values] of [
            [leaf.take(indices), indices.map((i) => slots[i])],
            [leaf.slice(start, end), slots.slice(start, end)],
          ] as const) {
            const fromLeaf = built(type, col, (f, s) =>
              part.values
                ? buildPrimitiveData(type, f.type, col, part.values, s)
                : buildTypedLeaf(type, f.type, col, part, s),
            );
            expect(fromLeaf).toEqual(
              built(type, col, (f, s) => buildPrimitiveData(type, f.type, col, values, s)),
            );
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuse a null in a required column as the Value builders do, and allow a masked slot there', () => {
    const col: ColumnTarget = { id: 1, path: 'c', required: true, bounded: true };
    const field = toArrowSchema({
      type: 'struct',
      fields: [{ id: 1, name: 'c', required: true, type: 'long' }],
    }).fields[0];
    const masked = leafOf('long', [1n, MASKED]);
    expect(buildTypedLeaf('long', field.type, col, masked, new Map()).nullCount).toBe(1);
    const withNull = leafOf('long', [1n, null]);
    expect(() => buildTypedLeaf('long', field.type, col, withNull, new Map())).toThrow(
      "required field 'c' is null",
    );
    expect(() => buildPrimitiveData('long', field.type, col, [1n, null], new Map())).toThrow(
      "required field 'c' is null",
    );
  });

  it('hold binary values as bytes (no object per value), a row reading a copy', () => {
    const leaf = leafOf('binary', [Uint8Array.of(1, 2), null, new Uint8Array(0)]);
    expect(leaf.values).toBeUndefined();
    const row = leaf.valueAt(0) as Uint8Array;
    expect(row).toEqual(Uint8Array.of(1, 2));
    row[0] = 9;
    expect(leaf.valueAt(0)).toEqual(Uint8Array.of(1, 2));
    leaf.pushValue('text');
    expect(leaf.values).toEqual([Uint8Array.of(1, 2), null, new Uint8Array(0), 'text']);
  });

  it('move to Value storage for a value past 2^53, keeping the slots before it', () => {
    const leaf = leafOf('long', [1n, null, MASKED]);
    expect(leaf.values).toBeUndefined();
    leaf.pushValue(2n ** 60n);
    leaf.pushNumber(5);
    expect(leaf.values).toEqual([1n, null, MASKED, 2n ** 60n, 5n]);
  });
});
