/**
 * A leaf's slots as Arrow Data: its defined values (column-chunk.ts's dense PLAIN bytes, byte arrays
 * with offsets, booleans one a byte) placed at their slots, nulls zero-filled, in the Arrow layout
 * parquet-wasm hands over (typed arrays by type, Decimal128 words, bit-packed booleans).
 */
import * as arrow from 'apache-arrow';
import type { Slab } from '../../../arrow/arrow-ffi.js';
import type { LeafColumn } from './column-chunk.js';
import type { LeafInfo } from './floe-schema.js';

export function int32s(slab: Slab, n: number): Int32Array {
  const bytes = slab.take(4 * n);
  return new Int32Array(bytes.buffer, bytes.byteOffset, n);
}

export function bitmapOf(valid: Uint8Array | null, nulls: number, length: number): Uint8Array | undefined {
  return valid === null || nulls === 0 ? undefined : valid.subarray(0, (length + 7) >> 3);
}

/**
 * A leaf's Data: `present` values from value `first` on, at slots `slotOf` (consecutive from 0 when
 * null) of `length` slots.
 */
export function leafData(
  column: LeafColumn,
  first: number,
  present: number,
  length: number,
  slotOf: Int32Array | null,
  valid: Uint8Array | null,
  nulls: number,
  slab: Slab,
): arrow.Data {
  const info = column.info;
  const dense = slotOf === null || present === length;
  const nullBitmap = bitmapOf(valid, nulls, length);
  const nullCount = nullBitmap === undefined ? 0 : nulls;
  const type = info.type;
  if (info.kind === 'bytes') {
    const src = column.offsets;
    const base = src[first];
    const data = column.data.subarray(base, src[first + present]);
    let valueOffsets: Int32Array;
    if (dense && base === 0) valueOffsets = src.subarray(first, first + length + 1);
    else {
      valueOffsets = int32s(slab, length + 1);
      let v = first;
      let at = 0;
      let next = present > 0 ? (dense ? 0 : (slotOf as Int32Array)[0]) : -1;
      for (let s = 0; s < length; s++) {
        if (s === next) {
          at += src[v + 1] - src[v];
          v++;
          next = v - first < present ? (dense ? s + 1 : (slotOf as Int32Array)[v - first]) : -1;
        }
        valueOffsets[s + 1] = at;
      }
    }
    return arrow.makeData({ type: type as arrow.Utf8, length, nullCount, nullBitmap, valueOffsets, data });
  }
  if (info.kind === 'boolean') {
    const bits = slab.take((length + 7) >> 3);
    const values = column.values;
    for (let i = 0; i < present; i++) {
      if (values[first + i] === 0) continue;
      const s = dense ? i : (slotOf as Int32Array)[i];
      bits[s >> 3] |= 1 << (s & 7);
    }
    return arrow.makeData({ type: type as arrow.Bool, length, nullCount, nullBitmap, data: bits });
  }
  if (info.kind === 'fixed') {
    const w = info.width;
    let bytes: Uint8Array;
    if (dense) bytes = column.values.subarray(first * w, (first + length) * w);
    else {
      bytes = slab.take(length * w);
      const src = column.values;
      const slots = slotOf as Int32Array;
      for (let i = 0; i < present; i++)
        bytes.set(src.subarray((first + i) * w, (first + i + 1) * w), slots[i] * w);
    }
    return arrow.makeData({
      type: type as arrow.Int32,
      length,
      nullCount,
      nullBitmap,
      data: typed(type, bytes) as Int32Array,
    });
  }
  const wordBytes = slab.take(length * 16);
  const words = new Uint32Array(wordBytes.buffer, wordBytes.byteOffset, length * 4);
  widenDecimals(info, column.values, first, present, dense ? null : slotOf, words);
  return arrow.makeData({ type: type as arrow.Decimal, length, nullCount, nullBitmap, data: words });
}

function typed(type: arrow.DataType, bytes: Uint8Array): ArrayBufferView {
  const { buffer, byteOffset, byteLength } = bytes;
  switch (type.typeId) {
    case arrow.Type.Int:
    case arrow.Type.Date:
      return (type as arrow.Int).bitWidth === 64
        ? new BigInt64Array(buffer, byteOffset, byteLength / 8)
        : new Int32Array(buffer, byteOffset, byteLength / 4);
    case arrow.Type.Float:
      return (type as arrow.Float).precision === arrow.Precision.DOUBLE
        ? new Float64Array(buffer, byteOffset, byteLength / 8)
        : new Float32Array(buffer, byteOffset, byteLength / 4);
    case arrow.Type.Time:
    case arrow.Type.Timestamp:
      return new BigInt64Array(buffer, byteOffset, byteLength / 8);
    default:
      return bytes; // fixed-size binary
  }
}

/** PLAIN decimals (INT32, INT64 little-endian; FIXED big-endian) → Decimal128 words, sign-extended. */
function widenDecimals(
  info: LeafInfo,
  src: Uint8Array,
  first: number,
  present: number,
  slotOf: Int32Array | null,
  words: Uint32Array,
): void {
  const w = info.width;
  if (info.kind !== 'decimalFixed') {
    // `src` starts 8-byte aligned (a slab range), so its words can be read in place.
    const ints = new Int32Array(src.buffer, src.byteOffset + first * w, (present * w) >> 2);
    for (let i = 0; i < present; i++) {
      const o = (slotOf === null ? i : slotOf[i]) * 4;
      if (w === 4) {
        const v = ints[i];
        words[o] = v;
        const sign = v >> 31;
        words[o + 1] = sign;
        words[o + 2] = sign;
        words[o + 3] = sign;
      } else {
        words[o] = ints[2 * i];
        const hi = ints[2 * i + 1];
        words[o + 1] = hi;
        const sign = hi >> 31;
        words[o + 2] = sign;
        words[o + 3] = sign;
      }
    }
    return;
  }
  const out = new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
  for (let i = 0; i < present; i++) {
    const s = slotOf === null ? i : slotOf[i];
    const at = (first + i) * w;
    const o = s * 16;
    for (let b = 0; b < w; b++) out[o + b] = src[at + w - 1 - b];
    if (src[at] & 0x80) out.fill(0xff, o + w, o + 16);
  }
}
