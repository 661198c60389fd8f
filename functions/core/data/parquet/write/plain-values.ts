/**
 * PLAIN encoding of a leaf's defined values straight from its Arrow buffers: little-endian fixed-width
 * numbers, length-prefixed byte arrays, bit-packed booleans, and Decimal128 narrowed to INT32, INT64 or
 * big-endian FIXED_LEN_BYTE_ARRAY. Values are copied as bytes, never through JS numbers or bigints
 * (that would be slow for int64 and could rewrite NaN payloads).
 */
import type { LeafLevels } from './levels.js';
import type { ByteSink } from './byte-sink.js';

/** The leaf's value buffer as bytes. */
export function valueBytes(levels: LeafLevels): Uint8Array {
  const v = levels.data.values as ArrayBufferView;
  return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
}

/** Bytes one PLAIN value takes, or -1 for length-prefixed byte arrays (booleans count 1/8). */
export function plainWidth(levels: LeafLevels): number {
  switch (levels.leaf.kind) {
    case 'boolean':
      return 0.125;
    case 'int32':
    case 'float':
    case 'decimal32':
      return 4;
    case 'int64':
    case 'double':
    case 'decimal64':
      return 8;
    case 'decimalFixed':
    case 'fixed':
      return levels.leaf.typeLength;
    case 'bytes':
      return -1;
  }
}

/**
 * The first Arrow slot when every level in [from, to) holds a value and their slots are consecutive
 * (a column without nulls, or list elements without null or empty lists), else -1. Slots only ever
 * increase (levels.ts emits them in order), so first and last tell.
 */
export function contiguousSlot(levels: LeafLevels, from: number, to: number): number {
  if (levels.defs !== null || to <= from) return -1;
  const slots = levels.slots;
  if (slots === null) return from;
  const first = slots[from];
  return slots[to - 1] - first === to - 1 - from ? first : -1;
}

/** Appends the PLAIN values of levels [from, to) that are defined (level = maxDef). */
export function encodePlain(levels: LeafLevels, from: number, to: number, out: ByteSink): void {
  const { leaf, defs, slots } = levels;
  const maxDef = leaf.maxDef;
  switch (leaf.kind) {
    case 'boolean':
      encodeBooleans(levels, from, to, out);
      return;
    case 'bytes':
      encodeByteArrays(levels, from, to, out);
      return;
    case 'decimalFixed':
      encodeWideDecimals(levels, from, to, out);
      return;
  }
  const src = valueBytes(levels);
  // Source bytes per slot and the bytes written of each (a decimal keeps the low end of its 16 bytes).
  const stride = leaf.kind === 'decimal32' || leaf.kind === 'decimal64' ? 16 : (plainWidth(levels) as number);
  const width = plainWidth(levels);
  const first = contiguousSlot(levels, from, to);
  if (first >= 0 && stride === width) {
    out.bytes(src.subarray(first * width, (first + to - from) * width));
    return;
  }
  out.ensure((to - from) * width);
  const buf = out.buf;
  let pos = out.pos;
  // Unrolled for the common widths: the per-byte loop costs about twice as much.
  if (width === 8) {
    for (let k = from; k < to; k++) {
      if (defs !== null && defs[k] !== maxDef) continue;
      const at = (slots === null ? k : slots[k]) * stride;
      buf[pos] = src[at];
      buf[pos + 1] = src[at + 1];
      buf[pos + 2] = src[at + 2];
      buf[pos + 3] = src[at + 3];
      buf[pos + 4] = src[at + 4];
      buf[pos + 5] = src[at + 5];
      buf[pos + 6] = src[at + 6];
      buf[pos + 7] = src[at + 7];
      pos += 8;
    }
  } else if (width === 4) {
    for (let k = from; k < to; k++) {
      if (defs !== null && defs[k] !== maxDef) continue;
      const at = (slots === null ? k : slots[k]) * stride;
      buf[pos] = src[at];
      buf[pos + 1] = src[at + 1];
      buf[pos + 2] = src[at + 2];
      buf[pos + 3] = src[at + 3];
      pos += 4;
    }
  } else {
    for (let k = from; k < to; k++) {
      if (defs !== null && defs[k] !== maxDef) continue;
      let at = (slots === null ? k : slots[k]) * stride;
      const end = pos + width;
      while (pos < end) buf[pos++] = src[at++];
    }
  }
  out.pos = pos;
}

function encodeBooleans(levels: LeafLevels, from: number, to: number, out: ByteSink): void {
  const { defs, slots } = levels;
  const maxDef = levels.leaf.maxDef;
  const bits = levels.data.values as Uint8Array;
  out.ensure(((to - from) >> 3) + 1);
  const buf = out.buf;
  const start = out.pos;
  let n = 0;
  for (let k = from; k < to; k++) {
    if (defs !== null && defs[k] !== maxDef) continue;
    const s = slots === null ? k : slots[k];
    const byte = start + (n >> 3);
    if ((n & 7) === 0) buf[byte] = 0;
    if ((bits[s >> 3] >> (s & 7)) & 1) buf[byte] |= 1 << (n & 7);
    n++;
  }
  out.pos = start + ((n + 7) >> 3);
}

function encodeByteArrays(levels: LeafLevels, from: number, to: number, out: ByteSink): void {
  const { defs, slots } = levels;
  const maxDef = levels.leaf.maxDef;
  const offsets = levels.data.valueOffsets as Int32Array;
  const src = levels.data.values as Uint8Array;
  const first = contiguousSlot(levels, from, to);
  if (first >= 0) {
    // Every level a value, in consecutive slots: no level or slot lookups.
    const last = first + to - from;
    out.ensure(offsets[last] - offsets[first] + 4 * (to - from));
    const buf = out.buf;
    let pos = out.pos;
    for (let s = first; s < last; s++) pos = putByteArray(buf, pos, src, offsets[s], offsets[s + 1]);
    out.pos = pos;
    return;
  }
  // Upper bound: every slot's bytes plus its length prefix.
  const a = slots === null ? offsets[from] : 0;
  const b = slots === null ? offsets[to] : src.length;
  out.ensure(b - a + 4 * (to - from));
  const buf = out.buf;
  let pos = out.pos;
  for (let k = from; k < to; k++) {
    if (defs !== null && defs[k] !== maxDef) continue;
    const s = slots === null ? k : slots[k];
    pos = putByteArray(buf, pos, src, offsets[s], offsets[s + 1]);
  }
  out.pos = pos;
}

/** Writes src[start, end) length-prefixed at `pos`; returns the position after it. */
export function putByteArray(
  buf: Uint8Array,
  pos: number,
  src: Uint8Array,
  start: number,
  end: number,
): number {
  const len = end - start;
  buf[pos] = len & 0xff;
  buf[pos + 1] = (len >>> 8) & 0xff;
  buf[pos + 2] = (len >>> 16) & 0xff;
  buf[pos + 3] = len >>> 24;
  pos += 4;
  // Short values: a byte loop beats creating a subarray for set().
  if (len > 32) {
    buf.set(src.subarray(start, end), pos);
    return pos + len;
  }
  for (let i = start; i < end; i++) buf[pos++] = src[i];
  return pos;
}

/** Decimal128 (little-endian two's complement) → its low `typeLength` bytes, big-endian. */
function encodeWideDecimals(levels: LeafLevels, from: number, to: number, out: ByteSink): void {
  const { defs, slots } = levels;
  const maxDef = levels.leaf.maxDef;
  const width = levels.leaf.typeLength;
  const src = valueBytes(levels);
  out.ensure((to - from) * width);
  const buf = out.buf;
  let pos = out.pos;
  for (let k = from; k < to; k++) {
    if (defs !== null && defs[k] !== maxDef) continue;
    const base = (slots === null ? k : slots[k]) * 16;
    for (let i = width - 1; i >= 0; i--) buf[pos++] = src[base + i];
  }
  out.pos = pos;
}

/** Estimated PLAIN bytes of levels [from, to): enough to size pages, not exact for byte arrays. */
export function estimateBytes(levels: LeafLevels, from: number, to: number): number {
  const width = plainWidth(levels);
  const present = to - from; // nulls counted as values: an over-estimate is harmless here
  if (width >= 0) return Math.ceil(present * width);
  const offsets = levels.data.valueOffsets as Int32Array;
  if (levels.slots === null) return offsets[to] - offsets[from] + 4 * present;
  return (
    (offsets[offsets.length - 1] - offsets[0]) * (present / Math.max(1, levels.data.length)) + 4 * present
  );
}

/**
 * Page boundaries over levels [from, to): about `pageBytes` of PLAIN values and at most `pageRows` rows
 * each, cut only where a row starts (repetition level 0) so no row spans two pages. Always at least one page, even an empty one.
 */
export function pageBreaks(
  levels: LeafLevels,
  from: number,
  to: number,
  pageBytes: number,
  pageRows = Number.POSITIVE_INFINITY,
): number[] {
  if (to - from <= pageRows && estimateBytes(levels, from, to) <= pageBytes) return [from, to];
  const breaks = [from];
  for (let a = from; a < to; ) {
    const b = pageEnd(levels, a, to, pageBytes, pageRows);
    if (b < to) breaks.push(b);
    a = b;
  }
  breaks.push(to);
  return breaks;
}

/**
 * Where the page starting at level `a` ends: the first row start after `a` where it holds `pageBytes`
 * or `pageRows` rows, else `to`. When an upper bound on its bytes shows they cannot reach `pageBytes`
 * (nulls and empty lists counted as values), only rows count, and the levels need not be visited.
 */
function pageEnd(levels: LeafLevels, a: number, to: number, pageBytes: number, pageRows: number): number {
  const { defs, reps, slots } = levels;
  const maxDef = levels.leaf.maxDef;
  const width = plainWidth(levels);
  const offsets = levels.data.valueOffsets as Int32Array;
  if (reps === null) {
    // One level a row: the page ends pageRows levels on, unless the bytes before that reach pageBytes.
    const end = Math.min(to, a + pageRows);
    const last = end - 1;
    let bound = Number.POSITIVE_INFINITY;
    if (width >= 0) bound = width * (last - a);
    else if (slots === null) bound = 4 * (last - a) + offsets[last] - offsets[a];
    if (bound < pageBytes) return end;
  } else {
    const bound = width >= 0 ? width * (to - a) : 4 * (to - a) + offsets[levels.data.length] - offsets[0];
    if (bound < pageBytes) return rowsEnd(reps, a, to, pageRows);
  }
  let size = 0;
  let rows = 0;
  for (let k = a; k < to; k++) {
    const rowStart = reps === null || reps[k] === 0;
    if ((size >= pageBytes || rows >= pageRows) && k > a && rowStart) return k;
    if (rowStart) rows++;
    if (defs !== null && defs[k] !== maxDef) continue;
    if (width >= 0) size += width;
    else {
      const s = slots === null ? k : slots[k];
      size += 4 + offsets[s + 1] - offsets[s];
    }
  }
  return to;
}

/** The level after `a` where row number `rows` (counted from `a`, ≥ 1) starts, else `to`. */
export function rowsEnd(reps: Uint8Array, a: number, to: number, rows: number): number {
  let seen = 0;
  for (let k = a; k < to; k++) {
    if (reps[k] !== 0) continue;
    if (seen === rows && k > a) return k;
    seen++;
  }
  return to;
}
