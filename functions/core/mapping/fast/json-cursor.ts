/**
 * The byte cursor of the JSON scan (fitting-json.ts) and its tokens: whitespace, strings (UTF-8
 * checked, escapes decided by JSON.parse), numbers (as JSON.parse rounds them), literals, and the
 * separators between items. No read is past the end: at() answers -1 there, and the readers that take
 * a position (spaceEnd, nullAt, nextItem) check it against `end` first (an out-of-bounds read gives
 * undefined and makes the loads generic).
 */
import type { GatheredColumn } from '../../data/arrow/gathered-rows.js';
import { utf8Text } from '../../data/arrow/leaf-column.js';
import { utf8SequenceLength } from './byte-values.js';

/** Appends the (non-null) value at the cursor to a column; false when it does not fit. */
export type JsonAppend = (column: GatheredColumn) => boolean;

/**
 * The cursor: the bytes being scanned, their end, the position in them, and the last string token
 * (its content is buf[strStart, strEnd) when it had no escape; otherwise `escaped` holds its value,
 * decided by JSON.parse). One scan runs at a time (synchronous), so one module-level cursor is safe.
 */
export const cursor = {
  buf: new Uint8Array(0) as Uint8Array,
  end: 0,
  pos: 0,
  strStart: 0,
  strEnd: 0,
  escaped: undefined as string | undefined,
  /**
   * The last number token's value. A field, not a return value: a double stored in an object's
   * double field is written in place, where one returned from a call is a new heap number each time.
   */
  num: 0.5,
};

/**
 * The byte at i, or -1 past the end. Never reading a typed array out of bounds keeps every byte a
 * small integer for the optimizer (an out-of-bounds read gives undefined and makes the loads generic).
 */
export function at(i: number): number {
  return i < cursor.end ? cursor.buf[i] : -1;
}

export const NOT_SCALAR: unique symbol = Symbol('not a scalar');
/** 10^k for k ≤ 22 is exact in a double (what the exact-division path below relies on). */
export const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);
/** Numbers this long may lose digits as a double: parse-json.ts keeps their text, the general path decides. */
export const LONG_NUMBER_CHARS = 16;
export const INT_MIN = -(2 ** 31);
export const INT_MAX = 2 ** 31 - 1;

export const QUOTE = 34;
export const BACKSLASH = 92;
export const COMMA = 44;
export const COLON = 58;
export const MINUS = 45;
export const DOT = 46;
export const ZERO = 48;
export const NINE = 57;
export const OPEN_BRACE = 123;
export const CLOSE_BRACE = 125;
export const OPEN_BRACKET = 91;
export const CLOSE_BRACKET = 93;
export const LOWER_N = 110;
const LOWER_U = 117;
const LOWER_L = 108;
export const LOWER_T = 116;
export const LOWER_F = 102;
export const TRUE = [116, 114, 117, 101];
export const FALSE = [102, 97, 108, 115, 101];

/** The position of the first byte at or after pos that is not JSON whitespace (end when none is). */
export function spaceEnd(buf: Uint8Array, pos: number, end: number): number {
  while (pos < end) {
    const c = buf[pos];
    if (c !== 32 && c !== 10 && c !== 13 && c !== 9) break;
    pos++;
  }
  return pos;
}

/** Whether buf[pos, end) starts with the literal null. */
export function nullAt(buf: Uint8Array, pos: number, end: number): boolean {
  return (
    pos + 3 < end &&
    buf[pos] === LOWER_N &&
    buf[pos + 1] === LOWER_U &&
    buf[pos + 2] === LOWER_L &&
    buf[pos + 3] === LOWER_L
  );
}

export function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}

/** Scans a string token whose opening quote is at the cursor; false when it is not valid JSON/UTF-8. */
export function stringToken(): boolean {
  const { buf, end } = cursor;
  const open = cursor.pos;
  let i = cursor.pos + 1;
  let plain = true;
  for (;;) {
    const c = i < end ? buf[i] : -1;
    if (c === QUOTE) break;
    if (c === BACKSLASH) {
      plain = false;
      i += 2;
      continue;
    }
    // A raw control character is invalid JSON; -1 is the end of the bytes.
    if (!(c >= 32)) return false;
    if (c < 0x80) i++;
    else {
      const len = utf8SequenceLength(buf, i);
      if (len === 0) return false;
      i += len;
    }
  }
  cursor.pos = i + 1;
  if (plain) {
    cursor.strStart = open + 1;
    cursor.strEnd = i;
    cursor.escaped = undefined;
    return true;
  }
  try {
    cursor.escaped = JSON.parse(utf8Text(cursor.buf, open, i + 1)) as string;
    return true;
  } catch {
    return false;
  }
}

/** The last string token's value as a JS string. */
export function tokenString(): string {
  return cursor.escaped ?? utf8Text(cursor.buf, cursor.strStart, cursor.strEnd);
}

/**
 * A number token at the cursor, as JSON.parse reads it. Without an exponent the digits (at most 15:
 * tokens of 16+ characters are refused) are an exact integer and 10^scale is exact, so one division
 * gives the correctly rounded double, the one V8's parser gives. With an exponent, Number() does it.
 * True with the value in cursor.num; false when the bytes are no number the scan takes.
 */
export function numberToken(): boolean {
  // The cursor's fields in locals (one load each, not one per digit); -1 past the end, as at().
  const { buf, end } = cursor;
  const start = cursor.pos;
  let pos = start;
  let c = pos < end ? buf[pos] : -1;
  const negative = c === MINUS;
  if (negative) c = ++pos < end ? buf[pos] : -1;
  let mantissa = 0;
  if (c === ZERO) c = ++pos < end ? buf[pos] : -1;
  else if (c > ZERO && c <= NINE) {
    do {
      mantissa = mantissa * 10 + (c - ZERO);
      c = ++pos < end ? buf[pos] : -1;
    } while (c >= ZERO && c <= NINE);
  } else {
    cursor.pos = pos;
    return false;
  }
  let scale = 0;
  if (c === DOT) {
    c = ++pos < end ? buf[pos] : -1;
    if (!(c >= ZERO && c <= NINE)) {
      cursor.pos = pos;
      return false;
    }
    do {
      mantissa = mantissa * 10 + (c - ZERO);
      scale++;
      c = ++pos < end ? buf[pos] : -1;
    } while (c >= ZERO && c <= NINE);
  }
  let exponent = false;
  if (c === 101 || c === 69) {
    exponent = true;
    c = ++pos < end ? buf[pos] : -1;
    if (c === 43 || c === MINUS) c = ++pos < end ? buf[pos] : -1;
    if (!(c >= ZERO && c <= NINE)) {
      cursor.pos = pos;
      return false;
    }
    do c = ++pos < end ? buf[pos] : -1;
    while (c >= ZERO && c <= NINE);
  }
  cursor.pos = pos;
  if (pos - start >= LONG_NUMBER_CHARS) return false;
  if (exponent) {
    const n = Number(utf8Text(buf, start, pos));
    // Under- or overflowed (`123e-400` → 0, `1e400` → Infinity): parse-json.ts keeps such a token's
    // text, so the general path decides (a decimal refuses it; it is never stored as 0 or Infinity).
    if ((n === 0 && mantissa !== 0) || !Number.isFinite(n)) return false;
    cursor.num = n;
    return true;
  }
  const magnitude = scale === 0 ? mantissa : mantissa / POW10[scale];
  cursor.num = negative ? -magnitude : magnitude;
  return true;
}

/** `word` (true, false, null) at the cursor, consumed. */
export function literal(word: readonly number[]): boolean {
  for (let k = 0; k < word.length; k++) if (at(cursor.pos + k) !== word[k]) return false;
  cursor.pos += word.length;
  return true;
}

/** The scalar at the cursor as JSON.parse gives it; NOT_SCALAR for objects, arrays, null, bad JSON. */
export function scalar(): string | number | boolean | typeof NOT_SCALAR {
  const c = at(cursor.pos);
  if (c === QUOTE) return stringToken() ? tokenString() : NOT_SCALAR;
  if (c === MINUS || isDigit(c)) return numberToken() ? cursor.num : NOT_SCALAR;
  if (c === LOWER_T) return literal(TRUE) ? true : NOT_SCALAR;
  if (c === LOWER_F) return literal(FALSE) ? false : NOT_SCALAR;
  return NOT_SCALAR;
}

export const DONE = -2;
export const BAD = -1;

/**
 * After an array element or object member that ends at pos: the position of the next one (past the
 * comma and any whitespace), DONE with the cursor past `close`, or BAD.
 */
export function nextItem(buf: Uint8Array, pos: number, end: number, close: number): number {
  if (pos < end && buf[pos] !== COMMA && buf[pos] !== close) pos = spaceEnd(buf, pos, end);
  if (pos >= end) return BAD;
  const c = buf[pos];
  if (c === close) {
    cursor.pos = pos + 1;
    return DONE;
  }
  if (c !== COMMA) return BAD;
  pos = spaceEnd(buf, pos + 1, end);
  return pos < end ? pos : BAD;
}
