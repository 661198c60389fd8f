/**
 * Key texts (cdc/record-key.ts) numbered 0, 1, 2... in the order first seen, held without one JS string
 * or Map entry per key: a view of a whole index keeps 10M keys, and V8 spends ~100 bytes on each
 * string key of a Map. Each key is encoded into one growable byte arena (a long's text `i123` as its
 * zigzag bytes, a UUID's `s"…"` or 16 bytes' `b…` as 16 bytes, any other text as its UTF-8, or its
 * UTF-16 code units when it holds an unpaired surrogate), found by
 * an open-addressing hash table (linear probing) of slot numbers over those bytes.
 *
 * Written by hand because no npm library gives this: the typed-array hash maps there (ml-hash-table,
 * mnemonist's) key by numbers or by JS values held in arrays, not by bytes in an arena.
 *
 * An encoding is exact (a text decodes back to itself) and prefix-free (its first byte tells its
 * length), so comparing a key's encoding with an entry byte by byte never reads past that entry.
 */

/** First bytes: 1..7 a long in that many zigzag bytes; then the 16-byte forms; then any text. */
const UUID_STRING = 8;
const HEX_16 = 9;
const TEXT = 10;
/** A text with an unpaired surrogate, which UTF-8 cannot hold: its UTF-16 code units. */
const UTF16 = 11;
/** Longs with more digits go as text: a double holds 15 digits exactly. */
const LONG_DIGITS = 15;
/**
 * The fullest the hash table gets before it grows 1.5× (linear probing slows past ~0.8): it then
 * holds 0.53–0.8 keys a bucket, where doubling a power-of-two table would leave 0.4–0.8.
 */
const MAX_LOAD = 0.8;
const NOT_FOUND = -1;
/** Slot starts are 32-bit: past this many bytes the arena refuses more keys. */
const MAX_ARENA = 2 ** 32 - 1;

const HEX = '0123456789abcdef';
const hexValue = (c: number) => (c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1);
/** Where the dashes of a canonical UUID are. */
const isDash = (i: number) => i === 8 || i === 13 || i === 18 || i === 23;
const utf8 = new TextEncoder();
const text8 = new TextDecoder();

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
    const kind = a[at]!;
    if (kind < UUID_STRING) {
      let z = 0;
      for (let i = kind; i >= 1; i--) z = z * 256 + a[at + i]!;
      return `i${z % 2 === 0 ? z / 2 : -(z + 1) / 2}`;
    }
    if (kind === UUID_STRING || kind === HEX_16) {
      let hex = '';
      for (let i = 1; i <= 16; i++) {
        if (kind === UUID_STRING && (i === 5 || i === 7 || i === 9 || i === 11)) hex += '-';
        hex += HEX[a[at + i]! >> 4]! + HEX[a[at + i]! & 15]!;
      }
      return kind === HEX_16 ? `b${hex}` : `s"${hex}"`;
    }
    const [length, skip] = readVarint(a, at + 1);
    const from = at + 1 + skip;
    if (kind === TEXT) return text8.decode(a.subarray(from, from + length));
    let out = '';
    for (let i = 0; i < length; i++)
      out += String.fromCharCode(a[from + 2 * i]! * 256 + a[from + 2 * i + 1]!);
    return out;
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
    this.zigzag = -1;
    const n = key.length;
    if (this.scratch.length < 6 + 3 * n) this.scratch = new Uint8Array(6 + 3 * n);
    const s = this.scratch;
    const first = key.charCodeAt(0);
    if (first === 105 /* i */ && this.encodeLong(key)) return mixLong(this.zigzag);
    if (first === 115 /* s */ && n === 39 && key.charCodeAt(1) === 34 && key.charCodeAt(38) === 34) {
      if (this.encodeHex(key, 2, UUID_STRING)) return this.hash();
    } else if (first === 98 /* b */ && n === 33 && this.encodeHex(key, 1, HEX_16)) return this.hash();
    if (!key.isWellFormed()) {
      s[0] = UTF16;
      const skip = writeVarint(s, 1, n);
      for (let i = 0; i < n; i++) {
        const unit = key.charCodeAt(i);
        s[1 + skip + 2 * i] = unit >> 8;
        s[2 + skip + 2 * i] = unit & 255;
      }
      this.scratchLength = 1 + skip + 2 * n;
      return this.hash();
    }
    s[0] = TEXT;
    const length = Buffer.byteLength(key, 'utf8');
    const skip = writeVarint(s, 1, length);
    utf8.encodeInto(key, s.subarray(1 + skip));
    this.scratchLength = 1 + skip + length;
    return this.hash();
  }

  /** `i` and a long's canonical decimal digits (as value-key.ts writes them), as zigzag bytes. */
  private encodeLong(key: string): boolean {
    const negative = key.charCodeAt(1) === 45;
    const from = negative ? 2 : 1;
    const digits = key.length - from;
    if (digits < 1 || digits > LONG_DIGITS) return false;
    if (key.charCodeAt(from) === 48 && (digits > 1 || negative)) return false;
    let value = 0;
    for (let i = from; i < key.length; i++) {
      const d = key.charCodeAt(i) - 48;
      if (d < 0 || d > 9) return false;
      value = value * 10 + d;
    }
    this.zigzag = negative ? value * 2 - 1 : value * 2;
    const k = writeZigzag(this.scratch, this.zigzag);
    this.scratch[0] = k;
    this.scratchLength = 1 + k;
    return true;
  }

  /** 32 lowercase hex digits of `key` from `from` (a UUID's with its dashes), as 16 bytes. */
  private encodeHex(key: string, from: number, kind: number): boolean {
    const s = this.scratch;
    let out = 1;
    for (let i = 0; out <= 16; ) {
      if (kind === UUID_STRING && isDash(i)) {
        if (key.charCodeAt(from + i) !== 45) return false;
        i++;
        continue;
      }
      const hi = hexValue(key.charCodeAt(from + i));
      const lo = hexValue(key.charCodeAt(from + i + 1));
      if (hi < 0 || lo < 0) return false;
      s[out++] = hi * 16 + lo;
      i += 2;
    }
    s[0] = kind;
    this.scratchLength = 17;
    return true;
  }

  /** FNV-1a of the scratch bytes, then murmur3's finaliser (FNV alone clusters short keys). */
  private hash(): number {
    return hashBytes(this.scratch, 0, this.scratchLength);
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

/** The bytes of the entry at `at`. */
function entryLength(a: Uint8Array, at: number): number {
  const kind = a[at]!;
  if (kind < UUID_STRING) return 1 + kind;
  if (kind === UUID_STRING || kind === HEX_16) return 17;
  const [length, skip] = readVarint(a, at + 1);
  return 1 + skip + (kind === UTF16 ? 2 * length : length);
}

/** A 32-bit hash's first bucket of `buckets`, by its high bits (Lemire's multiply-shift, in doubles). */
const bucketOf = (hash: number, buckets: number) => Math.floor((hash / 2 ** 32) * buckets);

/** A zigzag value's bytes, low first, after `a[0]`; returns how many. */
function writeZigzag(a: Uint8Array, zigzag: number): number {
  let z = zigzag;
  let k = 0;
  do {
    a[1 + k++] = z % 256;
    z = Math.floor(z / 256);
  } while (z > 0);
  return k;
}

/**
 * The hash of the entry at `at`: a long's of its value (no bytes to walk, and the same whether the
 * long sits in `longs` or in the arena), any other's of its bytes.
 */
function hashOfEntry(a: Uint8Array, at: number): number {
  const kind = a[at]!;
  if (kind >= UUID_STRING) return hashBytes(a, at, entryLength(a, at));
  let z = 0;
  for (let i = kind; i >= 1; i--) z = z * 256 + a[at + i]!;
  return mixLong(z);
}

/** murmur3's finaliser over a zigzag value's two 32-bit halves. */
function mixLong(z: number): number {
  let h = Math.imul((z >>> 0) ^ 0x9e3779b9, 0x85ebca6b) ^ Math.floor(z / 2 ** 32);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

function hashBytes(a: Uint8Array, from: number, length: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < from + length; i++) h = Math.imul(h ^ a[i]!, 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

function writeVarint(a: Uint8Array, at: number, value: number): number {
  let n = 0;
  let v = value;
  while (v >= 128) {
    a[at + n++] = (v & 127) | 128;
    v = Math.floor(v / 128);
  }
  a[at + n++] = v;
  return n;
}

function readVarint(a: Uint8Array, at: number): [value: number, bytes: number] {
  let value = 0;
  let scale = 1;
  let n = 0;
  for (;;) {
    const b = a[at + n++]!;
    value += (b & 127) * scale;
    if (b < 128) return [value, n];
    scale *= 128;
  }
}

/** 1.5×, not 2×: at 10M keys doubling leaves ~40% of the arrays empty. */
const grown = (atLeast: number) => Math.max(1024, Math.ceil(atLeast * 1.5));

/** `a` in an array of `length` (≥ what it holds). */
function resized<T extends Uint8Array | Uint32Array | Float64Array>(a: T, length: number): T {
  const b = new (a.constructor as new (n: number) => T)(length);
  b.set(a.length <= length ? a : (a.subarray(0, length) as T));
  return b;
}
