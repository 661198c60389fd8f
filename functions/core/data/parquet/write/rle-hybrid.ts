/**
 * The RLE / bit-packed hybrid encoding Parquet uses for definition and repetition levels and for
 * dictionary indices: runs of 8 or more equal values become RLE runs, everything else is bit-packed
 * in groups of 8 (as parquet-mr's RunLengthBitPackingHybridEncoder decides).
 */
import type { ByteSink } from './byte-sink.js';

/** Bit-packed groups per run header: 63 keeps the header one byte, as parquet-mr writes it. */
const MAX_GROUPS = 63;

/** Bits needed for values up to `max` (0 for 0). */
export function bitWidth(max: number): number {
  return max === 0 ? 0 : 32 - Math.clz32(max);
}

/**
 * Appends values[start, end) in the hybrid encoding, `width` bits each (1..24), without a length prefix.
 * The last bit-packed group is zero-padded; readers stop at the page's value count.
 */
export function encodeHybrid(
  values: Uint8Array | Int32Array,
  start: number,
  end: number,
  width: number,
  out: ByteSink,
): void {
  if (width < 1 || width > 24) throw new RangeError(`hybrid bit width ${width} out of range`);
  let literalStart = start;
  let i = start;
  while (i < end) {
    const v = values[i];
    let j = i + 1;
    while (j < end && values[j] === v) j++;
    const run = j - i;
    if (run >= 8) {
      // Literals go out in whole groups of 8: borrow the first few values of the run to fill the last one.
      const pad = (8 - ((i - literalStart) & 7)) & 7;
      if (run - pad >= 8) {
        writeBitPacked(values, literalStart, i + pad, width, out);
        writeRun(v, run - pad, width, out);
        literalStart = j;
      }
    }
    i = j;
  }
  writeBitPacked(values, literalStart, end, width, out);
}

function writeRun(value: number, count: number, width: number, out: ByteSink): void {
  out.varint(count << 1);
  for (let b = 0; b < width; b += 8) out.byte((value >>> b) & 0xff);
}

function writeBitPacked(
  values: Uint8Array | Int32Array,
  start: number,
  end: number,
  width: number,
  out: ByteSink,
): void {
  let k = start;
  while (k < end) {
    const groups = Math.min(MAX_GROUPS, Math.ceil((end - k) / 8));
    out.varint((groups << 1) | 1);
    out.ensure(groups * width);
    const buf = out.buf;
    let pos = out.pos;
    const stop = k + groups * 8;
    let acc = 0;
    let bits = 0;
    for (; k < stop; k++) {
      const v = k < end ? values[k] : 0;
      acc |= v << bits;
      bits += width;
      while (bits >= 8) {
        buf[pos++] = acc & 0xff;
        acc >>>= 8;
        bits -= 8;
      }
    }
    out.pos = pos;
  }
}
