/**
 * The per-batch bookkeeping that walks every record (batch-offsets.ts' offsetsOf and splitDuplicates,
 * ingest-event.ts' batchIdOf, and unseen against committed ranges) remembers the last record's topic-partition instead of keying each
 * record: on generated batches — in ESM order, shuffled, with repeated offsets, unknown (-1) offsets and
 * topic-partitions that come back — they give what the record-by-record versions give (the former
 * code, below; splitDuplicatesByKey for the duplicates).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  offsetsOf,
  splitDuplicates,
  splitDuplicatesByKey,
  unseen,
} from '../../../functions/core/ingest/batch-offsets.js';
import { batchIdOf } from '../../../functions/core/ingest/ingest-event.js';
import type { RawRecord } from '../../../functions/core/records/esm-event.js';
import { containsOffset, type OffsetRange } from '../../../functions/core/table/offset-ranges.js';
import { computeBatchId, type SourceOffsets } from '../../../functions/core/table/source-offsets.js';
import { rawRecord } from '../mapping/support.js';

function formerOffsetsOf(records: readonly RawRecord[]): SourceOffsets {
  const spans = new Map<string, Map<number, [bigint, bigint]>>();
  for (const r of records) {
    if (r.offset < 0n) continue;
    const parts = spans.get(r.topic) ?? new Map<number, [bigint, bigint]>();
    const span = parts.get(r.partition);
    if (!span) parts.set(r.partition, [r.offset, r.offset]);
    else if (r.offset < span[0]) span[0] = r.offset;
    else if (r.offset > span[1]) span[1] = r.offset;
    spans.set(r.topic, parts);
  }
  return new Map([...spans].map(([t, parts]) => [t, new Map([...parts].map(([p, span]) => [p, [span]]))]));
}

function formerBatchIdOf(records: RawRecord[]): string {
  const ranges = new Map<string, { topic: string; partition: number; first: bigint; last: bigint }>();
  for (const r of records) {
    const key = `${r.topic}\u0000${r.partition}`;
    const range = ranges.get(key);
    if (!range) ranges.set(key, { topic: r.topic, partition: r.partition, first: r.offset, last: r.offset });
    else {
      if (r.offset < range.first) range.first = r.offset;
      if (r.offset > range.last) range.last = r.offset;
    }
  }
  return computeBatchId([...ranges.values()]);
}

const recordArb = fc
  .record({
    topic: fc.constantFrom('a', 'b'),
    partition: fc.integer({ min: 0, max: 2 }),
    offset: fc.oneof({ weight: 9, arbitrary: fc.bigInt({ min: 0n, max: 12n }) }, fc.constant(-1n)),
  })
  .map((r) => rawRecord(r));

/** ESM order: topic, partition, offset (repeats and -1 kept where they fall). */
const esmOrder = (a: RawRecord, b: RawRecord) =>
  a.topic !== b.topic
    ? a.topic < b.topic
      ? -1
      : 1
    : a.partition - b.partition || (a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0);

const batchArb = fc.tuple(fc.array(recordArb, { maxLength: 30 }), fc.boolean()).map(([records, sorted]) => {
  if (sorted) records.sort(esmOrder);
  return records;
});

/** Committed ranges of a few topic-partitions (sorted, disjoint, as the table keeps them). */
const committedArb = fc
  .array(
    fc.tuple(fc.constantFrom('a', 'b'), fc.integer({ min: 0, max: 2 }), fc.bigInt({ min: 0n, max: 12n })),
    {
      maxLength: 8,
    },
  )
  .map((singles) => {
    const set: SourceOffsets = new Map();
    for (const [t, p, o] of singles) {
      const parts = set.get(t) ?? new Map<number, OffsetRange[]>();
      set.set(t, parts);
      const ranges = parts.get(p) ?? [];
      if (!ranges.some(([f, l]) => o >= f - 1n && o <= l + 1n)) ranges.push([o, o + (o % 3n)]);
      ranges.sort((x, y) => (x[0] < y[0] ? -1 : 1));
      parts.set(p, ranges);
    }
    return set;
  });

describe('per-batch bookkeeping', () => {
  it('keeps the records outside the committed ranges, as containsOffset decides them', () => {
    fc.assert(
      fc.property(batchArb, committedArb, (records, committed) => {
        const want = records.filter(
          (r) => !(r.offset >= 0n && containsOffset(committed, r.topic, r.partition, r.offset)),
        );
        const got = unseen(records, committed);
        expect(got.length).toBe(want.length);
        expect(got.every((r, i) => r === want[i])).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('gives the spans, the duplicates and the batch id of the record-by-record code', () => {
    fc.assert(
      fc.property(batchArb, (records) => {
        expect(offsetsOf(records)).toEqual(formerOffsetsOf(records));
        // A record placed nowhere (offset -1) adds what it holds to the id (test below)
        if (records.every((r) => r.offset >= 0n)) expect(batchIdOf(records)).toBe(formerBatchIdOf(records));
        const got = splitDuplicates(records);
        const want = splitDuplicatesByKey(records);
        expect(got.unique).toEqual(want.unique);
        expect(got.unique.every((r, i) => r === want.unique[i])).toBe(true);
        expect(got.duplicates).toEqual(want.duplicates);
      }),
      { numRuns: 2000 },
    );
  });

  it('tells batches of records placed nowhere apart by what they hold, and knows a redelivery of one', () => {
    // Prepare: two batches of one dead letter each with no partition and no offset (-1, -1)
    const unplaced = (original: unknown) =>
      rawRecord({ partition: -1, offset: -1n, decodeError: 'x', original });
    const a = [unplaced({ partition: -1, offset: 0, value: 'YQ==' })];
    const b = [unplaced({ partition: 3, offset: 0, value: 'YQ==' })];
    const placed = [rawRecord({ partition: 0, offset: 5n })];

    // Act, Assess
    expect(batchIdOf(a)).not.toBe(batchIdOf(b));
    expect(batchIdOf(a)).toBe(batchIdOf([unplaced({ partition: -1, offset: 0, value: 'YQ==' })]));
    expect(batchIdOf([...placed, ...a])).not.toBe(batchIdOf([...placed, ...b]));
    expect(batchIdOf(placed)).toBe(formerBatchIdOf(placed));
  });

  it('finds a repeat in a topic-partition that comes back later in the batch', () => {
    const records = [
      rawRecord({ partition: 0, offset: 1n }),
      rawRecord({ partition: 1, offset: 1n }),
      rawRecord({ partition: 0, offset: 1n }),
    ];
    expect(splitDuplicates(records).duplicates.map((d) => d.record)).toEqual([records[2]]);
  });
});
