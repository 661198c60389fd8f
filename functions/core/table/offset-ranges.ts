/**
 * Sets of Kafka offsets as sorted, merged, inclusive ranges per topic-partition, and their text in a
 * snapshot summary. A table's committed offsets are such a set (source-offsets.ts): batches arrive out
 * of order (an on-failure batch redriven after a fix, a backfill under the live tail, two writers on one
 * partition), so one high-water mark per partition would take every record below it for a replay.
 *
 * Summary text (`floe.committed-offsets`, `floe.redriven-offsets`): JSON, topic → partition → the
 * partition's ranges as `first-last` pairs joined by commas, in offset order:
 *
 *     {"orders":{"0":"0-41999,42100-50000","1":"0-9"}}
 *
 * A range of one offset is `7-7`, never a bare `7`: a bare number is the high-water format (one offset
 * `o` per partition, everything up to it committed), which reads as `0-o`. Ranges that overlap or touch are merged on every
 * change, so offsets committed in order stay one range per partition however many batches committed
 * them (~20 bytes per partition); each gap costs one more `,first-last` (two offsets, ~24 bytes at
 * 11 digits). The pair-array format of `floe.redriven-offsets` (`[["3","5"]]`, string pairs) still reads.
 */
import { ValidationError } from '../errors.js';

/** The offsets `first` to `last`, both included (`first <= last`). */
export type OffsetRange = readonly [first: bigint, last: bigint];

/** topic → partition → sorted ranges, no two of which overlap or touch. */
export type OffsetRanges = Map<string, Map<number, OffsetRange[]>>;

const byFirst = (a: OffsetRange, b: OffsetRange) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

/** Sorts ranges and merges those that overlap or touch (`[0,4]` and `[5,9]` become `[0,9]`). */
export function mergeRanges(ranges: readonly OffsetRange[]): OffsetRange[] {
  const sorted = [...ranges].sort(byFirst);
  const out: [bigint, bigint][] = [];
  for (const [first, last] of sorted) {
    const prev = out[out.length - 1];
    if (prev && first <= prev[1] + 1n) {
      if (last > prev[1]) prev[1] = last;
    } else out.push([first, last]);
  }
  return out;
}

/** The index of the range holding `offset` in sorted, disjoint ranges (binary search), or -1. */
export function rangeIndexOf(ranges: readonly OffsetRange[], offset: bigint): number {
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [first, last] = ranges[mid];
    if (offset < first) hi = mid - 1;
    else if (offset > last) lo = mid + 1;
    else return mid;
  }
  return -1;
}

/** Whether an offset lies in one of a partition's ranges. */
export function inRanges(ranges: readonly OffsetRange[] | undefined, offset: bigint): boolean {
  return ranges !== undefined && rangeIndexOf(ranges, offset) >= 0;
}

/** Whether a topic-partition's offset lies in the set. */
export function containsOffset(set: OffsetRanges, topic: string, partition: number, offset: bigint): boolean {
  return inRanges(set.get(topic)?.get(partition), offset);
}

/** The union of two sets (neither is changed). */
export function unionOffsets(a: OffsetRanges, b: OffsetRanges): OffsetRanges {
  const out: OffsetRanges = new Map([...a].map(([t, parts]) => [t, new Map(parts)]));
  for (const [topic, parts] of b) {
    const mine = out.get(topic) ?? new Map<number, OffsetRange[]>();
    for (const [p, ranges] of parts) mine.set(p, mergeRanges([...(mine.get(p) ?? []), ...ranges]));
    out.set(topic, mine);
  }
  return out;
}

/** The set holding exactly these offsets (negative ones, unknown offsets, are left out). */
export function offsetSetOf(
  offsets: Iterable<{ topic: string; partition: number; offset: bigint }>,
): OffsetRanges {
  const singles: OffsetRanges = new Map();
  for (const { topic, partition, offset } of offsets) {
    if (offset < 0n) continue;
    const parts = singles.get(topic) ?? new Map<number, OffsetRange[]>();
    const list = parts.get(partition) ?? [];
    list.push([offset, offset]);
    parts.set(partition, list);
    singles.set(topic, parts);
  }
  return unionOffsets(new Map(), singles);
}

/** Number of ranges of the set's most fragmented partition (0 for an empty set). */
export function mostRanges(set: OffsetRanges): number {
  let most = 0;
  for (const parts of set.values()) for (const ranges of parts.values()) most = Math.max(most, ranges.length);
  return most;
}

/** The summary text of a set (see the file comment); topics and partitions in order, so it is stable. */
export function encodeOffsetRanges(set: OffsetRanges): string {
  const out: Record<string, Record<string, string>> = {};
  for (const topic of [...set.keys()].sort()) {
    const parts = set.get(topic)!;
    const text: Record<string, string> = {};
    for (const p of [...parts.keys()].sort((a, b) => a - b)) {
      const ranges = parts.get(p)!;
      if (ranges.length > 0) text[String(p)] = ranges.map(([a, b]) => `${a}-${b}`).join(',');
    }
    if (Object.keys(text).length > 0) out[topic] = text;
  }
  return JSON.stringify(out);
}

const RANGE = /^(\d+)-(\d+)$/;
const OFFSET_TEXT = /^\d+$/;

function decodePartition(value: unknown, where: string): OffsetRange[] {
  if (typeof value === 'string') {
    // The high-water format: one offset, everything up to it committed.
    if (OFFSET_TEXT.test(value)) return [[0n, BigInt(value)]];
    if (value === '') return [];
    return mergeRanges(
      value.split(',').map((text) => {
        const m = RANGE.exec(text);
        if (!m || BigInt(m[1]) > BigInt(m[2]))
          throw new ValidationError(`${where}: bad offset range '${text}'`);
        return [BigInt(m[1]), BigInt(m[2])];
      }),
    );
  }
  // The pair-array format of floe.redriven-offsets: [["first","last"], ...].
  if (Array.isArray(value)) {
    return mergeRanges(
      value.map((pair: unknown) => {
        if (!Array.isArray(pair) || pair.length !== 2 || !pair.every((x) => OFFSET_TEXT.test(String(x)))) {
          throw new ValidationError(`${where}: bad offset range ${JSON.stringify(pair)}`);
        }
        return [BigInt(String(pair[0])), BigInt(String(pair[1]))];
      }),
    );
  }
  throw new ValidationError(`${where}: bad offsets ${JSON.stringify(value)}`);
}

/**
 * Reads a summary property shaped topic → partition → value (the committed offsets, their marks, the
 * closed epochs): `readPartition` reads each partition's value (`where` names it in messages) and
 * returns undefined for a partition that holds nothing.
 * @throws ValidationError for text that is not such an object (`what` names the property)
 */
export function decodeByTopicPartition<T>(
  text: string,
  what: string,
  readPartition: (value: unknown, where: string) => T | undefined,
): Map<string, Map<number, T>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new ValidationError(`${what}: not JSON`, { cause });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ValidationError(`${what}: not an object of topics`);
  }
  const out = new Map<string, Map<number, T>>();
  for (const [topic, parts] of Object.entries(parsed)) {
    if (typeof parts !== 'object' || parts === null || Array.isArray(parts)) {
      throw new ValidationError(`${what}: topic '${topic}' is not an object of partitions`);
    }
    const m = new Map<number, T>();
    for (const [p, value] of Object.entries(parts)) {
      const read = readPartition(value, `${what} ${topic}/${p}`);
      if (read !== undefined) m.set(Number(p), read);
    }
    out.set(topic, m);
  }
  return out;
}

/**
 * Reads a summary's offset ranges (any format floe wrote; see the file comment).
 * @throws ValidationError for text that is not one of them (`what` names the property in the message)
 */
export function decodeOffsetRanges(text: string, what = 'offsets'): OffsetRanges {
  return decodeByTopicPartition(text, what, (value, where) => {
    const ranges = decodePartition(value, where);
    return ranges.length > 0 ? ranges : undefined;
  });
}
