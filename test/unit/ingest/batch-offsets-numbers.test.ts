/**
 * A decoded batch's own checks read its records' offsets as numbers (record-columns.ts offsetNumber),
 * not as a BigInt a record: the order of the records, the batch id, the spans committed, the records
 * not yet committed, the overlap with a concurrent commit and the repeat check. They must decide as
 * the BigInt offsets decide, also for plain records past 2^53 (the most a double holds exactly),
 * committed ranges past it, unread offsets (-1) and batches out of order; and the batch's records
 * must never make their BigInt for them.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  offsetsOf,
  overlaps,
  splitDuplicates,
  splitDuplicatesByKey,
  unseen,
} from '../../../functions/core/ingest/batch-offsets.js';
import { batchIdOf } from '../../../functions/core/ingest/ingest-event.js';
import { decodeEsmEvent, type RawRecord } from '../../../functions/core/records/esm-event.js';
import { BatchRecord } from '../../../functions/core/records/record-columns.js';
import { containsOffset, type OffsetRange } from '../../../functions/core/table/offset-ranges.js';
import { computeBatchId, type SourceOffsets } from '../../../functions/core/table/source-offsets.js';

const EXACT = 2n ** 53n;

/** Small offsets, offsets around 2^53 and near the int64 end (the last two as text past 2^53). */
const offsetArb = fc.oneof(
  fc.bigInt({ min: 0n, max: 6n }),
  fc.bigInt({ min: EXACT - 3n, max: EXACT + 3n }),
  fc.bigInt({ min: 2n ** 63n - 3n, max: 2n ** 63n - 1n }),
);

const recordArb = fc.record({
  topic: fc.constantFrom('a', 'b'),
  partition: fc.integer({ min: 0, max: 1 }),
  offset: fc.option(offsetArb, { freq: 8, nil: undefined }), // undefined: unreadable (-1)
});

/** An ESM event of the records (a safe offset as a number, others as text), decoded, in some order. */
const batchArb = fc
  .tuple(fc.array(recordArb, { maxLength: 24 }), fc.array(fc.double({ noNaN: true })), fc.boolean())
  .map(([specs, keys, shuffle]) => {
    const records: Record<string, unknown[]> = {};
    for (const s of specs) {
      const offset = s.offset === undefined ? 'x' : s.offset < EXACT ? Number(s.offset) : String(s.offset);
      const group = `${s.topic}-${s.partition}`;
      records[group] = [...(records[group] ?? []), { topic: s.topic, partition: s.partition, offset }];
    }
    const decoded = decodeEsmEvent({ eventSource: 'aws:kafka', records }).records.slice();
    if (shuffle) {
      const order = decoded.map((r, i) => ({ r, k: keys[i] ?? i }));
      order.sort((x, y) => x.k - y.k);
      return order.map((o) => o.r);
    }
    return decoded;
  });

const committedArb = fc
  .array(fc.tuple(fc.constantFrom('a', 'b'), fc.integer({ min: 0, max: 1 }), offsetArb, fc.nat(2)), {
    maxLength: 6,
  })
  .map((singles) => {
    const set: SourceOffsets = new Map();
    for (const [t, p, first, width] of singles) {
      const parts = set.get(t) ?? new Map<number, OffsetRange[]>();
      set.set(t, parts);
      const ranges = parts.get(p) ?? [];
      const last = first + BigInt(width);
      if (!ranges.some(([f, l]) => first <= l + 1n && last >= f - 1n)) ranges.push([first, last]);
      ranges.sort((x, y) => (x[0] < y[0] ? -1 : 1));
      parts.set(p, ranges);
    }
    return set;
  });

/** Each topic-partition's lowest and highest offset among `records`, in order of first appearance. */
function extremes(records: readonly RawRecord[]) {
  const out = new Map<string, { topic: string; partition: number; first: bigint; last: bigint }>();
  for (const { topic, partition, offset } of records) {
    const e = out.get(`${topic}/${partition}`);
    if (!e) out.set(`${topic}/${partition}`, { topic, partition, first: offset, last: offset });
    else {
      if (offset < e.first) e.first = offset;
      if (offset > e.last) e.last = offset;
    }
  }
  return [...out.values()];
}

const isCommitted = (r: RawRecord, committed: SourceOffsets) =>
  r.offset >= 0n && containsOffset(committed, r.topic, r.partition, r.offset);

describe('a batch checked by offset numbers', () => {
  afterEach(() => vi.restoreAllMocks());

  it('decides as the BigInt offsets decide', () => {
    fc.assert(
      fc.property(batchArb, committedArb, (records, committed) => {
        // Act, Assess
        const fresh = unseen(records, committed);
        const want = records.filter((r) => !isCommitted(r, committed));
        expect(fresh.length).toBe(want.length);
        expect(fresh.every((r, i) => r === want[i])).toBe(true);
        expect(overlaps(records, committed)).toBe(records.some((r) => isCommitted(r, committed)));
        const spans: SourceOffsets = new Map();
        for (const e of extremes(records.filter((r) => r.offset >= 0n))) {
          const parts = spans.get(e.topic) ?? new Map<number, OffsetRange[]>();
          spans.set(e.topic, parts.set(e.partition, [[e.first, e.last]]));
        }
        expect(offsetsOf(records)).toEqual(spans);
        // A record placed nowhere (offset -1) adds what it holds to the id (batch-offsets.test.ts)
        if (records.every((r) => r.offset >= 0n))
          expect(batchIdOf(records)).toBe(computeBatchId(extremes(records)));
        const got = splitDuplicates(records);
        const byKey = splitDuplicatesByKey(records);
        expect(got.unique.length).toBe(byKey.unique.length);
        expect(got.unique.every((r, i) => r === byKey.unique[i])).toBe(true);
        expect(got.duplicates).toEqual(byKey.duplicates);
      }),
      { numRuns: 1500 },
    );
  });

  it('sorts a decoded event by topic, partition and offset, past 2^53 too', () => {
    // Prepare: offsets a double cannot tell apart, delivered out of order
    const records = {
      'a-0': [
        { partition: 0, offset: String(EXACT + 1n) },
        { partition: 0, offset: Number(EXACT - 1n) },
        { partition: 0, offset: String(EXACT) },
        { partition: 0, offset: 3 },
      ],
    };
    // Act
    const decoded = decodeEsmEvent({ eventSource: 'aws:kafka', records }).records;
    // Assess
    expect(decoded.map((r) => r.offset)).toEqual([3n, EXACT - 1n, EXACT, EXACT + 1n]);
  });

  it('makes no BigInt for a decoded record unless its offset is read', () => {
    // Prepare
    const records = { 'a-0': [0, 1, 2].map((offset) => ({ partition: 0, offset })), 'a-1': [{ offset: 5 }] };
    const reads = vi.spyOn(BatchRecord.prototype, 'offset', 'get');
    const committed: SourceOffsets = new Map([['a', new Map<number, OffsetRange[]>([[0, [[1n, 1n]]]])]]);
    // Act
    const decoded = decodeEsmEvent({ eventSource: 'aws:kafka', records }).records;
    const batchId = batchIdOf(decoded);
    const fresh = unseen(decoded, committed);
    const spans = offsetsOf(decoded);
    const { unique } = splitDuplicates(fresh);
    const overlap = overlaps(decoded, committed);
    // Assess
    expect(reads).not.toHaveBeenCalled();
    expect(decoded.every((r) => r instanceof BatchRecord)).toBe(true);
    expect(fresh.map((r) => r.offset)).toEqual([0n, 2n, 5n]);
    expect(unique).toHaveLength(3);
    expect(overlap).toBe(true);
    expect(spans.get('a')?.get(1)).toEqual([[5n, 5n]]);
    expect(batchId).toBe(computeBatchId(extremes(decoded)));
  });
});
