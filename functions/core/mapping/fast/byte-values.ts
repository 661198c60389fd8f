/**
 * The JSON scan's value readers on UTF-8 bytes (fitting-json.ts): a UTF-8 sequence's validity, plain
 * decimal text → unscaled value, canonical ISO timestamps → µs, all as exact doubles and without a
 * string. Each is a byte-for-byte port of the text fast path it stands for (records/decimal-text.ts
 * plainDecimal, records/parse-temporal.ts fastTimestamp) and answers undefined for anything that path
 * would leave to its general one, or whose value is not exact as a double; the caller then takes the
 * token's text through the same conversion as before, so results never differ
 * (test/unit/evolution/byte-values.test.ts holds them equal).
 */
import { daysFromCivil } from '../../spec/epoch-time.js';

/**
 * Length of the well-formed UTF-8 sequence whose lead byte (≥ 0x80) is at bytes[i], or 0 when it is
 * not one (as a fatal TextDecoder and Buffer's isUtf8 decide: no overlong forms, no surrogates,
 * nothing past U+10FFFF).
 */
export function utf8SequenceLength(bytes: Uint8Array, i: number): number {
  const b0 = bytes[i];
  const b1 = bytes[i + 1];
  if (b0 >= 0xc2 && b0 <= 0xdf) return b1 >= 0x80 && b1 <= 0xbf ? 2 : 0;
  const b2 = bytes[i + 2];
  if (b0 >= 0xe0 && b0 <= 0xef) {
    const lo = b0 === 0xe0 ? 0xa0 : 0x80;
    const hi = b0 === 0xed ? 0x9f : 0xbf;
    return b1 >= lo && b1 <= hi && b2 >= 0x80 && b2 <= 0xbf ? 3 : 0;
  }
  if (b0 >= 0xf0 && b0 <= 0xf4) {
    const lo = b0 === 0xf0 ? 0x90 : 0x80;
    const hi = b0 === 0xf4 ? 0x8f : 0xbf;
    const b3 = bytes[i + 3];
    return b1 >= lo && b1 <= hi && b2 >= 0x80 && b2 <= 0xbf && b3 >= 0x80 && b3 <= 0xbf ? 4 : 0;
  }
  return 0;
}

/** Significant digits a double holds exactly (< 2^53). */
const EXACT_DIGITS = 15;
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);

/**
 * Plain `-?\d+(\.\d+)?` text at bytes[start, end) that fits decimal(precision, scale) with at most 15
 * significant digits once scaled: its unscaled value; undefined for anything else.
 */
export function plainDecimalBytes(
  bytes: Uint8Array,
  start: number,
  end: number,
  precision: number,
  scale: number,
): number | undefined {
  if (!(scale >= 0 && scale <= 64) || scale % 1 !== 0) return undefined;
  const negative = bytes[start] === 45;
  const first = negative ? start + 1 : start;
  let dot = -1;
  let significant = 0;
  let n = 0;
  for (let i = first; i < end; i++) {
    const d = bytes[i] - 48;
    if (d >= 0 && d <= 9) {
      if (significant > 0 || d !== 0) {
        significant++;
        n = n * 10 + d;
      }
    } else if (d === -2 && dot < 0) dot = i;
    else return undefined;
  }
  const fraction = dot < 0 ? 0 : end - dot - 1;
  if (dot < 0 ? end === first : dot === first || fraction === 0) return undefined;
  if (fraction > scale) return undefined;
  if (significant === 0) return 0;
  const pad = scale - fraction;
  if (significant + pad > precision || significant + pad > EXACT_DIGITS) return undefined;
  const magnitude = n * POW10[pad];
  return negative ? -magnitude : magnitude;
}

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const MAX_OFFSET_MINUTES = 18 * 60;
const EXACT_SECONDS = 9_000_000_000;

function twoDigits(bytes: Uint8Array, i: number, end: number): number {
  if (i + 1 >= end) return -1;
  const a = bytes[i] - 48;
  const b = bytes[i + 1] - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

function fastDays(bytes: Uint8Array, s: number, end: number): number | undefined {
  if (bytes[s + 4] !== 45 || bytes[s + 7] !== 45) return undefined;
  const century = twoDigits(bytes, s, end);
  const yy = twoDigits(bytes, s + 2, end);
  const month = twoDigits(bytes, s + 5, end);
  const day = twoDigits(bytes, s + 8, end);
  if (century < 0 || yy < 0 || month < 1 || month > 12 || day < 1) return undefined;
  const year = century * 100 + yy;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  if (day > (month === 2 && !leap ? 28 : DAYS_IN_MONTH[month - 1])) return undefined;
  return daysFromCivil(year, month, day);
}

/**
 * µs of a canonical timestamp at bytes[s, end) (T or space, optional fraction and zone), as
 * parse-temporal.ts fastTimestamp reads the same text; undefined otherwise, or when the µs are not
 * exact as a double. `local`: only a zero offset is taken.
 */
export function isoTimestampBytes(
  bytes: Uint8Array,
  s: number,
  end: number,
  local: boolean,
): number | undefined {
  return readIsoTimestamp(bytes, s, end, local) ? TIMESTAMP_MICROS[0] : undefined;
}

/**
 * Where readIsoTimestamp leaves the µs it read: a double returned from a call is a heap number (one
 * a value), one kept in a Float64Array is not (LeafColumn.pushScaled takes it from there).
 */
export const TIMESTAMP_MICROS = new Float64Array(1);

/** isoTimestampBytes, its µs left in TIMESTAMP_MICROS[0]: false where that answers undefined. */
export function readIsoTimestamp(bytes: Uint8Array, s: number, end: number, local: boolean): boolean {
  const sep = bytes[s + 10];
  if (end - s < 19 || (sep !== 84 && sep !== 32) || bytes[s + 13] !== 58 || bytes[s + 16] !== 58)
    return false;
  const days = fastDays(bytes, s, end);
  const hour = twoDigits(bytes, s + 11, end);
  const minute = twoDigits(bytes, s + 14, end);
  const second = twoDigits(bytes, s + 17, end);
  if (days === undefined || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59)
    return false;
  let i = s + 19;
  let micros = 0;
  if (i < end && bytes[i] === 46) {
    const start = ++i;
    for (let d = bytes[i] - 48; i < end && d >= 0 && d <= 9; d = bytes[++i] - 48) {
      if (i - start < 6) micros = micros * 10 + d;
    }
    const count = i - start;
    if (count === 0 || count > 9) return false;
    if (count < 6) micros *= POW10[6 - count];
  }
  let offsetSeconds = 0;
  if (i < end) {
    const c = bytes[i];
    if (c === 90 || c === 122) {
      if (i + 1 !== end) return false;
    } else if (c === 43 || c === 45) {
      const hh = twoDigits(bytes, i + 1, end);
      let mm = 0;
      let stop = i + 3;
      if (stop < end) {
        if (bytes[stop] === 58) stop++;
        mm = twoDigits(bytes, stop, end);
        stop += 2;
      }
      if (hh < 0 || mm < 0 || mm > 59 || hh * 60 + mm > MAX_OFFSET_MINUTES || stop !== end) return false;
      if (local && hh + mm !== 0) return false;
      offsetSeconds = (c === 45 ? -60 : 60) * (hh * 60 + mm);
    } else return false;
  }
  const seconds = days * 86_400 + (hour * 60 + minute) * 60 + second - offsetSeconds;
  if (!(seconds < EXACT_SECONDS && seconds > -EXACT_SECONDS)) return false;
  TIMESTAMP_MICROS[0] = seconds * 1_000_000 + micros;
  return true;
}
