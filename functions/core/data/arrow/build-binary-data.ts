/**
 * Arrow Data for the byte-valued Iceberg types — string, binary, fixed, uuid — written into one
 * buffer per column, with their bounds (strings in code-point order, bytes unsigned).
 */
import * as arrow from 'apache-arrow';
import { ValidationError } from '../../errors.js';
import { compareCodePoints, compareValues, uuidToBytes } from '../../spec/conversions.js';
import type { PrimitiveType } from '../../spec/types.js';
import type { StatsSink } from './column-stats.js';
import { type ColumnTarget, ValidityBuilder, isNullSlot, nullsOf, wrongValue } from './column-target.js';

/** Utf8 Data; bounds in code-point order. @throws ValidationError for a required null or a non-string */
export function buildString(
  arrowType: arrow.DataType,
  col: ColumnTarget,
  values: unknown[],
  stats: StatsSink,
): arrow.Data {
  const n = values.length;
  const offsets = new Int32Array(n + 1);
  const validity = new ValidityBuilder(n);
  let chars = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (typeof v === 'string') chars += v.length;
  }
  // Sized for ASCII; a UTF-16 unit becomes at most 3 UTF-8 bytes, so grow when that could overflow.
  let buf = Buffer.allocUnsafe(chars + 64);
  let pos = 0;
  let min: string | undefined;
  let max: string | undefined;
  let ascii = true;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (isNullSlot(v, col)) {
      validity.setNull(i);
      offsets[i + 1] = pos;
      continue;
    }
    if (typeof v !== 'string') throw wrongValue(col, 'string', v);
    if (pos + v.length * 3 > buf.length) {
      const grown = Buffer.allocUnsafe(Math.max(buf.length * 2, pos + v.length * 3));
      buf.copy(grown, 0, 0, pos);
      buf = grown;
    }
    const written = buf.write(v, pos);
    if (written !== v.length) ascii = false;
    pos += written;
    if (pos > 0x7fffffff)
      throw new ValidationError(`field '${col.path}' holds over 2 GiB of text in one file`);
    offsets[i + 1] = pos;
    // JS < orders UTF-16 code units: Iceberg's code-point order for ASCII text (re-done below otherwise).
    if (col.bounded) {
      if (min === undefined || v < min) min = v;
      if (max === undefined || v > max) max = v;
    }
  }
  if (col.bounded && !ascii) [min, max] = findStringBounds(values);
  stats.set(col.id, { type: 'string', nanCount: 0, min, max });
  return arrow.makeData({
    type: arrowType as arrow.Utf8,
    length: n,
    ...nullsOf(validity),
    valueOffsets: offsets,
    data: buf.subarray(0, pos),
  });
}

/** Min and max strings in code-point order (slower than `<`; needed once non-ASCII text appears). */
function findStringBounds(values: unknown[]): [string | undefined, string | undefined] {
  let min: string | undefined;
  let max: string | undefined;
  for (const v of values) {
    if (typeof v !== 'string') continue;
    if (min === undefined || compareCodePoints(v, min) < 0) min = v;
    if (max === undefined || compareCodePoints(v, max) > 0) max = v;
  }
  return [min, max];
}

/** Binary Data; bounds as unsigned bytes. @throws ValidationError for a required null or a non-Uint8Array */
export function buildBinary(
  arrowType: arrow.DataType,
  col: ColumnTarget,
  values: unknown[],
  stats: StatsSink,
): arrow.Data {
  const n = values.length;
  const offsets = new Int32Array(n + 1);
  const validity = new ValidityBuilder(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v instanceof Uint8Array) total += v.byteLength;
  }
  if (total > 0x7fffffff) throw new ValidationError(`field '${col.path}' holds over 2 GiB in one file`);
  const data = new Uint8Array(total);
  let pos = 0;
  let min: Uint8Array | undefined;
  let max: Uint8Array | undefined;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (isNullSlot(v, col)) {
      validity.setNull(i);
      offsets[i + 1] = pos;
      continue;
    }
    if (!(v instanceof Uint8Array)) throw wrongValue(col, 'binary', v);
    data.set(v, pos);
    pos += v.byteLength;
    offsets[i + 1] = pos;
    if (col.bounded) {
      if (min === undefined || compareValues(v, min) < 0) min = v;
      if (max === undefined || compareValues(v, max) > 0) max = v;
    }
  }
  // Copies: a bound must not change when the caller reuses its buffers.
  stats.set(col.id, { type: 'binary', nanCount: 0, min: min?.slice(), max: max?.slice() });
  return arrow.makeData({
    type: arrowType as arrow.Binary,
    length: n,
    ...nullsOf(validity),
    valueOffsets: offsets,
    data,
  });
}

/**
 * FixedSizeBinary(L) Data; bounds as unsigned bytes, never truncated (Iceberg Java truncates only string
 * and binary). @throws ValidationError for a required null or a value that is not L bytes
 */
export function buildFixed(
  type: PrimitiveType,
  length: number,
  arrowType: arrow.DataType,
  col: ColumnTarget,
  values: unknown[],
  stats: StatsSink,
): arrow.Data {
  const n = values.length;
  const data = new Uint8Array(n * length);
  const validity = new ValidityBuilder(n);
  let min: Uint8Array | undefined;
  let max: Uint8Array | undefined;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (isNullSlot(v, col)) {
      validity.setNull(i);
      continue;
    }
    if (!(v instanceof Uint8Array) || v.byteLength !== length) throw wrongValue(col, type, v);
    data.set(v, i * length);
    if (col.bounded) {
      if (min === undefined || compareValues(v, min) < 0) min = v;
      if (max === undefined || compareValues(v, max) > 0) max = v;
    }
  }
  stats.set(col.id, { type, nanCount: 0, min: min?.slice(), max: max?.slice() });
  return arrow.makeData({ type: arrowType as arrow.FixedSizeBinary, length: n, ...nullsOf(validity), data });
}

const HEX_VALUE = new Int8Array(128).fill(-1);
for (let c = 0; c < 10; c++) HEX_VALUE[48 + c] = c;
for (let c = 0; c < 6; c++) {
  HEX_VALUE[65 + c] = 10 + c;
  HEX_VALUE[97 + c] = 10 + c;
}

/** Parses a canonical 8-4-4-4-12 uuid into `out` at `at` without allocating; false when not canonical. */
function writeCanonicalUuid(s: string, out: Uint8Array, at: number): boolean {
  if (s.length !== 36) return false;
  let k = at;
  for (let i = 0; i < 36; ) {
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (s.charCodeAt(i) !== 45) return false;
      i++;
      continue;
    }
    const hi = HEX_VALUE[s.charCodeAt(i) & 0x7f];
    const lo = HEX_VALUE[s.charCodeAt(i + 1) & 0x7f];
    if (hi < 0 || lo < 0 || s.charCodeAt(i) > 0x7f || s.charCodeAt(i + 1) > 0x7f) return false;
    out[k++] = (hi << 4) | lo;
    i += 2;
  }
  return true;
}

function compareAt(data: Uint8Array, a: number, b: number, width: number): number {
  for (let k = 0; k < width; k++) {
    const d = data[a + k] - data[b + k];
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * FixedSizeBinary(16) Data from canonical uuid strings (or 16-byte arrays); bounds in byte order.
 * @throws ValidationError for a required null or a value that is not a uuid
 */
export function buildUuid(
  arrowType: arrow.DataType,
  col: ColumnTarget,
  values: unknown[],
  stats: StatsSink,
): arrow.Data {
  const n = values.length;
  const data = new Uint8Array(n * 16);
  const validity = new ValidityBuilder(n);
  let minAt = -1;
  let maxAt = -1;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (isNullSlot(v, col)) {
      validity.setNull(i);
      continue;
    }
    const at = i * 16;
    if (typeof v === 'string') {
      if (!writeCanonicalUuid(v, data, at)) data.set(uuidToBytes(v), at); // throws when not a uuid
    } else if (v instanceof Uint8Array && v.byteLength === 16) data.set(v, at);
    else throw wrongValue(col, 'uuid', v);
    if (col.bounded) {
      if (minAt < 0 || compareAt(data, at, minAt, 16) < 0) minAt = at;
      if (maxAt < 0 || compareAt(data, at, maxAt, 16) > 0) maxAt = at;
    }
  }
  stats.set(col.id, {
    type: 'uuid',
    nanCount: 0,
    min: minAt < 0 ? undefined : data.slice(minAt, minAt + 16),
    max: maxAt < 0 ? undefined : data.slice(maxAt, maxAt + 16),
  });
  return arrow.makeData({ type: arrowType as arrow.FixedSizeBinary, length: n, ...nullsOf(validity), data });
}
