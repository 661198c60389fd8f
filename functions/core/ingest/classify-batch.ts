/**
 * The one place that decides what of a batch is new. Every table kind's exactly-once round
 * (commit-batch.ts: appends, CDC, aggregates, a DLQ's letters) asks it once per base:
 *
 *   outside the committed ranges            → fresh: written and committed
 *   inside, and the record matches the marks → replayed: skipped (a redelivery takes effect once)
 *   inside, and it does not                  → a conflict: the topic's history changed under the table
 *
 * A record "matches" when nothing the table kept of its range (table/offset-marks.ts) says otherwise:
 * at a marked offset it has the mark's timestamp and hash; between the range's marks its timestamp is
 * not after the range's highest one. Only records at marked offsets are hashed, so a replay costs a
 * hash or two per range and a fresh batch none. A range committed without marks is a replay by its
 * offsets alone, as before marks existed.
 */
import { type RangeMarks, marksByRange, recordHash } from '../table/offset-marks.js';
import { type OffsetRange, rangeIndexOf } from '../table/offset-ranges.js';
import type { CommittedState, SourceOffsets } from '../table/source-offsets.js';
import type { RawRecord } from '../records/esm-event.js';
import { offsetNumber } from '../records/record-columns.js';
import { unread } from './batch-offsets.js';

const NO_RANGES = new Float64Array(0);
// Committed ranges are never changed once made (decoded, or merged anew), so their doubles are kept.
const boundsCache = new WeakMap<readonly OffsetRange[], Float64Array>();

/**
 * A partition's committed ranges as doubles, first and last of each in turn: a batch's records are
 * checked against them without a BigInt a record. A bound past 2^53 rounds, but never across an
 * offset that is exact as a double (rounding keeps the order, and such an offset's neighbours are
 * exact too), so it decides as the BigInt does for every offset offsetNumber gives.
 */
function boundsOf(ranges: readonly OffsetRange[] | undefined): Float64Array {
  if (ranges === undefined) return NO_RANGES;
  let bounds = boundsCache.get(ranges);
  if (bounds === undefined) {
    bounds = new Float64Array(ranges.length * 2);
    for (let k = 0; k < ranges.length; k++) {
      bounds[2 * k] = Number(ranges[k][0]);
      bounds[2 * k + 1] = Number(ranges[k][1]);
    }
    boundsCache.set(ranges, bounds);
  }
  return bounds;
}

/** rangeIndexOf on boundsOf (sorted, disjoint): binary search. */
function boundsIndexOf(bounds: Float64Array, n: number): number {
  let lo = 0;
  let hi = (bounds.length >> 1) - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (n < bounds[2 * mid]) hi = mid - 1;
    else if (n > bounds[2 * mid + 1]) lo = mid + 1;
    else return mid;
  }
  return -1;
}

/**
 * Whether records' offsets are in committed ranges, a topic-partition's ranges looked up when the
 * records move to another (a batch holds each one's records together).
 */
export class CommittedCheck {
  private topic: string | undefined = undefined;
  private partition = -1;
  /** The ranges of the topic-partition of the record last checked. */
  ranges: readonly OffsetRange[] | undefined = undefined;
  private bounds: Float64Array = NO_RANGES;

  constructor(private readonly committed: SourceOffsets) {}

  /**
   * The index of the committed range of its topic-partition (in `ranges` after the call) that holds
   * `record` (offsetNumber `n`, not unread), or -1.
   */
  rangeOf(n: number, record: RawRecord): number {
    if (record.topic !== this.topic || record.partition !== this.partition) {
      this.topic = record.topic;
      this.partition = record.partition;
      this.ranges = this.committed.get(this.topic)?.get(this.partition);
      this.bounds = boundsOf(this.ranges);
    }
    if (!Number.isNaN(n)) return boundsIndexOf(this.bounds, n);
    return this.ranges === undefined ? -1 : rangeIndexOf(this.ranges, record.offset);
  }

  /** Whether `record` (offsetNumber `n`, not unread) is in its topic-partition's committed ranges. */
  has(n: number, record: RawRecord): boolean {
    return this.rangeOf(n, record) >= 0;
  }
}

/** A record inside a committed range that is not the record the table holds there. */
export interface IdentityConflict {
  record: RawRecord;
  /** What the table kept, and what the record has instead. */
  expected: string;
  found: string;
}

/** A batch's records against a table's committed state. */
export interface ClassifiedBatch {
  /** Outside the committed ranges: to write, in batch order. */
  fresh: RawRecord[];
  /** Inside them and matching: skipped. */
  replayed: number;
  conflicts: IdentityConflict[];
}

/** What in `record` contradicts its range's marks, or undefined when nothing does. */
function contradiction(record: RawRecord, marks: RangeMarks): IdentityConflict | undefined {
  const offset = record.offset;
  const mark =
    offset === marks.first.offset ? marks.first : offset === marks.last.offset ? marks.last : undefined;
  if (mark !== undefined) {
    const hash = recordHash(record);
    if (record.timestamp === mark.timestamp && hash === mark.hash) return undefined;
    return {
      record,
      expected: `timestamp ${mark.timestamp}, hash ${mark.hash}`,
      found: `timestamp ${record.timestamp}, hash ${hash}`,
    };
  }
  // Offsets before the first mark may hold records committed before marks existed (no bound known).
  if (offset < marks.first.offset || offset > marks.last.offset) return undefined;
  if (record.timestamp <= marks.maxTimestamp) return undefined;
  return {
    record,
    expected: `a timestamp at most ${marks.maxTimestamp} (the newest the range holds)`,
    found: `timestamp ${record.timestamp}`,
  };
}

/** The marks of each committed range of a topic-partition, aligned with its ranges (made once per batch). */
class MarksLookup {
  private ranges: readonly OffsetRange[] | undefined = undefined;
  private aligned: (RangeMarks | undefined)[] = [];

  constructor(private readonly state: Pick<CommittedState, 'marks'>) {}

  /** The marks of range `k` of `ranges` (the record's topic-partition's), if it has some. */
  of(record: RawRecord, ranges: readonly OffsetRange[], k: number): RangeMarks | undefined {
    if (ranges !== this.ranges) {
      this.ranges = ranges;
      this.aligned = marksByRange(ranges, this.state.marks.get(record.topic)?.get(record.partition));
    }
    return this.aligned[k];
  }
}

/**
 * Decides which of a batch's records are fresh, replayed or conflicting against a table's committed
 * state (see the file comment). A record whose offset could not be read (-1) is always fresh: it carries
 * a decode error and goes to the DLQ; a replay of its batch is recognised by the batch id.
 */
export function classifyBatch(
  records: RawRecord[],
  state: Pick<CommittedState, 'offsets' | 'marks'>,
): ClassifiedBatch {
  let fresh: RawRecord[] | undefined;
  let replayed = 0;
  const conflicts: IdentityConflict[] = [];
  const check = new CommittedCheck(state.offsets);
  const marks = state.marks.size === 0 ? undefined : new MarksLookup(state);
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    const n = offsetNumber(r);
    const k = unread(n, r) ? -1 : check.rangeOf(n, r);
    if (k < 0) {
      fresh?.push(r);
      continue;
    }
    // The first committed one: the records before it are all fresh.
    fresh ??= records.slice(0, i);
    const rangeMarks = marks?.of(r, check.ranges!, k);
    const conflict = rangeMarks && contradiction(r, rangeMarks);
    if (conflict) conflicts.push(conflict);
    else replayed++;
  }
  return { fresh: fresh ?? records.slice(), replayed, conflicts };
}

/** The records whose offsets are outside the committed ranges of their topic-partition (offsets alone). */
export function unseen(records: RawRecord[], committed: SourceOffsets): RawRecord[] {
  return classifyBatch(records, { offsets: committed, marks: new Map() }).fresh;
}

/** Whether any record's offset is in the committed ranges of its topic-partition. */
export function overlaps(records: RawRecord[], committed: SourceOffsets): boolean {
  const check = new CommittedCheck(committed);
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    const n = offsetNumber(r);
    if (!unread(n, r) && check.has(n, r)) return true;
  }
  return false;
}
