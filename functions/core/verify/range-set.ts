/**
 * A set of offsets kept as sorted, disjoint, non-touching inclusive ranges, built one offset at a time
 * in any order: what `floe verify --deep` holds per topic-partition instead of a set of every offset,
 * so its memory grows with the gaps between the offsets rows hold, not with the rows. Offsets arrive
 * mostly rising within a file (one range extended at its end), so the common add is O(1); an offset
 * that lands between ranges costs a binary search and one splice. Offsets that arrive interleaved (a
 * table partitioned by a hash of a column: each file holds every n-th offset) go through `addSorted`
 * in batches instead, one linear merge per batch rather than a splice per offset.
 *
 * table/offset-ranges.ts has the immutable form (sort and merge a whole list); this is its incremental
 * twin, and `toRanges` gives that form back.
 */
import type { OffsetRange } from '../table/offset-ranges.js';

export class RangeSet {
  private firsts: bigint[] = [];
  private lasts: bigint[] = [];

  /** The number of ranges (the memory the set takes). */
  get size(): number {
    return this.firsts.length;
  }

  /** Adds `offset`; false when it was already in the set. Never throws. */
  add(offset: bigint): boolean {
    const n = this.firsts.length;
    // The common case: the next offset of the last range.
    if (n > 0 && offset === this.lasts[n - 1] + 1n) {
      this.lasts[n - 1] = offset;
      return true;
    }
    const i = this.lastStartingAtOrBefore(offset);
    if (i >= 0 && offset <= this.lasts[i]) return false;
    const joinsLeft = i >= 0 && offset === this.lasts[i] + 1n;
    const joinsRight = i + 1 < n && this.firsts[i + 1] === offset + 1n;
    if (joinsLeft && joinsRight) {
      this.lasts[i] = this.lasts[i + 1];
      this.firsts.splice(i + 1, 1);
      this.lasts.splice(i + 1, 1);
    } else if (joinsLeft) {
      this.lasts[i] = offset;
    } else if (joinsRight) {
      this.firsts[i + 1] = offset;
    } else {
      this.firsts.splice(i + 1, 0, offset);
      this.lasts.splice(i + 1, 0, offset);
    }
    return true;
  }

  /**
   * Adds `sorted` (ascending, repeats allowed) in one merge, linear in the ranges and the offsets;
   * `repeat` is called for each offset the set held already, or that `sorted` holds more than once
   * (once per extra occurrence). Never throws.
   */
  addSorted(sorted: readonly bigint[], repeat: (offset: bigint) => void): void {
    if (sorted.length === 0) return;
    const firsts: bigint[] = [];
    const lasts: bigint[] = [];
    const push = (first: bigint, last: bigint) => {
      const n = lasts.length;
      if (n > 0 && first <= lasts[n - 1] + 1n) {
        if (last > lasts[n - 1]) lasts[n - 1] = last;
      } else {
        firsts.push(first);
        lasts.push(last);
      }
    };
    let i = 0;
    let previous: bigint | undefined;
    for (const offset of sorted) {
      while (i < this.firsts.length && this.lasts[i] < offset) {
        push(this.firsts[i], this.lasts[i]);
        i++;
      }
      if (offset === previous || (i < this.firsts.length && this.firsts[i] <= offset)) repeat(offset);
      else push(offset, offset);
      previous = offset;
    }
    for (; i < this.firsts.length; i++) push(this.firsts[i], this.lasts[i]);
    this.firsts = firsts;
    this.lasts = lasts;
  }

  /** Whether `offset` is in the set. Never throws. */
  has(offset: bigint): boolean {
    const i = this.lastStartingAtOrBefore(offset);
    return i >= 0 && offset <= this.lasts[i];
  }

  /** The ranges, sorted. Never throws. */
  toRanges(): OffsetRange[] {
    return this.firsts.map((f, i) => [f, this.lasts[i]] as const);
  }

  /** Index of the last range whose first offset is ≤ `offset`, or -1. */
  private lastStartingAtOrBefore(offset: bigint): number {
    let lo = 0;
    let hi = this.firsts.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.firsts[mid] <= offset) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }
}

/** The offsets of `a` that are not in `b` (both sorted and disjoint), as sorted ranges. Never throws. */
export function subtractRanges(a: readonly OffsetRange[], b: readonly OffsetRange[]): OffsetRange[] {
  const out: OffsetRange[] = [];
  let j = 0;
  for (const [first, last] of a) {
    let from = first;
    while (j < b.length && b[j][1] < from) j++;
    let k = j;
    while (from <= last && k < b.length && b[k][0] <= last) {
      if (b[k][0] > from) out.push([from, b[k][0] - 1n]);
      from = b[k][1] + 1n;
      k++;
    }
    if (from <= last) out.push([from, last]);
  }
  return out;
}

/** How many offsets the ranges hold. Never throws. */
export function countOffsets(ranges: readonly OffsetRange[]): bigint {
  let n = 0n;
  for (const [first, last] of ranges) n += last - first + 1n;
  return n;
}

/** `3-5,9-9` as people read it: `3-5, 9`, at most `max` ranges then `…`. Never throws. */
export function describeRanges(ranges: readonly OffsetRange[], max = 5): string {
  const shown = ranges.slice(0, max).map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`));
  return ranges.length > max ? `${shown.join(', ')}, … (${ranges.length} ranges)` : shown.join(', ');
}
