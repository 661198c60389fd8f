/**
 * A deletion vector: the set of deleted row positions of one data file, as Iceberg v3 keeps it — a
 * 64-bit Roaring bitmap, i.e. one 32-bit Roaring bitmap per distinct high 32 bits of the positions
 * (its "key"), each a set of 16-bit-keyed containers. deletion-vector-blob.ts turns it into the
 * `deletion-vector-v1` blob and back.
 */
import { ValidationError } from '../errors.js';
import { RoaringContainer } from './roaring-container.js';
import type { Bitmap32 } from './roaring-portable.js';

/**
 * The largest position Iceberg Java's RoaringPositionBitmap accepts (key 2^31 − 2, low bits all set):
 * its bitmap array is indexed by key, so key 2^31 − 1 cannot exist there, and a vector holding one
 * would be unreadable by Spark, Flink and Trino. Floe keeps to the same bound, writing and reading.
 */
export const MAX_POSITION = (0x7ffffffen << 32n) | 0xffffffffn;
/** The largest key (high 32 bits) a vector may hold; see MAX_POSITION. */
export const MAX_KEY = 0x7ffffffe;

const TWO_32 = 2 ** 32;

export class DeletionVector {
  private readonly bitmaps = new Map<number, Bitmap32>();
  private count = 0;
  private lastKey = -1;
  private lastHigh = -1;
  private lastContainer: RoaringContainer | undefined;

  /** The number of deleted positions. */
  get cardinality(): number {
    return this.count;
  }

  /**
   * Marks a row position deleted; whether it was not already.
   * @throws ValidationError for a negative, fractional or unsafe number, or a position past MAX_POSITION
   */
  add(position: bigint | number): boolean {
    const low = split(position);
    const key = splitKey;
    const high = low >>> 16;
    let container = this.lastContainer;
    // Positions mostly arrive in order, many to a container: skip both map lookups then.
    if (container === undefined || key !== this.lastKey || high !== this.lastHigh) {
      let bitmap = this.bitmaps.get(key);
      if (bitmap === undefined) {
        bitmap = new Map();
        this.bitmaps.set(key, bitmap);
      }
      container = bitmap.get(high);
      if (container === undefined) {
        container = new RoaringContainer();
        bitmap.set(high, container);
      }
      this.lastKey = key;
      this.lastHigh = high;
      this.lastContainer = container;
    }
    const added = container.add(low & 0xffff);
    if (added) this.count++;
    return added;
  }

  /**
   * Marks every position of `positions` deleted (a position delete file's `pos` column for this data
   * file, in any order; duplicates are fine).
   * @throws ValidationError as add does
   */
  addAll(positions: Iterable<bigint | number>): void {
    for (const position of positions) this.add(position);
  }

  /** Adds every position of `other` (the previous vector of the same data file, say). */
  merge(other: DeletionVector): void {
    for (const [key, bitmap] of other.bitmaps) {
      for (const [high, container] of bitmap) {
        const base = key * TWO_32 + high * 65536;
        if (Number.isSafeInteger(base + 65535)) for (const v of container.values()) this.add(base + v);
        else for (const v of container.values()) this.add((BigInt(key) << 32n) | BigInt(high * 65536 + v));
      }
    }
  }

  /**
   * Whether a row position is deleted.
   * @throws ValidationError as add does
   */
  has(position: bigint | number): boolean {
    const low = split(position);
    return (
      this.bitmaps
        .get(splitKey)
        ?.get(low >>> 16)
        ?.has(low & 0xffff) ?? false
    );
  }

  /** The deleted positions in ascending order. */
  *positions(): Generator<bigint> {
    for (const [key, bitmap] of sortedEntries(this.bitmaps)) {
      const high = BigInt(key) << 32n;
      for (const [container16, container] of sortedEntries(bitmap)) {
        const base = container16 * 65536;
        for (const v of container.values()) yield high | BigInt(base + v);
      }
    }
  }

  /** The 32-bit bitmaps by key, ascending, empty ones left out (for serializing). */
  bitmapsInOrder(): [number, Bitmap32][] {
    return sortedEntries(this.bitmaps).filter(([, b]) => [...b.values()].some((c) => c.cardinality > 0));
  }

  /** A vector over bitmaps read from a file; `key`s must be distinct (the reader checks they ascend). */
  static fromBitmaps(bitmaps: Iterable<[number, Bitmap32]>): DeletionVector {
    const vector = new DeletionVector();
    for (const [key, bitmap] of bitmaps) {
      vector.bitmaps.set(key, bitmap);
      for (const container of bitmap.values()) vector.count += container.cardinality;
    }
    return vector;
  }
}

/** The key (high 32 bits) of the position split last; set by split, beside the low bits it returns. */
let splitKey = 0;

/** The low 32 bits of a position, its key left in splitKey (no pair allocated per position). */
function split(position: bigint | number): number {
  if (typeof position === 'number') {
    if (!Number.isSafeInteger(position) || position < 0) {
      throw new ValidationError(`a row position must be a non-negative integer, got ${position}`);
    }
    if (position < TWO_32) {
      splitKey = 0;
      return position;
    }
    splitKey = Math.floor(position / TWO_32);
    return position % TWO_32;
  }
  if (position < 0n || position > MAX_POSITION) {
    throw new ValidationError(
      `a row position must be between 0 and ${MAX_POSITION} (the largest Iceberg readers accept), got ${position}`,
    );
  }
  splitKey = Number(position >> 32n);
  return Number(position & 0xffffffffn);
}

function sortedEntries<V>(map: Map<number, V>): [number, V][] {
  return [...map.entries()].sort(([a], [b]) => a - b);
}
