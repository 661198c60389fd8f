/**
 * The incremental range set verify tallies offsets with, against the plain answer (a Set of every
 * offset, and table/offset-ranges.ts mergeRanges), for offsets in any order; and range subtraction
 * against the same plain answer.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergeRanges, type OffsetRange } from '../../../functions/core/table/offset-ranges.js';
import { describeRanges, RangeSet, subtractRanges } from '../../../functions/core/verify/range-set.js';

const offsets = fc.array(fc.bigInt({ min: 0n, max: 40n }), { maxLength: 80 });

function plainRanges(set: Set<bigint>): OffsetRange[] {
  return mergeRanges([...set].map((o) => [o, o] as const));
}

describe('RangeSet', () => {
  it('holds exactly the offsets added, merged, and tells a repeat from a first', () => {
    fc.assert(
      fc.property(offsets, (list) => {
        // Prepare
        const set = new RangeSet();
        const seen = new Set<bigint>();
        for (const o of list) {
          // Act
          const fresh = set.add(o);
          // Assess
          expect(fresh).toBe(!seen.has(o));
          seen.add(o);
        }
        expect(set.toRanges()).toEqual(plainRanges(seen));
        for (let o = 0n; o <= 41n; o++) expect(set.has(o)).toBe(seen.has(o));
      }),
    );
  });

  it('keeps rising offsets in one range', () => {
    const set = new RangeSet();
    for (let o = 100n; o < 10_100n; o++) set.add(o);
    expect(set.size).toBe(1);
    expect(set.toRanges()).toEqual([[100n, 10_099n]]);
  });
});

describe('subtractRanges', () => {
  it('leaves the offsets of the first set that the second lacks', () => {
    fc.assert(
      fc.property(offsets, offsets, (a, b) => {
        const sa = new Set(a);
        const sb = new Set(b);
        const expected = plainRanges(new Set([...sa].filter((o) => !sb.has(o))));
        expect(subtractRanges(plainRanges(sa), plainRanges(sb))).toEqual(expected);
      }),
    );
  });

  it('describes ranges the way people read them', () => {
    expect(
      describeRanges([
        [3n, 5n],
        [9n, 9n],
      ]),
    ).toBe('3-5, 9');
    expect(
      describeRanges(
        [
          [1n, 1n],
          [3n, 3n],
          [5n, 5n],
        ],
        2,
      ),
    ).toBe('1, 3, … (3 ranges)');
  });
});
