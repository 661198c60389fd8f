/**
 * Iceberg's single-value binary serialization (spec, Appendix D) for bounds and partition summaries,
 * and ordering of in-memory values. Written by hand: no JS library implements Iceberg's encoding.
 */
import { ValidationError } from '../errors.js';
import type { IcebergType, Value } from './types.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** `decimal(P,S)` → { precision, scale }, or undefined for other types. */
const decimalCache = new Map<string, { precision: number; scale: number }>();

export function decimalParams(type: IcebergType): { precision: number; scale: number } | undefined {
  if (typeof type !== 'string' || !type.startsWith('decimal')) return undefined;
  // Called for every decimal value on the ingest path: parse each type string once.
  const cached = decimalCache.get(type);
  if (cached) return cached;
  const m = /^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(type);
  if (!m) throw new ValidationError(`malformed decimal type '${type}'`);
  const params = { precision: Number(m[1]), scale: Number(m[2]) };
  decimalCache.set(type, params);
  return params;
}

/** `fixed[L]` → L, or undefined. */
export function fixedLength(type: IcebergType): number | undefined {
  if (typeof type !== 'string' || !type.startsWith('fixed')) return undefined;
  const m = /^fixed\[(\d+)\]$/.exec(type);
  if (!m) throw new ValidationError(`malformed fixed type '${type}'`);
  return Number(m[1]);
}

/** Canonical uuid string → 16 bytes, big-endian. */
export function uuidToBytes(uuid: string): Uint8Array {
  const hex = uuid.replace(/-/g, '');
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new ValidationError(`'${uuid}' is not a uuid`);
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

export function bytesToUuid(bytes: Uint8Array): string {
  const h = Buffer.from(bytes).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Minimal big-endian two's-complement bytes of a bigint (decimal unscaled values). */
export function bigintToMinimalBytes(value: bigint): Uint8Array {
  const bytes: number[] = [];
  let v = value;
  // Emit little-endian bytes until the remaining value is pure sign extension of the last byte.
  for (;;) {
    const byte = Number(v & 0xffn);
    bytes.push(byte);
    v >>= 8n;
    const signBit = (byte & 0x80) !== 0;
    if ((v === 0n && !signBit) || (v === -1n && signBit)) break;
  }
  return Uint8Array.from(bytes.reverse());
}

export function minimalBytesToBigint(bytes: Uint8Array): bigint {
  if (bytes.length === 0) return 0n;
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  if (bytes[0] & 0x80) v -= 1n << BigInt(bytes.length * 8);
  return v;
}

function fixedWidth(size: 4 | 8, write: (view: DataView) => void): Uint8Array {
  const out = new Uint8Array(size);
  write(new DataView(out.buffer));
  return out;
}

/**
 * Serialises one primitive value. int/date → 4-byte LE; long/time/timestamp(tz) → 8-byte LE;
 * float/double → IEEE LE; string → UTF-8; uuid → 16 bytes BE; decimal → minimal BE two's complement.
 * @throws ValidationError for nested types or a value of the wrong representation
 */
export function encodeValue(type: IcebergType, value: Value): Uint8Array {
  if (typeof type !== 'string')
    throw new ValidationError(`cannot serialise a ${type.type} as a single value`);
  switch (type) {
    case 'boolean':
      return Uint8Array.of(value ? 1 : 0);
    case 'int':
    case 'date':
      return fixedWidth(4, (v) => v.setInt32(0, Number(value), true));
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return fixedWidth(8, (v) => v.setBigInt64(0, BigInt(value as bigint | number), true));
    case 'float':
      return fixedWidth(4, (v) => v.setFloat32(0, value as number, true));
    case 'double':
      return fixedWidth(8, (v) => v.setFloat64(0, value as number, true));
    case 'string':
      return encoder.encode(value as string);
    case 'uuid':
      return typeof value === 'string' ? uuidToBytes(value) : (value as Uint8Array);
    case 'binary':
      return value as Uint8Array;
  }
  if (type.startsWith('decimal')) return bigintToMinimalBytes(value as bigint);
  if (type.startsWith('fixed')) return value as Uint8Array;
  throw new ValidationError(`unknown primitive type '${type}'`);
}

/** Inverse of encodeValue. @throws ValidationError on a wrong-sized buffer */
export function decodeValue(type: IcebergType, bytes: Uint8Array): Value {
  if (typeof type !== 'string')
    throw new ValidationError(`cannot deserialise a ${type.type} from a single value`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const need = (n: number) => {
    if (bytes.byteLength !== n)
      throw new ValidationError(`a ${type} bound must be ${n} bytes, got ${bytes.byteLength}`);
  };
  switch (type) {
    case 'boolean':
      need(1);
      return bytes[0] !== 0;
    case 'int':
    case 'date':
      need(4);
      return view.getInt32(0, true);
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      // Iceberg allows int-sized bounds for long columns promoted from int.
      if (bytes.byteLength === 4) return BigInt(view.getInt32(0, true));
      need(8);
      return view.getBigInt64(0, true);
    case 'float':
      need(4);
      return view.getFloat32(0, true);
    case 'double':
      if (bytes.byteLength === 4) return view.getFloat32(0, true);
      need(8);
      return view.getFloat64(0, true);
    case 'string':
      return decoder.decode(bytes);
    case 'uuid':
      need(16);
      return bytesToUuid(bytes);
    case 'binary':
      return bytes;
  }
  if (type.startsWith('decimal')) return minimalBytesToBigint(bytes);
  if (type.startsWith('fixed')) return bytes;
  throw new ValidationError(`unknown primitive type '${type}'`);
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/**
 * Orders two non-null values of one primitive type the way Iceberg does: numbers numerically
 * (NaN not handled here — callers keep NaN out of bounds), strings by UTF-8 bytes = code points,
 * binary/fixed/uuid unsigned lexicographically, false < true.
 */
export function compareValues(a: Value, b: Value): number {
  if (typeof a === 'bigint' || typeof b === 'bigint') {
    const x = BigInt(a as bigint | number);
    const y = BigInt(b as bigint | number);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return compareCodePoints(a, b);
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (a instanceof Uint8Array && b instanceof Uint8Array) return compareBytes(a, b);
  throw new ValidationError(`cannot compare ${describeKind(a)} with ${describeKind(b)}`);
}

function describeKind(v: Value): string {
  if (v === null) return 'null';
  if (v instanceof Uint8Array) return 'bytes';
  if (Array.isArray(v)) return 'list';
  if (v instanceof Map) return 'map';
  return typeof v;
}

/** String order by Unicode code point (= UTF-8 byte order), not UTF-16 code units. */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs === ys) return x - y;
    return xs ? 1 : -1; // a surrogate (astral code point) sorts after every BMP code point
  }
  return a.length - b.length;
}

/** The first `length` code points of a string (a lower bound stays a lower bound). */
export function truncateStringLower(value: string, length: number): string {
  const cps = Array.from(value);
  return cps.length <= length ? value : cps.slice(0, length).join('');
}

/**
 * A string of at most `length` code points that is ≥ every string with `value`'s prefix:
 * truncate, then increment the last code point that can be incremented. Undefined when none can
 * (then the column gets no upper bound, as Iceberg Java does).
 */
export function truncateStringUpper(value: string, length: number): string | undefined {
  const cps = Array.from(value);
  if (cps.length <= length) return value;
  const kept = cps.slice(0, length);
  for (let i = kept.length - 1; i >= 0; i--) {
    let cp = kept[i].codePointAt(0)! + 1;
    if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xe000; // skip the surrogate range
    if (cp <= 0x10ffff) return kept.slice(0, i).join('') + String.fromCodePoint(cp);
  }
  return undefined;
}

export function truncateBinaryLower(value: Uint8Array, length: number): Uint8Array {
  return value.length <= length ? value : value.slice(0, length);
}

/** Like truncateStringUpper for bytes: increment the last byte below 0xff. */
export function truncateBinaryUpper(value: Uint8Array, length: number): Uint8Array | undefined {
  if (value.length <= length) return value;
  const kept = value.slice(0, length);
  for (let i = kept.length - 1; i >= 0; i--) {
    if (kept[i] < 0xff) {
      const out = kept.slice(0, i + 1);
      out[i] += 1;
      return out;
    }
  }
  return undefined;
}
