/**
 * Offset bounds of a replay checked against what the table holds, before anything is produced. A bound
 * is per source partition; partitions it does not name replay whole. So a bound that selects nothing
 * (an end at or before its start, a partition the table does not hold, a start past the table's last
 * offset) does not replay less: it replays every other partition, and since the target topic is its own
 * checkpoint, a corrected rerun then skips rows that the wrong one produced out of order. Such bounds
 * are refused, saying what the table holds.
 */
import { ValidationError } from '../errors.js';
import type { OffsetRange } from '../table/offset-ranges.js';
import type { SourceOffsets } from '../table/source-offsets.js';
import type { ReplayBounds } from '../records/replay-records.js';

/** A source partition's committed ranges, per topic (the bounds name partitions of every source topic). */
type Held = { topic: string; ranges: readonly OffsetRange[] }[];

function heldBy(committed: SourceOffsets, partition: number): Held {
  const held: Held = [];
  for (const [topic, partitions] of committed) {
    const ranges = partitions.get(partition);
    if (ranges !== undefined && ranges.length > 0) held.push({ topic, ranges });
  }
  return held;
}

/** `t/0 offsets 0..99,200..299; u/0 offsets 5..9`. */
function describeHeld(held: Held, partition: number): string {
  return held
    .map(
      ({ topic, ranges }) =>
        `${topic}/${partition} offsets ${ranges.map(([a, b]) => `${a}..${b}`).join(',')}`,
    )
    .join('; ');
}

/** `partition P of every topic: …`, or what partitions the table holds at all. */
function describePartitions(committed: SourceOffsets): string {
  const partitions = new Set<number>();
  for (const parts of committed.values())
    for (const [p, ranges] of parts) if (ranges.length > 0) partitions.add(p);
  return partitions.size === 0
    ? 'the table holds no committed offsets'
    : `the table holds partitions ${[...partitions].sort((a, b) => a - b).join(', ')}`;
}

/**
 * @param committed the table's committed offsets (readCommittedOffsets)
 * @throws ValidationError (not retryable) naming the bound and what the table holds, for a bound whose
 *   end is at or before its start, a partition the table does not hold, a start past the table's last
 *   offset of that partition, or an end at or before its first or past one after its last
 */
export function checkReplayBounds(bounds: ReplayBounds, committed: SourceOffsets): void {
  const partitions = new Set([...(bounds.fromOffsets?.keys() ?? []), ...(bounds.toOffsets?.keys() ?? [])]);
  for (const partition of [...partitions].sort((a, b) => a - b)) {
    const from = bounds.fromOffsets?.get(partition);
    const to = bounds.toOffsets?.get(partition);
    if (from !== undefined && to !== undefined && to <= from) {
      throw new ValidationError(
        `--to-offsets ${partition}:${to} is not after --from-offsets ${partition}:${from}: partition ${partition} would replay nothing (--to-offsets is the offset to stop before)`,
      );
    }
    const held = heldBy(committed, partition);
    const flag =
      from !== undefined ? `--from-offsets ${partition}:${from}` : `--to-offsets ${partition}:${to}`;
    if (held.length === 0)
      throw new ValidationError(
        `${flag}: the table holds no partition ${partition} (${describePartitions(committed)})`,
      );
    let first = held[0].ranges[0][0];
    let last = held[0].ranges.at(-1)![1];
    for (const { ranges } of held) {
      if (ranges[0][0] < first) first = ranges[0][0];
      if (ranges.at(-1)![1] > last) last = ranges.at(-1)![1];
    }
    const holds = `the table holds ${describeHeld(held, partition)}`;
    if (from !== undefined && from > last)
      throw new ValidationError(
        `--from-offsets ${partition}:${from} is past the table's last offset: ${holds}`,
      );
    if (to !== undefined && to <= first)
      throw new ValidationError(
        `--to-offsets ${partition}:${to} stops before the table's first offset (it is the offset to stop before): ${holds}`,
      );
    if (to !== undefined && to > last + 1n)
      throw new ValidationError(
        `--to-offsets ${partition}:${to} is past the table's last offset (${partition}:${last + 1n} replays to the end): ${holds}`,
      );
  }
}
