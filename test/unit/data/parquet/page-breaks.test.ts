/**
 * pageBreaks (plain-values.ts) skips visiting the levels when an upper bound on a page's bytes shows
 * only its row limit can end it: held equal here to the level-by-level rule it stands in for, on
 * random columns (nulls, lists, empty lists, long and short strings) and limits either side of the
 * values' sizes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type LeafLevels, shredBatch } from '../../../../functions/core/data/parquet/write/levels.js';
import {
  estimateBytes,
  pageBreaks,
  plainWidth,
} from '../../../../functions/core/data/parquet/write/plain-values.js';
import { toParquetSchema } from '../../../../functions/core/data/parquet/write/parquet-schema.js';
import type { Row } from '../../../../functions/core/spec/types.js';
import { schemaOf } from '../parquet-test-helpers.js';
import { batchOf } from './read-back.js';

const schema = schemaOf([
  { id: 1, name: 'i', required: false, type: 'int' },
  { id: 2, name: 'l', required: true, type: 'long' },
  { id: 3, name: 's', required: false, type: 'string' },
  { id: 4, name: 'b', required: false, type: 'boolean' },
  {
    id: 5,
    name: 'tags',
    required: false,
    type: { type: 'list', 'element-id': 6, element: 'string', 'element-required': false },
  },
  {
    id: 7,
    name: 'nums',
    required: false,
    type: { type: 'list', 'element-id': 8, element: 'int', 'element-required': true },
  },
  {
    id: 9,
    name: 'st',
    required: false,
    type: { type: 'struct', fields: [{ id: 10, name: 'x', required: false, type: 'string' }] },
  },
]);

const text = fc.oneof(fc.string({ maxLength: 3 }), fc.string({ minLength: 20, maxLength: 40 }));
const row = fc.record({
  i: fc.option(fc.integer(), { nil: null }),
  l: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
  s: fc.option(text, { nil: null }),
  b: fc.option(fc.boolean(), { nil: null }),
  tags: fc.option(fc.array(fc.option(text, { nil: null }), { maxLength: 4 }), { nil: null }),
  nums: fc.option(fc.array(fc.integer(), { maxLength: 4 }), { nil: null }),
  st: fc.option(fc.record({ x: fc.option(text, { nil: null }) }), { nil: null }),
}) as fc.Arbitrary<Row>;

/** The rule itself: cut at the first row start where the page holds pageBytes or pageRows rows. */
function referenceBreaks(levels: LeafLevels, pageBytes: number, pageRows: number): number[] {
  const { defs, reps, slots } = levels;
  const width = plainWidth(levels);
  const offsets = levels.data.valueOffsets as Int32Array;
  const breaks = [0];
  let size = 0;
  let rows = 0;
  for (let k = 0; k < levels.count; k++) {
    const rowStart = reps === null || reps[k] === 0;
    if ((size >= pageBytes || rows >= pageRows) && k > 0 && rowStart) {
      breaks.push(k);
      size = 0;
      rows = 0;
    }
    if (rowStart) rows++;
    if (defs !== null && defs[k] !== levels.leaf.maxDef) continue;
    const s = slots === null ? k : slots[k];
    size += width >= 0 ? width : 4 + offsets[s + 1] - offsets[s];
  }
  breaks.push(levels.count);
  return breaks;
}

describe('pageBreaks', () => {
  it('cuts pages where the level-by-level rule cuts them, whichever limit ends each page', () => {
    fc.assert(
      fc.property(
        fc.array(row, { minLength: 1, maxLength: 80 }),
        fc.oneof(fc.constantFrom(1, 8, 40, 41, 300, 1 << 20), fc.integer({ min: 1, max: 200 })),
        fc.oneof(fc.integer({ min: 1, max: 25 }), fc.constant(Number.POSITIVE_INFINITY)),
        (rows, pageBytes, pageRows) => {
          // Prepare
          const leaves = shredBatch(toParquetSchema(schema), batchOf(schema, rows));

          for (const levels of leaves) {
            // Act
            const got = pageBreaks(levels, 0, levels.count, pageBytes, pageRows);

            // Assess: a chunk estimated to fit one page is one page (the estimate's own rule);
            // otherwise every cut is the rule's.
            const fits = levels.count <= pageRows && estimateBytes(levels, 0, levels.count) <= pageBytes;
            expect(got).toEqual(fits ? [0, levels.count] : referenceBreaks(levels, pageBytes, pageRows));
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it('cuts a list page at the row where its bytes reach the limit, short of the last level', () => {
    // Prepare: 6 ints in 3 rows; 20 bytes are reached after 5 levels, where row 3 starts.
    const rows: Row[] = [[1, 2, 3], [4, 5], [6]].map((nums) => ({ l: 0n, nums }));
    const levels = shredBatch(toParquetSchema(schema), batchOf(schema, rows)).find(
      (l) => l.leaf.name === 'nums.element',
    ) as LeafLevels;

    // Act / Assess
    expect(pageBreaks(levels, 0, levels.count, 20, 10)).toEqual([0, 5, 6]);
    expect(pageBreaks(levels, 0, levels.count, 21, 10)).toEqual([0, 6]);
    expect(pageBreaks(levels, 0, levels.count, 1 << 20, 2)).toEqual([0, 5, 6]);
  });
});
