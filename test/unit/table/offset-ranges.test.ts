/**
 * Offset range sets: merging, membership, the summary text (golden strings, the format of before
 * ranges, malformed text) and how big the text gets.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import {
  containsOffset,
  decodeOffsetRanges,
  encodeOffsetRanges,
  inRanges,
  mergeRanges,
  mostRanges,
  type OffsetRange,
  type OffsetRanges,
  offsetSetOf,
  unionOffsets,
} from '../../../functions/core/table/offset-ranges.js';
import { decodeOffsets, encodeOffsets, mergeOffsets } from '../../../functions/core/table/source-offsets.js';

const one = (topic: string, partition: number, ranges: OffsetRange[]): OffsetRanges =>
  new Map([[topic, new Map([[partition, ranges]])]]);

describe('mergeRanges', () => {
  it('merges ranges that overlap, touch or nest, and sorts them', () => {
    expect(
      mergeRanges([
        [20n, 29n],
        [0n, 4n],
        [5n, 9n],
        [22n, 25n],
        [40n, 40n],
        [8n, 12n],
      ]),
    ).toEqual([
      [0n, 12n],
      [20n, 29n],
      [40n, 40n],
    ]);
  });

  it('keeps a gap of one offset', () => {
    expect(
      mergeRanges([
        [0n, 4n],
        [6n, 9n],
      ]),
    ).toEqual([
      [0n, 4n],
      [6n, 9n],
    ]);
  });
});

describe('membership', () => {
  const ranges: OffsetRange[] = [
    [0n, 4n],
    [10n, 10n],
    [20n, 29n],
  ];
  it('is inclusive at both ends and false in the gaps', () => {
    const inside = [0n, 4n, 10n, 20n, 29n].map((o) => inRanges(ranges, o));
    const outside = [5n, 9n, 11n, 19n, 30n, -1n].map((o) => inRanges(ranges, o));
    expect(inside.every(Boolean)).toBe(true);
    expect(outside.some(Boolean)).toBe(false);
    expect(inRanges(undefined, 0n)).toBe(false);
    expect(containsOffset(one('t', 3, ranges), 't', 3, 25n)).toBe(true);
    expect(containsOffset(one('t', 3, ranges), 't', 4, 25n)).toBe(false);
  });
});

describe('summary text', () => {
  it('writes first-last pairs joined by commas, topics and partitions in order', () => {
    // Prepare
    const set: OffsetRanges = new Map([
      [
        'orders',
        new Map<number, OffsetRange[]>([
          [1, [[0n, 9n]]],
          [
            0,
            [
              [0n, 41999n],
              [42100n, 50000n],
            ],
          ],
        ]),
      ],
      ['audit', new Map([[0, [[7n, 7n]] as OffsetRange[]]])],
    ]);

    // Act
    const text = encodeOffsetRanges(set);

    // Assess: one offset is `7-7`, never a bare `7` (that is the format of before ranges)
    expect(text).toBe('{"audit":{"0":"7-7"},"orders":{"0":"0-41999,42100-50000","1":"0-9"}}');
    expect(decodeOffsetRanges(text)).toEqual(set);
  });

  it('reads the single high-water offset of before ranges as [0, offset]', () => {
    const old = decodeOffsets('{"events":{"0":"96","3":"0"}}');
    expect(old.get('events')?.get(0)).toEqual([[0n, 96n]]);
    expect(old.get('events')?.get(3)).toEqual([[0n, 0n]]);
    // and commits on top of it write ranges
    expect(encodeOffsets(mergeOffsets(old, one('events', 0, [[200n, 299n]])))).toBe(
      '{"events":{"0":"0-96,200-299","3":"0-0"}}',
    );
  });

  it('reads the redriven-offsets format of before ranges (arrays of string pairs)', () => {
    expect(decodeOffsetRanges('{"t":{"0":[["3","5"],["6","9"]]}}')).toEqual(one('t', 0, [[3n, 9n]]));
  });

  it('merges ranges written unmerged or out of order (another writer)', () => {
    expect(decodeOffsetRanges('{"t":{"0":"10-19,0-9,30-31"}}')).toEqual(
      one('t', 0, [
        [0n, 19n],
        [30n, 31n],
      ]),
    );
  });

  it('refuses text floe did not write, naming the property', () => {
    for (const text of [
      'not json',
      '[]',
      '{"t":{"0":"5-3"}}',
      '{"t":{"0":"a-b"}}',
      '{"t":{"0":"-1"}}',
      '{"t":{"0":5}}',
      '{"t":"0-5"}',
      '{"t":{"0":[["1"]]}}',
    ]) {
      expect(() => decodeOffsetRanges(text, 'floe.committed-offsets'), text).toThrow(ValidationError);
    }
    expect(() => decodeOffsetRanges('{"t":{"0":"5-3"}}', 'floe.committed-offsets')).toThrow(
      /floe.committed-offsets t\/0: bad offset range '5-3'/,
    );
  });
});

describe('size of the summary text', () => {
  it('stays one range per partition for years of batches committed in order', () => {
    // Prepare: 10,000 batches of 1,000 records on each of 12 partitions, each merged in as committed
    let set: OffsetRanges = new Map();
    for (let batch = 0n; batch < 10_000n; batch++) {
      const spans = new Map<number, OffsetRange[]>();
      for (let p = 0; p < 12; p++) spans.set(p, [[batch * 1000n, batch * 1000n + 999n]]);
      set = unionOffsets(set, new Map([['orders', spans]]));
    }

    // Act
    const text = encodeOffsetRanges(set);

    // Assess: ~19 bytes a partition, however many batches
    expect(mostRanges(set)).toBe(1);
    expect(text.length).toBeLessThan(12 * 20 + 20);
  });

  it('costs one `,first-last` per gap', () => {
    // 1,000 gaps of one offset among 11-digit offsets: about 24 bytes each
    const ranges: OffsetRange[] = [];
    for (let i = 0n; i <= 1000n; i++)
      ranges.push([10_000_000_000n + i * 100n, 10_000_000_000n + i * 100n + 98n]);
    const text = encodeOffsetRanges(one('orders', 0, ranges));
    expect(text.length).toBeGreaterThan(1001 * 23);
    expect(text.length).toBeLessThan(1001 * 24 + 30);
  });
});

describe('range sets against a model set of offsets', () => {
  const offsetsArb = fc.array(
    fc.record({ partition: fc.nat({ max: 2 }), offset: fc.bigInt({ min: 0n, max: 60n }) }),
    { maxLength: 40 },
  );

  it('hold exactly the offsets added, merged, whatever the order of the unions', () => {
    fc.assert(
      fc.property(fc.array(offsetsArb, { maxLength: 6 }), (batches) => {
        // Prepare: the model is a plain set of `partition:offset`
        const model = new Set(batches.flat().map((r) => `${r.partition}:${r.offset}`));

        // Act: each batch a set of its own, unions in order, then round-tripped through the text
        let set: OffsetRanges = new Map();
        for (const b of batches) set = unionOffsets(set, offsetSetOf(b.map((r) => ({ ...r, topic: 't' }))));
        const read = decodeOffsetRanges(encodeOffsetRanges(set));

        // Assess
        for (let p = 0; p < 3; p++) {
          for (let o = 0n; o <= 61n; o++) {
            expect(containsOffset(read, 't', p, o)).toBe(model.has(`${p}:${o}`));
          }
          const ranges = read.get('t')?.get(p) ?? [];
          ranges.forEach(([a, b], i) => {
            expect(a <= b).toBe(true);
            if (i > 0) expect(ranges[i - 1][1] + 1n < a).toBe(true);
          });
        }
      }),
    );
  });
});
