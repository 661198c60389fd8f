import { describe, expect, it } from 'vitest';
import { describeHotRanges, planHotRanges } from '../../../functions/core/live/hot-ranges.js';
import { decodeOffsetRanges } from '../../../functions/core/table/offset-ranges.js';

const marks = (topic: string, ...parts: [number, bigint, bigint][]) =>
  parts.map(([partition, low, high]) => ({ topic, partition, low, high }));

describe('planHotRanges: the complement of committed ranges up to the high watermark', () => {
  it('reads the tail past the last committed offset', () => {
    const committed = decodeOffsetRanges('{"t":{"0":"0-9"}}');
    expect(planHotRanges(committed, marks('t', [0, 0n, 15n]))).toEqual([
      { topic: 't', partition: 0, from: 10n, toExclusive: 15n },
    ]);
  });

  it('reads gaps between committed ranges as well as the tail', () => {
    const committed = decodeOffsetRanges('{"t":{"0":"0-4,8-9"}}');
    expect(planHotRanges(committed, marks('t', [0, 0n, 12n]))).toEqual([
      { topic: 't', partition: 0, from: 5n, toExclusive: 8n },
      { topic: 't', partition: 0, from: 10n, toExclusive: 12n },
    ]);
  });

  it('starts at the low watermark for a partition the table holds nothing of', () => {
    const committed = decodeOffsetRanges('{"t":{"0":"0-9"}}');
    expect(planHotRanges(committed, marks('t', [0, 0n, 10n], [1, 3n, 7n]))).toEqual([
      { topic: 't', partition: 1, from: 3n, toExclusive: 7n },
    ]);
  });

  it('skips committed offsets below the low watermark (deleted by retention)', () => {
    const committed = decodeOffsetRanges('{"t":{"0":"0-4,6-20"}}');
    expect(planHotRanges(committed, marks('t', [0, 10n, 25n]))).toEqual([
      { topic: 't', partition: 0, from: 21n, toExclusive: 25n },
    ]);
  });

  it('reads nothing when the table holds everything up to the high watermark', () => {
    const committed = decodeOffsetRanges('{"t":{"0":"0-9"}}');
    expect(planHotRanges(committed, marks('t', [0, 0n, 10n], [1, 0n, 0n]))).toEqual([]);
  });

  it('ignores committed ranges past the high watermark (a truncated partition)', () => {
    const committed = decodeOffsetRanges('{"t":{"0":"0-2,50-60"}}');
    expect(planHotRanges(committed, marks('t', [0, 0n, 10n]))).toEqual([
      { topic: 't', partition: 0, from: 3n, toExclusive: 10n },
    ]);
  });

  it('describes ranges as inclusive first-last text per partition', () => {
    expect(
      describeHotRanges([
        { topic: 't', partition: 0, from: 5n, toExclusive: 8n },
        { topic: 't', partition: 0, from: 10n, toExclusive: 11n },
        { topic: 'u', partition: 2, from: 0n, toExclusive: 3n },
      ]),
    ).toEqual({ t: { '0': '5-7,10-10' }, u: { '2': '0-2' } });
  });
});
