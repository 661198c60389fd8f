/**
 * The hotset's offsets: per topic-partition, every offset the broker still holds (`[low, high)`) that
 * the table's committed ranges do not. A gap between committed ranges (a batch still on its way, a
 * dead batch not yet redriven) is as hot as the tail past the last commit. Pure.
 */
import type { PartitionWatermarks, HotRange } from '../kafka/read-range.js';
import type { OffsetRanges } from '../table/offset-ranges.js';

/**
 * The complement of `committed` within each partition's `[low, high)`, as read ranges in partition
 * order (empty partitions are left out). Never throws.
 */
export function planHotRanges(
  committed: OffsetRanges,
  watermarks: readonly PartitionWatermarks[],
): HotRange[] {
  const out: HotRange[] = [];
  for (const { topic, partition, low, high } of watermarks) {
    let next = low;
    for (const [first, last] of committed.get(topic)?.get(partition) ?? []) {
      if (last < next) continue;
      if (first >= high) break;
      if (first > next) out.push({ topic, partition, from: next, toExclusive: first });
      next = last + 1n;
    }
    if (next < high) out.push({ topic, partition, from: next, toExclusive: high });
  }
  return out;
}

/** The hot ranges as inclusive `first-last` text per topic-partition (`{"t":{"0":"5-9"}}`), stable. */
export function describeHotRanges(ranges: readonly HotRange[]): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const r of ranges) {
    const parts = out[r.topic] ?? {};
    out[r.topic] = parts;
    const p = String(r.partition);
    const text = `${r.from}-${r.toExclusive - 1n}`;
    parts[p] = parts[p] ? `${parts[p]},${text}` : text;
  }
  return out;
}
