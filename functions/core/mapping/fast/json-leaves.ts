/**
 * The JSON scan's appenders of primitive values (fitting-json.ts): each reads the token at the cursor
 * and appends its value to a leaf column, in typed storage where it can (strings byte for byte,
 * numbers, decimals and canonical timestamps as exact doubles), else through compilePrimitive's
 * conversion of the value JSON.parse gives; false when the value does not fit the column as it is.
 */
import type { LeafColumn } from '../../data/arrow/gathered-rows.js';
import { utf8Text } from '../../data/arrow/leaf-column.js';
import { decimalParams } from '../../spec/conversions.js';
import type { PrimitiveType } from '../../spec/types.js';
import { plainDecimalBytes, readIsoTimestamp, TIMESTAMP_MICROS } from './byte-values.js';
import { compilePrimitive, NOT_FITTING } from './fitting-row.js';
import {
  BACKSLASH,
  cursor,
  at,
  DOT,
  INT_MAX,
  INT_MIN,
  isDigit,
  LONG_NUMBER_CHARS,
  MINUS,
  NOT_SCALAR,
  numberToken,
  POW10,
  QUOTE,
  scalar,
  stringToken,
  tokenString,
  ZERO,
} from './json-cursor.js';

/** A primitive through compilePrimitive's conversion of the JS value (the general fast path). */
export function scanOther(leaf: LeafColumn, convert: (v: unknown) => unknown): boolean {
  const v = scalar();
  if (v === NOT_SCALAR) return false;
  return pushConverted(leaf, convert(v));
}

/** A string at the cursor appended to a string column. */
export function scanString(leaf: LeafColumn): boolean {
  if (plainAsciiString(leaf)) return true;
  if (at(cursor.pos) !== QUOTE || !stringToken()) return false;
  if (cursor.escaped === undefined) leaf.pushBytes(cursor.buf, cursor.strStart, cursor.strEnd);
  else if (cursor.escaped.isWellFormed()) leaf.pushString(cursor.escaped);
  else return false; // a lone surrogate cannot be stored as UTF-8: the general path refuses it
  return true;
}

/**
 * The common string, quoted printable ASCII with no escape, scanned and copied into the column's bytes
 * in one pass; false (nothing appended, the cursor where it was) for anything else, which the token
 * path then reads. Room is reserved for the rest of the text: the string cannot be longer.
 */
function plainAsciiString(leaf: LeafColumn): boolean {
  const ends = leaf.ends;
  const { buf, end } = cursor;
  let i = cursor.pos;
  // A string column (never binary) has ends until its values move to generic storage.
  if (ends === undefined || i >= end || buf[i] !== QUOTE) return false;
  const start = ends[leaf.length];
  let bytes = leaf.bytes as Uint8Array;
  if (start + (end - i) > bytes.length) bytes = leaf.reserveBytes(end - i);
  let w = start;
  for (i++; i < end; i++) {
    const c = buf[i];
    if (c === QUOTE) {
      cursor.pos = i + 1;
      leaf.commitBytes(w);
      return true;
    }
    if (c < 32 || c >= 0x80 || c === BACKSLASH) return false;
    bytes[w++] = c;
  }
  return false;
}

/** How the scan (fitting-json.ts appendField) reads a primitive field's value: the reader of its kind. */
export const LEAF_OTHER = 0;
export const LEAF_STRING = 1;
export const LEAF_INT = 2;
export const LEAF_LONG = 3;
export const LEAF_DOUBLE = 4;
export const LEAF_FLOAT = 5;
export const LEAF_TIMESTAMP = 6;
export const LEAF_TIMESTAMPTZ = 7;
export const LEAF_DECIMAL = 8;

/** A primitive's scan: its kind and what the kind's reader needs (the conversion of its slow path). */
export interface LeafPlan {
  readonly kind: number;
  /** A decimal's precision and scale (0 otherwise). */
  readonly precision: number;
  readonly scale: number;
  /** compilePrimitive's conversion, for the values the byte readers leave to it (all of LEAF_OTHER's). */
  readonly convert: (v: unknown) => unknown;
}

/** A number at the cursor appended to a numeric column of `kind` (LEAF_INT .. LEAF_FLOAT). */
export function scanNumber(leaf: LeafColumn, kind: number): boolean {
  const c = at(cursor.pos);
  if (c !== MINUS && !isDigit(c)) return false;
  if (!numberToken()) return false;
  const v = cursor.num;
  let n: number;
  if (kind === LEAF_INT) {
    // -0 becomes 0, as the general path's number → text → integer conversion makes it.
    if (!Number.isInteger(v) || v < INT_MIN || v > INT_MAX) return false;
    n = v + 0;
  } else if (kind === LEAF_LONG) {
    if (!Number.isSafeInteger(v)) return false;
    n = v + 0;
  } else if (kind === LEAF_DOUBLE) n = v;
  else {
    n = Math.fround(v);
    // Beyond a float's range the column would be promoted to double.
    if (!Number.isFinite(n)) return false;
  }
  leaf.pushNumber(n);
  return true;
}

/** A timestamp at the cursor (ISO text or epoch milliseconds); `local`: without zone. */
export function scanTimestamp(leaf: LeafColumn, local: boolean, convert: (v: unknown) => unknown): boolean {
  const { buf, end } = cursor;
  const open = cursor.pos;
  if (open < end && buf[open] === QUOTE) {
    // The common timestamp, printable ASCII without an escape: its bytes straight to the parser (the
    // ones stringToken would hand it); anything else, or a text it leaves, takes the token path.
    let close = open + 1;
    for (; close < end; close++) {
      const c = buf[close];
      if (c < 32 || c >= 0x80 || c === QUOTE || c === BACKSLASH) break;
    }
    if (close < end && buf[close] === QUOTE && readIsoTimestamp(buf, open + 1, close, local)) {
      cursor.pos = close + 1;
      pushMicros(leaf);
      return true;
    }
  }
  if (at(cursor.pos) === QUOTE) {
    if (!stringToken()) return false;
    if (cursor.escaped === undefined && readIsoTimestamp(cursor.buf, cursor.strStart, cursor.strEnd, local)) {
      pushMicros(leaf);
      return true;
    }
    return pushConverted(leaf, convert(tokenString()));
  }
  const v = scalar();
  if (typeof v !== 'number') return false;
  // Epoch milliseconds; every safe integer × 1000 is within the long range.
  if (!Number.isSafeInteger(v)) return false;
  const micros = v * 1000;
  if (Number.isSafeInteger(micros)) leaf.pushNumber(micros + 0);
  else leaf.pushValue(BigInt(v) * 1000n);
  return true;
}

/** The µs readIsoTimestamp read, appended (from where it left them: no heap number a value). */
function pushMicros(leaf: LeafColumn): void {
  if (!leaf.pushScaled(TIMESTAMP_MICROS, 0, 1)) leaf.pushNumber(TIMESTAMP_MICROS[0]);
}

function pushConverted(leaf: LeafColumn, value: unknown): boolean {
  if (value === NOT_FITTING) return false;
  leaf.pushValue(value);
  return true;
}

/** Significant digits a double holds exactly (< 2^53), as plainDecimalBytes counts them. */
const EXACT_DIGITS = 15;

/**
 * The common decimal in one pass: a number token `-?(0|[1-9]\d*)(\.\d+)?` of under 16 characters, or
 * a string of `-?\d+(\.\d+)?`, whose unscaled value plainDecimalBytes would give (left in cursor.num).
 * The position after it, or -1, nothing consumed, for anything else (an exponent, a long token, an
 * escape, a value that does not fit): the token path then reads it as before.
 */
function plainDecimalAt(buf: Uint8Array, pos: number, end: number, precision: number, scale: number): number {
  if (!(scale >= 0 && scale <= 64) || scale % 1 !== 0) return -1;
  const start = pos;
  let c = pos < end ? buf[pos] : -1;
  const quoted = c === QUOTE;
  if (quoted) c = ++pos < end ? buf[pos] : -1;
  const negative = c === MINUS;
  if (negative) c = ++pos < end ? buf[pos] : -1;
  const digits = pos;
  // A number token's integer part has no leading zero (JSON); a string's may (plainDecimalBytes).
  if (!quoted && c === ZERO && pos + 1 < end && isDigit(buf[pos + 1])) return -1;
  let significant = 0;
  let n = 0;
  let fraction = -1; // digits after the dot; -1: no dot
  for (;;) {
    const d = c - ZERO;
    if (d >= 0 && d <= 9) {
      if (significant > 0 || d !== 0) {
        significant++;
        n = n * 10 + d;
      }
      if (fraction >= 0) fraction++;
    } else if (c === DOT && fraction < 0 && pos > digits) fraction = 0;
    else break;
    c = ++pos < end ? buf[pos] : -1;
  }
  if (pos === digits || fraction === 0) return -1;
  if (quoted) {
    if (c !== QUOTE) return -1;
    pos++;
  } else if (c === 101 || c === 69 || c === DOT || pos - start >= LONG_NUMBER_CHARS) return -1;
  const places = Math.max(fraction, 0);
  if (places > scale) return -1;
  if (significant === 0) cursor.num = 0;
  else {
    const pad = scale - places;
    if (significant + pad > precision || significant + pad > EXACT_DIGITS) return -1;
    const magnitude = n * POW10[pad];
    cursor.num = negative ? -magnitude : magnitude;
  }
  return pos;
}

/** A decimal at the cursor (a number or a string of one). */
export function scanDecimal(
  leaf: LeafColumn,
  precision: number,
  scale: number,
  convert: (v: unknown) => unknown,
): boolean {
  const stop = plainDecimalAt(cursor.buf, cursor.pos, cursor.end, precision, scale);
  if (stop >= 0) {
    cursor.pos = stop;
    leaf.pushNumber(cursor.num);
    return true;
  }
  let from = cursor.pos;
  let to: number;
  if (at(cursor.pos) === QUOTE) {
    if (!stringToken()) return false;
    if (cursor.escaped !== undefined) return pushConverted(leaf, convert(cursor.escaped));
    from = cursor.strStart;
    to = cursor.strEnd;
  } else {
    const c = at(cursor.pos);
    if (c !== MINUS && !isDigit(c)) return false;
    // A number token's own text instead of String() of its double: the same value (a token under
    // 16 characters that neither under- nor overflows has at most 15 significant digits, which a
    // double keeps), parsed exactly, without formatting the double; exponents included.
    if (!numberToken()) return false;
    to = cursor.pos;
  }
  const unscaled = plainDecimalBytes(cursor.buf, from, to, precision, scale);
  if (unscaled === undefined) return pushConverted(leaf, convert(utf8Text(cursor.buf, from, to)));
  leaf.pushNumber(unscaled);
  return true;
}

const NUMBER_KINDS = { int: LEAF_INT, long: LEAF_LONG, double: LEAF_DOUBLE, float: LEAF_FLOAT } as const;

/** The scan of a primitive type's values. */
export function compileLeafPlan(type: PrimitiveType): LeafPlan {
  const convert = compilePrimitive(type);
  if (type === 'string') return { kind: LEAF_STRING, precision: 0, scale: 0, convert };
  if (type === 'int' || type === 'long' || type === 'double' || type === 'float')
    return { kind: NUMBER_KINDS[type], precision: 0, scale: 0, convert };
  if (type === 'timestamp' || type === 'timestamptz') {
    const kind = type === 'timestamp' ? LEAF_TIMESTAMP : LEAF_TIMESTAMPTZ;
    return { kind, precision: 0, scale: 0, convert };
  }
  const decimal = decimalParams(type);
  if (decimal) return { kind: LEAF_DECIMAL, precision: decimal.precision, scale: decimal.scale, convert };
  return { kind: LEAF_OTHER, precision: 0, scale: 0, convert };
}
