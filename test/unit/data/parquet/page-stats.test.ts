/**
 * A chunk's statistics taken from its pages' (page-stats.ts) are what chunk-stats.ts computes over
 * the chunk itself, and a dictionary chunk's page statistics taken from its indices are what it
 * computes over each page's values: random columns (nulls, NaN, ±0, long strings past the bound
 * limit, decimals) cut into random pages.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chunkStats } from '../../../../functions/core/data/parquet/write/chunk-stats.js';
import { tryDictionaryChunk } from '../../../../functions/core/data/parquet/write/dictionary.js';
import { shredBatch } from '../../../../functions/core/data/parquet/write/levels.js';
import { PageScratch } from '../../../../functions/core/data/parquet/write/pages.js';
import { toParquetSchema } from '../../../../functions/core/data/parquet/write/parquet-schema.js';
import {
  dictionaryPageStats,
  plainPageStats,
} from '../../../../functions/core/data/parquet/write/page-stats.js';
import type { Row } from '../../../../functions/core/spec/types.js';
import { schemaOf } from '../parquet-test-helpers.js';
import { batchOf } from './read-back.js';

const schema = schemaOf([
  { id: 1, name: 'i', required: false, type: 'int' },
  { id: 2, name: 'l', required: false, type: 'long' },
  { id: 3, name: 'f', required: false, type: 'float' },
  { id: 4, name: 'd', required: false, type: 'double' },
  { id: 5, name: 's', required: false, type: 'string' },
  { id: 6, name: 'dec', required: false, type: 'decimal(12, 2)' },
  { id: 7, name: 'b', required: false, type: 'boolean' },
  { id: 8, name: 'c', required: false, type: 'string' },
]);

const float = fc.oneof(
  fc.constantFrom(0, -0, Number.NaN, 1.5, -2.25),
  fc.float({ noDefaultInfinity: true, noNaN: true }),
);
const row = fc.record({
  i: fc.option(fc.integer(), { nil: null }),
  l: fc.option(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), { nil: null }),
  f: fc.option(float.map(Math.fround), { nil: null }),
  d: fc.option(float, { nil: null }),
  s: fc.option(fc.oneof(fc.string({ maxLength: 4 }), fc.string({ minLength: 60, maxLength: 70 })), {
    nil: null,
  }),
  dec: fc.option(fc.bigInt({ min: -(10n ** 11n), max: 10n ** 11n }), {
    nil: null,
  }),
  b: fc.option(fc.boolean(), { nil: null }),
  c: fc.option(fc.constantFrom('DE', 'FR', 'NL', 'é', ''), { nil: null }),
}) as fc.Arbitrary<Row>;

/** Sorted distinct cut points inside [0, n), as page starts, plus 0 and n. */
function breaksOf(n: number, cuts: number[]): number[] {
  return [...new Set([0, ...cuts.map((c) => c % Math.max(n, 1)), n])].sort((a, b) => a - b);
}

describe('page statistics', () => {
  it('a chunk merged from its pages has the stats of the chunk; each page those of its values', () => {
    fc.assert(
      fc.property(
        fc.array(row, { minLength: 1, maxLength: 60 }),
        fc.array(fc.nat(), { maxLength: 5 }),
        (rows, cuts) => {
          const leaves = shredBatch(toParquetSchema(schema), batchOf(schema, rows));
          const pages = breaksOf(rows.length, cuts);
          for (const levels of leaves) {
            const got = plainPageStats(levels, pages);
            expect(got.chunk).toEqual(chunkStats(levels, 0, rows.length));
            expect(got.pages).toEqual(pages.slice(1).map((to, p) => chunkStats(levels, pages[p], to)));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("a dictionary chunk's page stats from its indices are those of each page's values", () => {
    fc.assert(
      fc.property(
        fc.array(row, { minLength: 8, maxLength: 200 }),
        fc.integer({ min: 1, max: 40 }),
        (rows, pageRows) => {
          const leaves = shredBatch(toParquetSchema(schema), batchOf(schema, rows));
          const levels = leaves.find((l) => l.leaf.name === 'c')!;
          const dict = tryDictionaryChunk(
            levels,
            0,
            levels.count,
            'uncompressed',
            new PageScratch(),
            1 << 20,
            pageRows,
          );
          if (!dict) return;
          const got = dictionaryPageStats(levels, dict);
          expect(got).toEqual(
            dict.pageStarts.slice(1).map((to, p) => chunkStats(levels, dict.pageStarts[p], to)),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('bounds strings by unsigned byte order, however long the prefix they share', () => {
    const one = schemaOf([{ id: 1, name: 's', required: false, type: 'string' }]);
    fc.assert(
      fc.property(
        fc.string({ maxLength: 9 }),
        fc.array(fc.option(fc.string({ unit: 'binary', maxLength: 7 }), { nil: null }), {
          minLength: 1,
          maxLength: 40,
        }),
        (prefix, tails) => {
          // Prepare: values that share a prefix of 0 to 9 characters, so they differ past any word.
          const rows: Row[] = tails.map((t) => ({ s: t === null ? null : prefix + t }));
          const [levels] = shredBatch(toParquetSchema(one), batchOf(one, rows));
          const bytes = rows.flatMap((r) => (r.s === null ? [] : [Buffer.from(r.s as string)]));
          const sorted = bytes.sort(Buffer.compare);

          // Act
          const got = chunkStats(levels, 0, rows.length);

          // Assess
          const fits = sorted.length > 0 && sorted.every((b) => b.length <= 64);
          expect(got.min && Buffer.from(got.min)).toEqual(fits ? sorted[0] : undefined);
          expect(got.max && Buffer.from(got.max)).toEqual(fits ? sorted.at(-1) : undefined);
        },
      ),
      { numRuns: 300 },
    );
  });
});
