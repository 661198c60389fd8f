/**
 * How far behind the broker a table is, per topic-partition, from its committed offset ranges alone
 * (table/source-offsets.ts) and the broker's watermarks. Pure: no Kafka, no storage.
 *
 * The lag of a partition is the number of offsets in `[from, high)` that the table's committed ranges
 * do not hold, where `high` is the broker's high watermark (the offset the next record gets) and
 * `from` is the later of the broker's log start and the table's first committed offset (the log start
 * when the table holds nothing of the partition). Offsets before the table's first commit are not lag:
 * a table started at `latest` never wanted them. Holes between committed ranges count, the tail past
 * the last range counts. Offsets the table never held that retention already dropped (below the log
 * start, above the first commit) cannot be read any more: they are counted apart, as `expired`.
 *
 * A committed range reaching the high watermark or beyond means the broker's log is not the one the
 * table committed from (topic deleted and recreated, cluster replaced, unclean leader election): the
 * lag is then unknown (null) and the partition carries a `problem` saying so.
 */
import type { PartitionWatermarks } from '../kafka/read-range.js';
import type { OffsetRange } from '../table/offset-ranges.js';

/** A hole between two committed ranges of one partition: offsets `first` to `last`, both included. */
export interface OffsetGap {
  topic: string;
  partition: number;
  first: bigint;
  last: bigint;
  /** Whether retention already dropped all of it from the broker (only known with watermarks). */
  expired: boolean | null;
}

/** What the table's ranges and (when read) the broker's watermarks say of one partition. */
export interface PartitionLag {
  topic: string;
  partition: number;
  /** The committed ranges of the current offset epoch, sorted and merged. */
  committed: readonly OffsetRange[];
  firstCommitted: bigint | null;
  lastCommitted: bigint | null;
  /** The broker's log start (low watermark); null without Kafka. */
  logStart: bigint | null;
  /** The broker's high watermark; null without Kafka. */
  highWatermark: bigint | null;
  /** Offsets in `[from, high)` the table does not hold (see the file comment); null when unknown. */
  lag: bigint | null;
  /** Offsets above the first commit that retention dropped before the table took them; null without Kafka. */
  expired: bigint | null;
  /** Why the lag is unknown although the watermarks were read. */
  problem?: string;
}

/** Offsets of `[from, toExclusive)` that `ranges` (sorted, disjoint) hold. Never throws. */
export function countHeld(ranges: readonly OffsetRange[], from: bigint, toExclusive: bigint): bigint {
  let held = 0n;
  for (const [first, last] of ranges) {
    const a = first > from ? first : from;
    const b = last + 1n < toExclusive ? last + 1n : toExclusive;
    if (b > a) held += b - a;
  }
  return held;
}

/** The holes between consecutive committed ranges of a partition. Never throws. */
export function findGaps(
  topic: string,
  partition: number,
  ranges: readonly OffsetRange[],
  watermarks?: Pick<PartitionWatermarks, 'low'>,
): OffsetGap[] {
  const out: OffsetGap[] = [];
  for (let i = 1; i < ranges.length; i++) {
    const first = ranges[i - 1][1] + 1n;
    const last = ranges[i][0] - 1n;
    if (last < first) continue; // touching or overlapping ranges of a hostile summary: no hole
    out.push({
      topic,
      partition,
      first,
      last,
      expired: watermarks === undefined ? null : last < watermarks.low,
    });
  }
  return out;
}

/**
 * The lag of one partition (see the file comment); `watermarks` undefined when Kafka was not asked.
 * Never throws: watermarks that contradict each other (low above high) give a problem, not an error.
 */
export function partitionLag(
  topic: string,
  partition: number,
  ranges: readonly OffsetRange[],
  watermarks?: Pick<PartitionWatermarks, 'low' | 'high'>,
): PartitionLag {
  const firstCommitted = ranges.length > 0 ? ranges[0][0] : null;
  const lastCommitted = ranges.length > 0 ? ranges[ranges.length - 1][1] : null;
  const base: PartitionLag = {
    topic,
    partition,
    committed: ranges,
    firstCommitted,
    lastCommitted,
    logStart: watermarks?.low ?? null,
    highWatermark: watermarks?.high ?? null,
    lag: null,
    expired: null,
  };
  if (watermarks === undefined) return base;
  const { low, high } = watermarks;
  if (low < 0n || high < low) {
    return { ...base, problem: `the broker answered log start ${low} and high watermark ${high}` };
  }
  if (lastCommitted !== null && lastCommitted >= high) {
    return {
      ...base,
      problem:
        `the table committed up to offset ${lastCommitted} but the broker's log ends before ${high}: ` +
        'not the log the table committed from (topic recreated, cluster replaced?); see floe rebase-offsets',
    };
  }
  // Not Math.max: it takes numbers, and offsets are 64-bit.
  const from = firstCommitted !== null && firstCommitted > low ? firstCommitted : low;
  const lag = high - from - countHeld(ranges, from, high);
  const expired =
    firstCommitted !== null && low > firstCommitted
      ? low - firstCommitted - countHeld(ranges, firstCommitted, low)
      : 0n;
  return { ...base, lag, expired };
}

/**
 * Every partition the table committed or the broker has (for the topics asked), sorted by topic and
 * partition, with its lag and its gaps. Partitions the broker has but the table never committed lag by
 * all the broker holds of them. Never throws.
 */
export function computeLags(
  committed: ReadonlyMap<string, ReadonlyMap<number, readonly OffsetRange[]>>,
  watermarks: readonly PartitionWatermarks[] | undefined,
): { partitions: PartitionLag[]; gaps: OffsetGap[] } {
  const keyOf = (topic: string, partition: number) => `${topic}\u0000${partition}`;
  const marks = new Map((watermarks ?? []).map((w) => [keyOf(w.topic, w.partition), w]));
  const seen = new Map<string, { topic: string; partition: number }>();
  for (const [topic, parts] of committed)
    for (const partition of parts.keys()) seen.set(keyOf(topic, partition), { topic, partition });
  for (const w of watermarks ?? []) seen.set(keyOf(w.topic, w.partition), w);
  const order = [...seen.values()].sort((a, b) =>
    a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1,
  );
  const partitions: PartitionLag[] = [];
  const gaps: OffsetGap[] = [];
  for (const { topic, partition } of order) {
    const ranges = committed.get(topic)?.get(partition) ?? [];
    // Asked for watermarks but the broker has no such partition (topic deleted): a partition of its
    // own problem, never a lag computed against nothing.
    const w = marks.get(keyOf(topic, partition));
    const lag = partitionLag(topic, partition, ranges, w);
    partitions.push(
      watermarks !== undefined && w === undefined
        ? { ...lag, problem: 'the broker has no such partition (topic deleted, or another cluster?)' }
        : lag,
    );
    gaps.push(...findGaps(topic, partition, ranges, w));
  }
  return { partitions, gaps };
}
