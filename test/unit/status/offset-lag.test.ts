/**
 * The lag of a partition from its committed ranges and the broker's watermarks, its gaps, and what
 * status says when the two disagree (a recreated topic, a deleted one, a hostile answer).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { computeLags, countHeld, findGaps, partitionLag } from '../../../functions/core/status/offset-lag.js';
import {
  decodeOffsetRanges,
  mergeRanges,
  type OffsetRange,
} from '../../../functions/core/table/offset-ranges.js';

const ranges = (text: string): OffsetRange[] => decodeOffsetRanges(`{"t":{"0":"${text}"}}`).get('t')!.get(0)!;

describe('partitionLag', () => {
  it('counts the tail past the last committed offset', () => {
    expect(partitionLag('t', 0, ranges('0-9'), { low: 0n, high: 15n })).toMatchObject({
      lag: 5n,
      expired: 0n,
    });
  });

  it('counts holes between committed ranges as well as the tail', () => {
    expect(partitionLag('t', 0, ranges('0-4,8-9'), { low: 0n, high: 12n }).lag).toBe(3n + 2n);
  });

  it('is 0 when the table holds everything up to the high watermark', () => {
    expect(partitionLag('t', 0, ranges('0-9'), { low: 0n, high: 10n }).lag).toBe(0n);
  });

  it('does not count offsets before the first commit (a table started at latest)', () => {
    expect(partitionLag('t', 0, ranges('100-109'), { low: 0n, high: 115n }).lag).toBe(5n);
  });

  it('counts from the log start what retention kept, and what it dropped as expired', () => {
    // committed 0-4 and 20-29; retention dropped everything below 15: 5-14 are lost to the table
    const lag = partitionLag('t', 0, ranges('0-4,20-29'), { low: 15n, high: 40n });
    expect(lag).toMatchObject({ lag: 5n + 10n, expired: 10n, logStart: 15n, highWatermark: 40n });
  });

  it('lags by all the broker holds of a partition the table never committed', () => {
    expect(partitionLag('t', 3, [], { low: 7n, high: 30n })).toMatchObject({
      lag: 23n,
      firstCommitted: null,
      lastCommitted: null,
    });
  });

  it('says the lag is unknown, and why, when the table committed beyond the high watermark (topic recreated)', () => {
    const lag = partitionLag('t', 0, ranges('0-999'), { low: 0n, high: 50n });
    expect(lag.lag).toBeNull();
    expect(lag.problem).toMatch(/committed up to offset 999 .*ends before 50.*rebase-offsets/);
  });

  it('calls a log start above the high watermark a problem, not a negative lag', () => {
    const lag = partitionLag('t', 0, ranges('0-9'), { low: 20n, high: 10n });
    expect(lag.lag).toBeNull();
    expect(lag.problem).toMatch(/log start 20 and high watermark 10/);
  });

  it('knows no lag without watermarks, only the ranges', () => {
    expect(partitionLag('t', 0, ranges('3-9'))).toMatchObject({
      lag: null,
      expired: null,
      firstCommitted: 3n,
      lastCommitted: 9n,
    });
  });

  it('equals a count offset by offset for any ranges below the high watermark', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(60), fc.nat(8)), { maxLength: 6 }),
        fc.nat(30),
        fc.nat(40),
        (pairs, low, extra) => {
          const held = mergeRanges(pairs.map(([a, n]) => [BigInt(a), BigInt(a + n)] as const));
          const last = held.length ? Number(held[held.length - 1][1]) : -1;
          const high = Math.max(last + 1, low) + extra;
          const first = held.length ? Number(held[0][0]) : low;
          let expected = 0;
          for (let o = Math.max(first, low); o < high; o++) {
            if (!held.some(([a, b]) => BigInt(o) >= a && BigInt(o) <= b)) expected++;
          }
          expect(partitionLag('t', 0, held, { low: BigInt(low), high: BigInt(high) }).lag).toBe(
            BigInt(expected),
          );
        },
      ),
      { seed: 20261205 },
    );
  });
});

describe('countHeld', () => {
  it('counts only the part of each range inside the window', () => {
    expect(countHeld(ranges('0-9,20-29'), 5n, 25n)).toBe(5n + 5n);
    expect(countHeld(ranges('0-9'), 10n, 20n)).toBe(0n);
  });
});

describe('findGaps', () => {
  it('lists the holes between ranges, and whether retention dropped them', () => {
    expect(findGaps('t', 0, ranges('0-4,10-19,25-30'), { low: 8n })).toEqual([
      { topic: 't', partition: 0, first: 5n, last: 9n, expired: false },
      { topic: 't', partition: 0, first: 20n, last: 24n, expired: false },
    ]);
    expect(findGaps('t', 0, ranges('0-4,10-19'), { low: 12n })[0].expired).toBe(true);
  });

  it('sees no hole in touching or overlapping ranges of a hostile summary', () => {
    const hostile: OffsetRange[] = [
      [0n, 9n],
      [5n, 12n],
      [13n, 20n],
    ];
    expect(findGaps('t', 0, hostile)).toEqual([]);
  });

  it('has nothing to say of retention without watermarks', () => {
    expect(findGaps('t', 0, ranges('0-4,10-19'))[0].expired).toBeNull();
  });
});

describe('computeLags', () => {
  it('joins committed partitions and broker partitions, sorted, with a problem for a partition the broker lacks', () => {
    const committed = decodeOffsetRanges('{"b":{"0":"0-9"},"a":{"1":"0-4,8-9","5":"0-3"}}');
    const { partitions, gaps } = computeLags(committed, [
      { topic: 'a', partition: 0, low: 0n, high: 3n },
      { topic: 'a', partition: 1, low: 0n, high: 12n },
      { topic: 'b', partition: 0, low: 0n, high: 10n },
    ]);
    expect(partitions.map((p) => [p.topic, p.partition, p.lag, p.problem ?? null])).toEqual([
      ['a', 0, 3n, null],
      ['a', 1, 5n, null],
      ['a', 5, null, expect.stringMatching(/no such partition/)],
      ['b', 0, 0n, null],
    ]);
    expect(gaps).toEqual([{ topic: 'a', partition: 1, first: 5n, last: 7n, expired: false }]);
  });

  it('reports the ranges alone, without problems, when Kafka was not asked', () => {
    const { partitions } = computeLags(decodeOffsetRanges('{"a":{"0":"0-9"}}'), undefined);
    expect(partitions).toEqual([expect.objectContaining({ topic: 'a', lag: null, highWatermark: null })]);
    expect(partitions[0].problem).toBeUndefined();
  });

  it('reports nothing for a table without committed offsets (summary missing) and no topics asked', () => {
    expect(computeLags(new Map(), [])).toEqual({ partitions: [], gaps: [] });
  });
});
