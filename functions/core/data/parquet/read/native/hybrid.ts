/**
 * The RLE / bit-packed hybrid decoding of levels and dictionary indices, as strict as floe's writer
 * (parquet/write/rle-hybrid.ts) is exact: runs hold exactly the values asked for (only the last bit-packed
 * group is padded), no run is empty, every value is at most `max`, and the encoded bytes end exactly at
 * `end`. Anything else throws NotNativeError: the file goes to parquet-wasm, which decides.
 */
import { notNative } from './compact-reader.js';

/**
 * Decodes `count` values of `width` bits (1..24) from src[pos, end) into out[at, at + count); returns
 * how many of them equal `max` (for definition levels: the values present).
 * @throws NotNativeError as above
 */
export function decodeHybrid(
  src: Uint8Array,
  pos: number,
  end: number,
  width: number,
  count: number,
  max: number,
  out: Uint8Array | Int32Array,
  at: number,
): number {
  if (width < 1 || width > 24) notNative(`hybrid bit width ${width}`);
  const stop = at + count;
  const mask = (1 << width) - 1;
  const valueBytes = (width + 7) >> 3;
  let atMax = 0;
  while (at < stop) {
    // The run header, a varint.
    let header = 0;
    let shift = 0;
    for (;;) {
      if (pos >= end || shift > 28) notNative('hybrid run header past the end');
      const b = src[pos++];
      header |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) break;
      shift += 7;
    }
    header >>>= 0;
    if ((header & 1) === 0) {
      const run = header >>> 1;
      if (run === 0 || run > stop - at || pos + valueBytes > end) notNative('hybrid RLE run');
      let value = src[pos];
      if (valueBytes > 1) value |= src[pos + 1] << 8;
      if (valueBytes > 2) value |= src[pos + 2] << 16;
      pos += valueBytes;
      if (value > max) notNative(`level or index ${value} above ${max}`);
      out.fill(value, at, at + run);
      if (value === max) atMax += run;
      at += run;
      continue;
    }
    const groups = header >>> 1;
    const values = groups * 8;
    if (groups === 0 || values - (stop - at) >= 8 || pos + groups * width > end) {
      notNative('hybrid bit-packed run');
    }
    const take = Math.min(values, stop - at);
    const groupEnd = pos + groups * width;
    if (width === 1) {
      // Levels of one optional or repeated level: 8 to a byte.
      for (let k = 0; k < take; k++) {
        const value = (src[pos + (k >> 3)] >> (k & 7)) & 1;
        if (value > max) notNative(`level or index ${value} above ${max}`);
        out[at++] = value;
        if (value === max) atMax++;
      }
      pos = groupEnd;
      continue;
    }
    let acc = 0;
    let bits = 0;
    for (let k = 0; k < take; k++) {
      while (bits < width) {
        acc |= src[pos++] << bits;
        bits += 8;
      }
      const value = acc & mask;
      acc >>>= width;
      bits -= width;
      if (value >= max) {
        if (value > max) notNative(`level or index ${value} above ${max}`);
        atMax++;
      }
      out[at++] = value;
    }
    pos = groupEnd; // the padding values of the last group are not read
  }
  if (pos !== end) notNative('hybrid values end before their bytes');
  return atMax;
}
