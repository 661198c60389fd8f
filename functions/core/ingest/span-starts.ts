/**
 * Closing the holes Kafka never delivers. A batch commits the span from its first to its last offset
 * per partition (offsetsOf), so holes inside a batch are covered; a hole *between* two batches
 * (a transaction's commit marker, compacted-away or aborted records right after a batch's last record)
 * stayed uncovered forever and split the committed ranges at every one of them — on a transactional
 * topic, one range per transaction.
 *
 * A Kafka consumer (`floe run`, `floe backfill`) knows more than the ESM event shows: the offset its
 * fetch started at. Every offset from there to the batch's first record was fetched and found to hold
 * no record a read-committed consumer delivers. So the event source hands a "span starts at X" hint
 * per partition, and the batch claims [X, last] instead of [first, last] — but only when the table
 * already covers X - 1, that is, when the claim extends a committed range forward and never creates
 * a range of its own. Why that is safe, i.e. why no other writer can hold a record in [X, first - 1]:
 * - kafkajs leaves out only offsets below the fetch start (not claimed), control records (no data),
 *   and records of aborted transactions (not data for a read-committed reader, which floe and the ESM
 *   are). Any writer reading that log reads the same non-records there.
 * - A record that existed when another writer read it and was gone when this consumer fetched past it
 *   can only have been compacted away (a later record of the same key, which the table gets, supersedes
 *   it) or deleted by retention — which removes the log's head, and then the fetch position is reset
 *   elsewhere (kafkajs's fetch start is the reset one), so X - 1 is not where the table's range ends.
 * - Requiring X - 1 to be covered keeps a wrong hint (a seek, a reset to the latest offset, a new
 *   consumer starting at a timestamp) from claiming offsets nobody read: such a fetch starts away from
 *   the table's ranges, and the batch commits its own span only, as without the hint.
 * Committed ranges only grow, so a claim checked against one base holds for every later one.
 * The Lambda's ESM passes no positions: its batches commit their spans, as before.
 */
import { containsOffset, type OffsetRange } from '../table/offset-ranges.js';
import type { SourceOffsets } from '../table/source-offsets.js';

/** topic → partition → the offset a consumer's fetch for the batch's records started at. */
export type SpanStarts = Map<string, Map<number, bigint>>;

/** Past this many committed ranges in one partition, the table is fragmented enough to tell someone. */
export const FRAGMENTED_RANGES = 100;

/**
 * The batch's spans (one range per partition, as offsetsOf gives them) with each span's start moved
 * back to the hinted fetch start where that is sound (see the file comment). Neither input changes.
 */
export function extendToSpanStarts(
  spans: SourceOffsets,
  starts: SpanStarts | undefined,
  committed: SourceOffsets,
): SourceOffsets {
  if (!starts || starts.size === 0) return spans;
  const out: SourceOffsets = new Map();
  for (const [topic, parts] of spans) {
    const mine = new Map<number, OffsetRange[]>();
    for (const [partition, ranges] of parts) {
      const start = starts.get(topic)?.get(partition);
      const first = ranges[0]?.[0];
      if (
        ranges.length === 1 &&
        first !== undefined &&
        start !== undefined &&
        start > 0n &&
        start < first &&
        containsOffset(committed, topic, partition, start - 1n)
      ) {
        mine.set(partition, [[start, ranges[0][1]]]);
      } else mine.set(partition, ranges);
    }
    out.set(topic, mine);
  }
  return out;
}

/**
 * A warning when committing `batch` onto `before` leaves a partition of the batch with more than
 * `limit` ranges, and more than it had: each one costs summary space and lookup time in every later
 * commit. Said only when the count grows, so a table that stays fragmented is not reported every batch.
 */
export function fragmentationWarning(
  before: SourceOffsets,
  after: SourceOffsets,
  batch: SourceOffsets,
  limit = FRAGMENTED_RANGES,
): string | undefined {
  const grown: string[] = [];
  for (const [topic, parts] of batch) {
    for (const partition of parts.keys()) {
      const now = after.get(topic)?.get(partition)?.length ?? 0;
      const was = before.get(topic)?.get(partition)?.length ?? 0;
      if (now > limit && now > was) grown.push(`${topic}/${partition}: ${now} ranges`);
    }
  }
  if (grown.length === 0) return undefined;
  return (
    `committed offsets are fragmented (${grown.join(', ')}; more than ${limit}): batches arrive with ` +
    'holes between them that nothing fills (out-of-order or partial redrives, or transaction markers and ' +
    'compaction under the Lambda, which passes no fetch positions). Exactly-once still holds; the summary grows'
  );
}
