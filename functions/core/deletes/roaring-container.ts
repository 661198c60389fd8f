/**
 * One Roaring container: the set of low 16 bits of the values that share their high 16 bits. Held as
 * a sorted array while it has at most 4096 values and as a 65536-bit bitmap past that, the two forms
 * every Roaring implementation keeps in memory; the third form, runs, exists here only on the wire
 * (roaring-portable.ts picks it when it is smaller, as Java's runOptimize does before serializing).
 */

/** The most values an array container holds (the Roaring format spec's threshold). */
export const ARRAY_MAX = 4096;
/** 65536 bits as 32-bit words. */
const WORDS = 2048;

export class RoaringContainer {
  /** Sorted low 16 bits while an array; undefined once the container is a bitmap. */
  private array: number[] | undefined = [];
  private words: Uint32Array | undefined;
  private count = 0;

  get cardinality(): number {
    return this.count;
  }

  /** Adds a 16-bit value; whether it was new. */
  add(value: number): boolean {
    const words = this.words;
    if (words !== undefined) {
      const mask = 1 << (value & 31);
      const word = words[value >>> 5]!;
      if ((word & mask) !== 0) return false;
      words[value >>> 5] = word | mask;
      this.count++;
      return true;
    }
    const array = this.array!;
    // Positions mostly arrive in order: appending is the common case.
    if (array.length === 0 || array[array.length - 1]! < value) array.push(value);
    else {
      const at = lowerBound(array, value);
      if (array[at] === value) return false;
      array.splice(at, 0, value);
    }
    this.count++;
    if (this.count > ARRAY_MAX) this.toBitmap();
    return true;
  }

  /** Adds every value in [start, end] (inclusive, 16-bit). */
  addRange(start: number, end: number): void {
    // A bitmap up front when the range may not fit an array: no splice per value on the way there.
    if (this.words === undefined && this.count + (end - start + 1) > ARRAY_MAX) this.toBitmap();
    const words = this.words;
    if (words === undefined) {
      for (let v = start; v <= end; v++) this.add(v);
      return;
    }
    // A word at a time: a hostile run of 65536 values costs 2048 steps, not 65536.
    for (let v = start; v <= end; ) {
      const bit = v & 31;
      const width = Math.min(32 - bit, end - v + 1);
      const mask = width === 32 ? 0xffffffff : ((1 << width) - 1) << bit;
      const before = words[v >>> 5]!;
      const after = (before | mask) >>> 0;
      this.count += popCount(after) - popCount(before);
      words[v >>> 5] = after;
      v += width;
    }
  }

  has(value: number): boolean {
    if (this.words !== undefined) return (this.words[value >>> 5]! & (1 << (value & 31))) !== 0;
    const array = this.array!;
    const at = lowerBound(array, value);
    return array[at] === value;
  }

  /** The values in ascending order. */
  *values(): Generator<number> {
    if (this.array !== undefined) {
      yield* this.array;
      return;
    }
    const words = this.words!;
    for (let w = 0; w < WORDS; w++) {
      let word = words[w]!;
      while (word !== 0) {
        const low = word & -word;
        yield (w << 5) | (31 - Math.clz32(low));
        word ^= low;
      }
    }
  }

  /** How many runs of consecutive values the container has. */
  runCount(): number {
    const array = this.array;
    if (array !== undefined) {
      let runs = 0;
      for (let i = 0; i < array.length; i++) if (i === 0 || array[i] !== array[i - 1]! + 1) runs++;
      return runs;
    }
    // A run starts at each set bit whose lower neighbour is clear: count those a word at a time.
    const words = this.words!;
    let runs = 0;
    let carry = 0;
    for (let w = 0; w < WORDS; w++) {
      const word = words[w]!;
      runs += popCount(word & ~((word << 1) | carry));
      carry = word >>> 31;
    }
    return runs;
  }

  /** The values when the container is an array (sorted; not to be changed), else undefined. */
  arrayValues(): readonly number[] | undefined {
    return this.array;
  }

  /** Makes this empty container the bitmap `words` (2048 words, bit v is value v), taken as is. */
  adoptWords(words: Uint32Array): void {
    this.words = words;
    this.array = undefined;
    this.count = words.reduce((sum, w) => sum + popCount(w), 0);
  }

  /** The 65536-bit bitmap as 2048 little-endian-ordered words (bit v is value v), when a bitmap. */
  bitmapWords(): Uint32Array | undefined {
    return this.words;
  }

  private toBitmap(): void {
    const words = new Uint32Array(WORDS);
    for (const v of this.array!) words[v >>> 5]! |= 1 << (v & 31);
    this.words = words;
    this.array = undefined;
  }
}

/** The first index whose value is ≥ `value` in a sorted array. */
function lowerBound(array: number[], value: number): number {
  let lo = 0;
  let hi = array.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (array[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function popCount(word: number): number {
  word -= (word >>> 1) & 0x55555555;
  word = (word & 0x33333333) + ((word >>> 2) & 0x33333333);
  return (((word + (word >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}
