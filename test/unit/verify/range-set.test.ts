/**
 * The incremental range set verify tallies offsets with, against the plain answer (a Set of every
 * offset, and table/offset-ranges.ts mergeRanges), for offsets in any order; and range subtraction
 * against the same plain answer.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergeRanges, type OffsetRange } from '../../../functions/core/table/offset-ranges.js';
import { OffsetTally } from '../../../functions/core/verify/offset-tally.js';
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

describe('RangeSet.addSorted', () => {
  it('merges a sorted batch, naming each offset held already or repeated in the batch', () => {
    fc.assert(
      fc.property(offsets, offsets, (before, batch) => {
        // Prepare
        const set = new RangeSet();
        for (const o of before) set.add(o);
        const seen = new Set(before);
        const expectedRepeats: bigint[] = [];
        const sorted = [...batch].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        for (const o of sorted) {
          if (seen.has(o)) expectedRepeats.push(o);
          seen.add(o);
        }
        // Act
        const repeats: bigint[] = [];
        set.addSorted(sorted, (o) => repeats.push(o));
        // Assess
        expect(repeats).toEqual(expectedRepeats);
        expect(set.toRanges()).toEqual(plainRanges(seen));
      }),
    );
  });
});

describe('OffsetTally', () => {
  it('tallies offsets that arrive interleaved, as a hash-partitioned table gives them, over several batches', () => {
    // Prepare: 200,000 offsets read bucket by bucket (offset o in bucket o*7919 mod 16), offsets 10-19 twice
    const tally = new OffsetTally({ topic: ['t'], partition: ['p'], offset: ['o'] });
    // Act
    for (let bucket = 0; bucket < 16; bucket++) {
      for (let o = 0; o < 200_000; o++) if ((o * 7919) % 16 === bucket) tally.add('t', 0, BigInt(o));
    }
    for (let o = 10; o < 20; o++) tally.add('t', 0, BigInt(o));
    // Assess
    const partition = tally.partitions.get('t')?.get(0);
    expect(tally.heldRanges('t', 0)).toEqual([[0n, 199_999n]]);
    expect(partition?.repeated.toRanges()).toEqual([[10n, 19n]]);
    expect(partition?.extraRows).toBe(10n);
  });

  it('counts every extra row at a repeated offset', () => {
    fc.assert(
      fc.property(offsets, (list) => {
        const tally = new OffsetTally({ topic: ['t'], partition: ['p'], offset: ['o'] });
        for (const o of list) tally.add('t', 0, o);
        const distinct = new Set(list);
        const twice = new Set(list.filter((o, i) => list.indexOf(o) !== i));
        const partition = tally.partitions.get('t')?.get(0);
        expect(partition?.held.toRanges() ?? []).toEqual(plainRanges(distinct));
        expect(partition?.repeated.toRanges() ?? []).toEqual(plainRanges(twice));
        expect(partition?.extraRows ?? 0n).toBe(BigInt(list.length - distinct.size));
      }),
    );
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
