/**
 * Which gaps status reads from the broker (smallest first, within a budget of offsets, none past
 * retention), and what a gap found empty (transaction markers, compacted records) takes off the lag.
 */
import { describe, expect, it } from 'vitest';
import type { OffsetGap } from '../../../functions/core/status/offset-lag.js';
import { partitionLag } from '../../../functions/core/status/offset-lag.js';
import { chooseGaps, readableParts } from '../../../functions/core/status/probe-gaps.js';
import { withoutEmptyGaps } from '../../../functions/core/status/table-status.js';
import { decodeOffsetRanges } from '../../../functions/core/table/offset-ranges.js';

const gap = (first: bigint, last: bigint, expired: boolean | null = false, partition = 0): OffsetGap => ({
  topic: 't',
  partition,
  first,
  last,
  expired,
});

describe('chooseGaps', () => {
  it('takes the smallest gaps first within the budget, in their own order, leaving out expired ones', () => {
    const gaps = [gap(100n, 199n), gap(5n, 5n), gap(20n, 21n, true), gap(300n, 309n), gap(400n, 400n)];
    expect(chooseGaps(gaps, 12n)).toEqual([1, 3, 4]);
    expect(chooseGaps(gaps, 1_000n)).toEqual([0, 1, 3, 4]);
    expect(chooseGaps(gaps, 0n)).toEqual([]);
  });
});

describe('readableParts', () => {
  it('reads a gap retention has begun to drop from the log start, never from below it', () => {
    // Prepare: partition 0's log starts at 11, inside the gap 10-14; partition 1's at 0
    const lags = [
      { topic: 't', partition: 0, logStart: 11n },
      { topic: 't', partition: 1, logStart: 0n },
    ];
    const gaps = [gap(5n, 5n, true), gap(10n, 14n), gap(20n, 21n), gap(10n, 14n, false, 1)];
    // Act
    const parts = readableParts(gaps, lags);
    // Assess: only the straddling gap moves, to the log start (a read from 10 fails every gap's read)
    expect(parts.map((g) => [g.partition, g.first, g.last])).toEqual([
      [0, 5n, 5n],
      [0, 11n, 14n],
      [0, 20n, 21n],
      [1, 10n, 14n],
    ]);
    expect(readableParts(gaps, [])).toEqual(gaps);
  });
});

describe('withoutEmptyGaps', () => {
  // committed 0-4, 6-9 (a marker at 5), 12-19 (10-11 a real hole); high watermark 25
  const ranges = decodeOffsetRanges('{"t":{"0":"0-4,6-9,12-19"}}').get('t')!.get(0)!;

  it('takes the empty gaps off the lag, and only those', () => {
    const lag = partitionLag('t', 0, ranges, { low: 0n, high: 25n });
    expect(lag.lag).toBe(1n + 2n + 5n);
    const gaps = [
      { ...gap(5n, 5n), records: 0 },
      { ...gap(10n, 11n), records: 2 },
      { ...gap(10n, 11n, false, 1), records: 0 },
    ];
    expect(withoutEmptyGaps(lag, gaps).lag).toBe(2n + 5n);
  });

  it('takes off only the part above the log start, which is all the lag counted', () => {
    const lag = partitionLag('t', 0, ranges, { low: 11n, high: 25n });
    expect(lag).toMatchObject({ lag: 1n + 5n, expired: 2n });
    expect(withoutEmptyGaps(lag, [{ ...gap(10n, 11n), records: 0 }]).lag).toBe(5n);
  });

  it('leaves an unknown lag unknown', () => {
    const lag = partitionLag('t', 0, ranges);
    expect(withoutEmptyGaps(lag, [{ ...gap(5n, 5n), records: 0 }]).lag).toBeNull();
  });
});
