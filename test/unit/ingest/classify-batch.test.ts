/**
 * The one decision of what of a batch is new: fresh outside the committed ranges, replayed inside them
 * when the records match what the table kept of them, a conflict when they do not; and offset epochs,
 * which move a topic's committed state aside so a new history is checked against nothing.
 */
import { describe, expect, it } from 'vitest';
import { classifyBatch } from '../../../functions/core/ingest/classify-batch.js';
import { OffsetIdentityError } from '../../../functions/core/ingest/offset-identity-error.js';
import {
  currentEpoch,
  decodeOffsetEpochs,
  encodeOffsetEpochs,
  epochSuffix,
  mixedEpochs,
  rebaseEpochs,
} from '../../../functions/core/table/offset-epochs.js';
import { decodeOffsetMarks, marksOf, mergeMarks } from '../../../functions/core/table/offset-marks.js';
import { decodeOffsetRanges } from '../../../functions/core/table/offset-ranges.js';
import type { RawRecord } from '../../../functions/core/records/esm-event.js';
import { rawRecord } from '../mapping/support.js';

const enc = new TextEncoder();
const rec = (offset: number, value: string, timestamp = 1_000 + offset, partition = 0): RawRecord =>
  rawRecord({ offset: BigInt(offset), value: enc.encode(value), timestamp, partition });
const batch = (first: number, count: number, tag: string, t0 = 1_000) =>
  Array.from({ length: count }, (_, i) => rec(first + i, `${tag}-${first + i}`, t0 + i));

/** The committed state after `records` committed as one batch over `ranges`. */
function stateOf(ranges: string, ...batches: RawRecord[][]) {
  const offsets = decodeOffsetRanges(ranges);
  return { offsets, marks: mergeMarks(offsets, ...batches.map((b) => marksOf(b))) };
}

describe('classifyBatch', () => {
  it('keeps records outside the committed ranges as fresh, in batch order, and skips a true redelivery', () => {
    // Prepare: [0, 99] committed; a batch of [90, 109] redelivered with its first ten the same records
    const committed = batch(0, 100, 'old');
    const state = stateOf('{"orders":{"0":"0-99"}}', committed);
    const records = [...committed.slice(90), ...batch(100, 10, 'new', 1_100)];
    // Act
    const out = classifyBatch(records, state);
    // Assess
    expect(out.fresh.map((r) => r.offset)).toEqual(Array.from({ length: 10 }, (_, i) => BigInt(100 + i)));
    expect(out.replayed).toBe(10);
    expect(out.conflicts).toEqual([]);
  });

  it('finds another record at a marked offset by its hash, and at an unmarked one by a newer timestamp', () => {
    // Prepare: [0, 99] committed at timestamps 1000..1099
    const state = stateOf('{"orders":{"0":"0-99"}}', batch(0, 100, 'old'));
    // Act: the same offsets from a new history; one with the old timestamps, one with newer ones
    const sameTimes = classifyBatch(batch(0, 100, 'new'), state);
    const newer = classifyBatch(batch(10, 20, 'new', 5_000), state);
    // Assess: same timestamps: only the marked offsets (0, 99) can tell; newer: every record tells
    expect(sameTimes.conflicts.map((c) => c.record.offset)).toEqual([0n, 99n]);
    expect(sameTimes.conflicts[0].expected).toMatch(/^timestamp 1000, hash [0-9a-f]{8}$/);
    expect(sameTimes.conflicts[0].found).toMatch(/^timestamp 1000, hash [0-9a-f]{8}$/);
    expect(sameTimes.conflicts[0].found).not.toBe(sameTimes.conflicts[0].expected);
    expect(newer.conflicts).toHaveLength(20);
    expect(newer.conflicts[0]).toMatchObject({
      expected: 'a timestamp at most 1099 (the newest the range holds)',
      found: 'timestamp 5000',
    });
    expect(newer.fresh).toEqual([]);
  });

  it('checks a range committed before marks existed by its offsets alone, as before', () => {
    // Prepare: ranges without marks
    const state = { offsets: decodeOffsetRanges('{"orders":{"0":"0-99"}}'), marks: new Map() };
    // Act
    const out = classifyBatch(batch(0, 100, 'new', 9_000), state);
    // Assess
    expect(out).toMatchObject({ fresh: [], replayed: 100, conflicts: [] });
  });

  it('leaves offsets of a legacy range before its first mark unchecked by timestamp', () => {
    // Prepare: [0, 99] legacy, [100, 109] marked, merged into one range
    const offsets = decodeOffsetRanges('{"orders":{"0":"0-109"}}');
    const state = { offsets, marks: mergeMarks(offsets, marksOf(batch(100, 10, 'old', 1_100))) };
    // Act: a legacy record redelivered with a timestamp above the marked part's
    const out = classifyBatch([rec(50, 'legacy', 99_999)], state);
    // Assess
    expect(out).toMatchObject({ replayed: 1, conflicts: [] });
  });

  it('names the table, topic, partitions, offsets, what differs and the remedy in its error', () => {
    // Prepare
    const state = stateOf('{"orders":{"0":"0-99"}}', batch(0, 100, 'old'));
    const { conflicts } = classifyBatch(batch(0, 30, 'new', 7_000), state);
    // Act
    const error = new OffsetIdentityError('app.events', conflicts);
    // Assess
    expect(error.retryable).toBe(false);
    expect(error.partitions).toEqual({ orders: [0] });
    expect(error.message).toMatch(/^app\.events: records inside the table's committed offsets/);
    expect(error.message).toContain('orders/0 offsets 0-29 (30 records; offset 0: expected timestamp 1000');
    expect(error.message).toContain('and 28 more');
    expect(error.message).toContain(
      'floe rebase-offsets <catalog> --table app.events --topic orders --partitions 0',
    );
  });
});

describe('offset epochs', () => {
  const old = batch(0, 100, 'old');
  const state = {
    ...stateOf('{"orders":{"0":"0-99","1":"0-9"},"other":{"0":"0-5"}}', old),
    epochs: new Map(),
  };

  it("moves a topic's chosen partitions aside and leaves the rest, numbering the epochs", () => {
    // Act
    const rebased = rebaseEpochs(state, 'orders', [0, 7], 42n, 1_764_900_000_000);
    // Assess: partition 0 closed (7 had nothing to close); partition 1 and the other topic untouched
    expect(rebased.closed).toEqual([{ partition: 0, epoch: 2, ranges: [[0n, 99n]] }]);
    expect(rebased.offsets.get('orders')).toEqual(new Map([[1, [[0n, 9n]]]]));
    expect(rebased.offsets.get('other')).toEqual(state.offsets.get('other'));
    expect(rebased.marks.get('orders')?.has(0)).toBe(false);
    const closed = rebased.epochs.get('orders')!.get(0)!;
    expect(closed).toEqual([
      {
        epoch: 1,
        ranges: '0-99',
        marks: expect.stringMatching(/^0:1000:[0-9a-f]{8},99:1099:[0-9a-f]{8},1099$/),
        closedAfter: '42',
        closedAtMs: 1_764_900_000_000,
      },
    ]);
    expect(decodeOffsetMarks(`{"orders":{"0":"${closed[0].marks}"}}`)).toEqual(
      new Map([['orders', state.marks.get('orders')]]),
    );
    expect(currentEpoch(rebased.epochs, 'orders', 0)).toBe(2);
    expect(currentEpoch(rebased.epochs, 'orders', 1)).toBe(1);
    // Its text round-trips; a second rebase closes epoch 2
    expect(decodeOffsetEpochs(encodeOffsetEpochs(rebased.epochs))).toEqual(rebased.epochs);
    const again = rebaseEpochs(
      { ...rebased, offsets: decodeOffsetRanges('{"orders":{"0":"0-3"}}') },
      'orders',
      undefined,
      43n,
      1,
    );
    expect(
      again.epochs
        .get('orders')!
        .get(0)!
        .map((e) => e.epoch),
    ).toEqual([1, 2]);
  });

  it('gives the same offsets of a later epoch another batch id suffix, and epoch 1 none', () => {
    // Prepare
    const rebased = rebaseEpochs(state, 'orders', undefined, 42n, 1);
    const spans = decodeOffsetRanges('{"orders":{"0":"0-99"}}');
    // Act / Assess
    expect(epochSuffix(new Map(), spans)).toBe('');
    expect(epochSuffix(rebased.epochs, decodeOffsetRanges('{"other":{"0":"0-5"}}'))).toBe('');
    expect(epochSuffix(rebased.epochs, spans)).toMatch(/^-e[0-9a-f]{12}$/);
  });

  it('finds the partitions where a span of offsets holds rows of two epochs (what replay refuses)', () => {
    // Prepare: partition 0 rebased after [0, 99]; epoch 2 committed [0, 9] since
    const rebased = rebaseEpochs(state, 'orders', [0], 42n, 1);
    const offsets = decodeOffsetRanges('{"orders":{"0":"0-9","1":"0-9"}}');
    // Act / Assess
    expect(mixedEpochs(offsets, rebased.epochs)).toEqual([{ topic: 'orders', partition: 0, epochs: [1, 2] }]);
    expect(mixedEpochs(offsets, rebased.epochs, new Map([[0, 10n]]))).toEqual([]);
    expect(mixedEpochs(offsets, rebased.epochs, undefined, new Map([[0, 5n]]))).toHaveLength(1);
    expect(mixedEpochs(offsets, new Map())).toEqual([]);
  });

  it('refuses epochs text it did not write', () => {
    expect(() => decodeOffsetEpochs('{"t":{"0":[{"epoch":"x"}]}}')).toThrow(/bad epoch/);
    expect(() => decodeOffsetEpochs('{"t":{"0":{}}}')).toThrow(/not a list of epochs/);
  });
});
