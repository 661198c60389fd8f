/**
 * Key texts (cdc/record-key.ts) numbered 0, 1, 2... in the order first seen, held without one JS string
 * or Map entry per key: a view of a whole index keeps 10M keys, and V8 spends ~100 bytes on each
 * string key of a Map. Each key is encoded (key-encoding.ts: a long in a few bytes, a UUID in 16)
 * into one growable byte arena, found by an open-addressing hash table (linear probing) of slot
 * numbers over those bytes.
 *
 * Written by hand because no npm library gives this: the typed-array hash maps there (ml-hash-table,
 * mnemonist's) key by numbers or by JS values held in arrays, not by bytes in an arena.
 */
import {
  decodeKey,
  encodeKey,
  entryLength,
  HEX_16,
  hashOfEntry,
  mixLong,
  UUID_STRING,
  writeZigzag,
  zigzagAt,
} from './key-encoding.js';

/**
 * The fullest the hash table gets before it grows 1.5× (linear probing slows past ~0.8): it then
 * holds 0.53–0.8 keys a bucket, where doubling a power-of-two table would leave 0.4–0.8.
 */
const MAX_LOAD = 0.8;
const NOT_FOUND = -1;
/** Slot starts are 32-bit: past this many bytes the arena refuses more keys. */
const MAX_ARENA = 2 ** 32 - 1;

/**
 * How the keys are held: while every key is a long, their zigzag values (`longs`); while every key is
 * of one 16-byte form, their 16 bytes (`arena`, at 16 × slot); else each key's encoding, first byte
 * and all, in `arena` at `starts[slot]`. The fixed widths spare 5 bytes a key (no start, no first
 * byte); the first key of another kind moves every key to `any`.
 */
type Mode = 'none' | 'longs' | 'wide' | 'any';

export class KeyArena {
  private mode: Mode = 'none';
  /** The first byte of every key's encoding in mode `wide`. */
  private wideKind = 0;
  private longs = new Float64Array(0);
  private arena = new Uint8Array(0);
  private used = 0;
  private starts = new Uint32Array(0);
  /** Per bucket: slot + 1, or 0 when empty. A hash's first bucket is its share of the length. */
  private table: Int32Array;
  private count = 0;
  private scratch = new Uint8Array(256);
  private scratchLength = 0;
  /** Where the last probe that missed met an empty bucket (-1: it did not probe). */
  private empty = -1;
  /** The scratch key's zigzag value when it is a long, else -1. */
  private zigzag = -1;
  /** One key's encoding, rebuilt from a fixed-width mode. */
  private readonly entry = new Uint8Array(17);

  /** `buckets`: the hash table's first size (a tiny one makes tests collide and grow). @default 2048 */
  constructor(buckets = 2048) {
    this.table = new Int32Array(Math.max(1, Math.floor(buckets)));
  }

  /** Keys held. Never throws. */
  get size(): number {
    return this.count;
  }

  /** Bytes of its typed arrays. Never throws. */
  get bytes(): number {
    const arrays = [this.longs, this.arena, this.starts, this.table, this.scratch];
    return arrays.reduce((n, a) => n + a.byteLength, 0);
  }

  /** The slot of `key`, or -1 when it is not held. Never throws. */
  find(key: string): number {
    return this.probe(this.encode(key));
  }

  /**
   * The slot of `key`, numbered next (`size` before the call) when it is new; -1 when the arena is
   * full (4 GB of key bytes). Never throws.
   */
  insert(key: string): number {
    const hash = this.encode(key);
    const found = this.probe(hash);
    if (found !== NOT_FOUND) return found;
    const empty = this.empty;
    if (!this.fitsMode()) this.toAny();
    const slot = this.count;
    if (!this.store(slot)) return NOT_FOUND;
    this.count++;
    if (this.count > this.table.length * MAX_LOAD) this.rehash(Math.ceil(this.table.length * 1.5));
    else if (empty >= 0) this.table[empty] = slot + 1;
    else this.place(hash, slot);
    return slot;
  }

  /** The key text of `slot` (0 ≤ slot < size). Never throws. */
  keyAt(slot: number): string {
    const [a, at] = this.entryOf(slot);
    return decodeKey(a, at);
  }

  /** Drops the room grown for keys to come, but for `spare` more. Never throws. */
  trim(spare: number): void {
    if (this.mode === 'longs') this.longs = resized(this.longs, this.count + spare);
    else if (this.mode === 'wide') this.arena = resized(this.arena, (this.count + spare) * 16);
    else if (this.mode === 'any') {
      this.starts = resized(this.starts, this.count + spare);
      this.arena = resized(this.arena, Math.min(MAX_ARENA, this.used + spare * 8));
    }
  }

  /** Whether the scratch key can be held as the keys are (the first key picks the mode). */
  private fitsMode(): boolean {
    const kind = this.scratch[0]!;
    if (this.mode === 'none')
      this.mode = this.zigzag >= 0 ? 'longs' : kind === UUID_STRING || kind === HEX_16 ? 'wide' : 'any';
    this.wideKind = this.mode === 'wide' && this.count === 0 ? kind : this.wideKind;
    if (this.mode === 'longs') return this.zigzag >= 0;
    return this.mode === 'any' || kind === this.wideKind;
  }

  /** Holds the scratch key as `slot`'s; false when the arena is full. */
  private store(slot: number): boolean {
    if (this.mode === 'longs') {
      if (slot === this.longs.length) this.longs = resized(this.longs, grown(slot + 1));
      this.longs[slot] = this.zigzag;
      return true;
    }
    if (this.mode === 'wide') {
      if (16 * (slot + 1) > this.arena.length) this.arena = resized(this.arena, 16 * grown(slot + 1));
      this.arena.set(this.scratch.subarray(1, 17), 16 * slot);
      return true;
    }
    const length = this.scratchLength;
    if (this.used + length > MAX_ARENA) return false;
    if (this.used + length > this.arena.length)
      this.arena = resized(this.arena, Math.min(MAX_ARENA, grown(this.used + length)));
    this.arena.set(this.scratch.subarray(0, length), this.used);
    if (slot === this.starts.length) this.starts = resized(this.starts, grown(slot + 1));
    this.starts[slot] = this.used;
    this.used += length;
    return true;
  }

  /** Every key as its whole encoding: a key of another kind came. */
  private toAny(): void {
    const arena = new Uint8Array(grown(this.count * 17 + 64));
    const starts = new Uint32Array(grown(this.count + 1));
    let used = 0;
    for (let slot = 0; slot < this.count; slot++) {
      const [a, at] = this.entryOf(slot);
      const length = entryLength(a, at);
      arena.set(a.subarray(at, at + length), used);
      starts[slot] = used;
      used += length;
    }
    this.mode = 'any';
    this.arena = arena;
    this.starts = starts;
    this.used = used;
    this.longs = new Float64Array(0);
  }

  /** Where `slot`'s whole encoding is: in the arena, or rebuilt in `entry` from a fixed width. */
  private entryOf(slot: number): [bytes: Uint8Array, at: number] {
    if (this.mode === 'any') return [this.arena, this.starts[slot]!];
    const e = this.entry;
    if (this.mode === 'wide') {
      e[0] = this.wideKind;
      e.set(this.arena.subarray(16 * slot, 16 * slot + 16), 1);
    } else e[0] = writeZigzag(e, this.longs[slot]!);
    return [e, 0];
  }

  /** Encodes `key` into the scratch bytes; returns its hash. */
  private encode(key: string): number {
    const need = 6 + 3 * key.length;
    // A long key grows the scratch bytes; the next short one gives that back.
    if (this.scratch.length < need || (this.scratch.length > 4096 && need <= 256))
      this.scratch = new Uint8Array(Math.max(256, need));
    this.scratchLength = encodeKey(key, this.scratch);
    this.zigzag = zigzagAt(this.scratch, 0);
    return this.zigzag >= 0 ? mixLong(this.zigzag) : hashOfEntry(this.scratch, 0);
  }

  /** The slot whose key is the scratch bytes, or -1. */
  private probe(hash: number): number {
    this.empty = -1;
    const mode = this.mode;
    if (mode === 'none' || (mode === 'longs' && this.zigzag < 0)) return NOT_FOUND;
    if (mode === 'wide' && this.scratch[0] !== this.wideKind) return NOT_FOUND;
    const buckets = this.table.length;
    for (let b = bucketOf(hash, buckets); ; b = b + 1 === buckets ? 0 : b + 1) {
      const held = this.table[b]!;
      if (held === 0) {
        this.empty = b;
        return NOT_FOUND;
      }
      if (mode === 'longs' ? this.longs[held - 1] === this.zigzag : this.holdsScratch(held - 1))
        return held - 1;
    }
  }

  /** Whether `slot`'s bytes are the scratch key's (modes `wide` and `any`). */
  private holdsScratch(slot: number): boolean {
    const s = this.scratch;
    const a = this.arena;
    if (this.mode === 'wide') {
      const at = 16 * slot;
      for (let i = 0; i < 16; i++) if (a[at + i] !== s[1 + i]) return false;
      return true;
    }
    const at = this.starts[slot]!;
    const length = this.scratchLength;
    let i = 0;
    while (i < length && a[at + i] === s[i]) i++;
    return i === length;
  }

  private place(hash: number, slot: number): void {
    const buckets = this.table.length;
    let b = bucketOf(hash, buckets);
    while (this.table[b] !== 0) b = b + 1 === buckets ? 0 : b + 1;
    this.table[b] = slot + 1;
  }

  private rehash(buckets: number): void {
    this.table = new Int32Array(buckets);
    for (let slot = 0; slot < this.count; slot++) {
      if (this.mode === 'longs') this.place(mixLong(this.longs[slot]!), slot);
      else {
        const [a, at] = this.entryOf(slot);
        this.place(hashOfEntry(a, at), slot);
      }
    }
  }
}

/** A 32-bit hash's first bucket of `buckets`, by its high bits (Lemire's multiply-shift, in doubles). */
const bucketOf = (hash: number, buckets: number) => Math.floor((hash / 2 ** 32) * buckets);

/** 1.5×, not 2×: at 10M keys doubling leaves ~40% of the arrays empty. */
const grown = (atLeast: number) => Math.max(1024, Math.ceil(atLeast * 1.5));

/** `a` in an array of `length` (≥ what it holds). */
function resized<T extends Uint8Array | Uint32Array | Float64Array>(a: T, length: number): T {
  const b = new (a.constructor as new (n: number) => T)(length);
  b.set(a.length <= length ? a : (a.subarray(0, length) as T));
  return b;
}
