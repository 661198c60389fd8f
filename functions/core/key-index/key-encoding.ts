/**
 * The bytes the key arena (key-arena.ts) holds a key text (cdc/record-key.ts) as: a long's text `i123`
 * as its zigzag bytes, a UUID's `s"…"` or 16 bytes' `b…` as 16 bytes, any other text as its UTF-8 (its
 * UTF-16 code units when it holds an unpaired surrogate, which UTF-8 cannot hold). An encoding is
 * exact (it decodes back to the same text: only canonical forms take the short ones) and prefix-free
 * (its first byte tells its length), so comparing two encodings byte by byte never reads past either.
 */

/** First bytes: 1..7 a long in that many zigzag bytes; then the 16-byte forms; then any text. */
export const UUID_STRING = 8;
export const HEX_16 = 9;
const TEXT = 10;
/** A text with an unpaired surrogate, which UTF-8 cannot hold: its UTF-16 code units. */
const UTF16 = 11;
/** Longs with more digits go as text: a double holds 15 digits exactly. */
const LONG_DIGITS = 15;
const HEX = '0123456789abcdef';
const hexValue = (c: number) => (c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1);
/** Where the dashes of a canonical UUID are. */
const isDash = (i: number) => i === 8 || i === 13 || i === 18 || i === 23;
const utf8 = new TextEncoder();
const text8 = new TextDecoder();

/**
 * Writes `key`'s encoding into `out` (at least 6 + 3 × its length bytes); returns how many bytes.
 * Never throws.
 */
export function encodeKey(key: string, out: Uint8Array): number {
  const n = key.length;
  const first = key.charCodeAt(0);
  if (first === 105 /* i */) {
    const length = encodeLong(key, out);
    if (length > 0) return length;
  }
  if (first === 115 /* s */ && n === 39 && key.charCodeAt(1) === 34 && key.charCodeAt(38) === 34) {
    if (encodeHex(key, 2, UUID_STRING, out)) return 17;
  } else if (first === 98 /* b */ && n === 33 && encodeHex(key, 1, HEX_16, out)) return 17;
  if (!key.isWellFormed()) {
    out[0] = UTF16;
    const skip = writeVarint(out, 1, n);
    for (let i = 0; i < n; i++) {
      const unit = key.charCodeAt(i);
      out[1 + skip + 2 * i] = unit >> 8;
      out[2 + skip + 2 * i] = unit & 255;
    }
    return 1 + skip + 2 * n;
  }
  out[0] = TEXT;
  const length = Buffer.byteLength(key, 'utf8');
  const skip = writeVarint(out, 1, length);
  utf8.encodeInto(key, out.subarray(1 + skip));
  return 1 + skip + length;
}

/** The zigzag value of the long encoded at `at`, or -1 when the encoding there is not a long's. Never throws. */
export function zigzagAt(a: Uint8Array, at: number): number {
  const kind = a[at]!;
  if (kind >= UUID_STRING) return -1;
  let z = 0;
  for (let i = kind; i >= 1; i--) z = z * 256 + a[at + i]!;
  return z;
}

/** The key text encoded at `at`. Never throws. */
export function decodeKey(a: Uint8Array, at: number): string {
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
  for (let i = 0; i < length; i++) out += String.fromCharCode(a[from + 2 * i]! * 256 + a[from + 2 * i + 1]!);
  return out;
}

/** `i` and a long's canonical decimal digits (as value-key.ts writes them), as zigzag bytes; 0 when not. */
function encodeLong(key: string, out: Uint8Array): number {
  const negative = key.charCodeAt(1) === 45;
  const from = negative ? 2 : 1;
  const digits = key.length - from;
  if (digits < 1 || digits > LONG_DIGITS) return 0;
  if (key.charCodeAt(from) === 48 && (digits > 1 || negative)) return 0;
  let value = 0;
  for (let i = from; i < key.length; i++) {
    const d = key.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return 0;
    value = value * 10 + d;
  }
  const k = writeZigzag(out, negative ? value * 2 - 1 : value * 2);
  out[0] = k;
  return 1 + k;
}

/** 32 lowercase hex digits of `key` from `from` (a UUID's with its dashes), as 16 bytes. */
function encodeHex(key: string, from: number, kind: number, out: Uint8Array): boolean {
  let o = 1;
  for (let i = 0; o <= 16; ) {
    if (kind === UUID_STRING && isDash(i)) {
      if (key.charCodeAt(from + i) !== 45) return false;
      i++;
      continue;
    }
    const hi = hexValue(key.charCodeAt(from + i));
    const lo = hexValue(key.charCodeAt(from + i + 1));
    if (hi < 0 || lo < 0) return false;
    out[o++] = hi * 16 + lo;
    i += 2;
  }
  out[0] = kind;
  return true;
}

/** The bytes of the entry at `at`. */
export function entryLength(a: Uint8Array, at: number): number {
  const kind = a[at]!;
  if (kind < UUID_STRING) return 1 + kind;
  if (kind === UUID_STRING || kind === HEX_16) return 17;
  const [length, skip] = readVarint(a, at + 1);
  return 1 + skip + (kind === UTF16 ? 2 * length : length);
}

/** A zigzag value's bytes, low first, after `a[0]`; returns how many. */
export function writeZigzag(a: Uint8Array, zigzag: number): number {
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
export function hashOfEntry(a: Uint8Array, at: number): number {
  const kind = a[at]!;
  if (kind >= UUID_STRING) return hashBytes(a, at, entryLength(a, at));
  let z = 0;
  for (let i = kind; i >= 1; i--) z = z * 256 + a[at + i]!;
  return mixLong(z);
}

/** murmur3's finaliser over a zigzag value's two 32-bit halves. */
export function mixLong(z: number): number {
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
