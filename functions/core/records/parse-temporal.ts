/**
 * ISO-8601 text → Iceberg temporal values (date = days, time/timestamp = µs), exactly, in integers.
 * Written by hand: `Date.parse` keeps only milliseconds, accepts non-ISO text, and cannot reach
 * Iceberg's range; no small library parses to microseconds.
 */
import { ValidationError } from '../errors.js';
import { daysFromCivil } from '../spec/epoch-time.js';

// Years beyond four digits need their sign (ISO 8601 expanded years, as java.time reads them):
// `+10000-01-01`, never `10000-01-01`, which java.time and Spark refuse.
const DATE = /^([+-]\d{4,6}|\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?$/;
const TIMESTAMP =
  /^([+-]\d{4,6}|\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;
/** An unsigned year of five or more digits: refused with its own reason. */
const UNSIGNED_LONG_YEAR = /^\s*\d{5,}-/;
/** ISO 8601 and java.time's ZoneOffset stop at ±18:00. */
const MAX_OFFSET_MINUTES = 18 * 60;

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function checkedDays(y: string, m: string, d: string, text: string): number {
  const year = Number(y);
  const month = Number(m);
  const day = Number(d);
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const max = month === 2 && !leap ? 28 : DAYS_IN_MONTH[month - 1];
  if (month < 1 || month > 12 || day < 1 || day > (max ?? 0))
    throw new ValidationError(`'${text}' is not a valid date`);
  return daysFromCivil(year, month, day);
}

function fractionMicros(fraction: string | undefined): bigint {
  // Nanosecond digits beyond microseconds are truncated: Iceberg timestamps hold µs.
  return fraction ? BigInt(fraction.slice(0, 6).padEnd(6, '0')) : 0n;
}

function clockMicros(
  h: string | undefined,
  mi: string | undefined,
  s: string | undefined,
  f: string | undefined,
  text: string,
): bigint {
  const hour = Number(h ?? 0);
  const minute = Number(mi ?? 0);
  const second = Number(s ?? 0);
  if (hour > 23 || minute > 59 || second > 59)
    throw new ValidationError(`'${text}' has an invalid time of day`);
  return BigInt((hour * 60 + minute) * 60 + second) * 1_000_000n + fractionMicros(f);
}

function notIso(text: string, what: string): never {
  if (UNSIGNED_LONG_YEAR.test(text))
    throw new ValidationError(
      `'${text}' has a year of more than four digits without a sign (ISO 8601 writes it +${text.trim().split('-')[0]}-…)`,
    );
  throw new ValidationError(`'${text}' is not an ISO-8601 ${what}`);
}

/**
 * Minutes east of UTC of a `±HH`, `±HHMM` or `±HH:MM` offset. An offset past ±18:00 or with minutes
 * past 59 is no offset at all: shifting the instant by it would store a time nobody wrote.
 * @throws ValidationError
 */
function offsetMinutesOf(zone: string, text: string): number {
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2, 4) || 0);
  if (minutes > 59 || hours * 60 + minutes > MAX_OFFSET_MINUTES)
    throw new ValidationError(`'${text}' has the zone offset ${zone}, beyond ±18:00 (or minutes past 59)`);
  return (zone[0] === '-' ? -1 : 1) * (hours * 60 + minutes);
}

/*
 * Fast paths for the canonical forms producers send (`YYYY-MM-DD`, `YYYY-MM-DDTHH:MM:SS[.f](Z|±HH:MM)`),
 * read with charCodeAt instead of a regex, Number and string slices: ingest parses one per value. They
 * return undefined for anything else and for every invalid value, so the regex path below gives the
 * result or the error, exactly as before; test/unit/ingest/parse-temporal-fast.test.ts holds them equal.
 */

const POW10 = [1, 10, 100, 1000, 10_000, 100_000, 1_000_000];
/** |seconds| below this keeps seconds × 10^6 + µs under 2^53, so Number arithmetic is exact. */
const EXACT_SECONDS = 9_000_000_000;

/** The value of two ASCII digits at i, i + 1; -1 when either is not a digit (or past the end). */
function twoDigits(text: string, i: number): number {
  const a = text.charCodeAt(i) - 48;
  const b = text.charCodeAt(i + 1) - 48;
  // NaN (past the end) fails the range tests too.
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/** Days of a valid `YYYY-MM-DD` opening `text`; undefined otherwise. */
function fastDays(text: string): number | undefined {
  if (text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45) return undefined;
  const century = twoDigits(text, 0);
  const yy = twoDigits(text, 2);
  const month = twoDigits(text, 5);
  const day = twoDigits(text, 8);
  if (century < 0 || yy < 0 || month < 1 || month > 12 || day < 1) return undefined;
  const year = century * 100 + yy;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  if (day > (month === 2 && !leap ? 28 : DAYS_IN_MONTH[month - 1])) return undefined;
  return daysFromCivil(year, month, day);
}

/**
 * µs of a valid canonical timestamp (T or space, optional fraction and zone); undefined otherwise.
 * `local`: a nonzero offset is left to the regex path too (which refuses it, see parseIsoTimestamp).
 */
function fastTimestamp(text: string, local: boolean): bigint | undefined {
  const len = text.length;
  const sep = text.charCodeAt(10);
  if (len < 19 || (sep !== 84 && sep !== 32) || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58)
    return undefined;
  const days = fastDays(text);
  const hour = twoDigits(text, 11);
  const minute = twoDigits(text, 14);
  const second = twoDigits(text, 17);
  if (days === undefined || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59)
    return undefined;
  let i = 19;
  let micros = 0;
  if (text.charCodeAt(i) === 46) {
    const start = ++i;
    for (let d = text.charCodeAt(i) - 48; d >= 0 && d <= 9; d = text.charCodeAt(++i) - 48) {
      if (i - start < 6) micros = micros * 10 + d; // digits past µs are truncated, as fractionMicros does
    }
    const count = i - start;
    if (count === 0 || count > 9) return undefined;
    if (count < 6) micros *= POW10[6 - count];
  }
  let offsetSeconds = 0;
  if (i < len) {
    const c = text.charCodeAt(i);
    if (c === 90 || c === 122) {
      if (i + 1 !== len) return undefined;
    } else if (c === 43 || c === 45) {
      // ±HH, ±HHMM or ±HH:MM; one out of range is left to the regex path, which words the error.
      const hh = twoDigits(text, i + 1);
      let mm = 0;
      let end = i + 3;
      if (end < len) {
        if (text.charCodeAt(end) === 58) end++;
        mm = twoDigits(text, end);
        end += 2;
      }
      if (hh < 0 || mm < 0 || mm > 59 || hh * 60 + mm > MAX_OFFSET_MINUTES || end !== len) return undefined;
      if (local && hh + mm !== 0) return undefined;
      offsetSeconds = (c === 45 ? -60 : 60) * (hh * 60 + mm);
    } else return undefined;
  }
  const seconds = days * 86_400 + (hour * 60 + minute) * 60 + second - offsetSeconds;
  if (seconds < EXACT_SECONDS && seconds > -EXACT_SECONDS) return BigInt(seconds * 1_000_000 + micros);
  return BigInt(seconds) * 1_000_000n + BigInt(micros);
}

/** `YYYY-MM-DD` → days since 1970-01-01. @throws ValidationError */
export function parseIsoDate(text: string): number {
  if (text.length === 10) {
    const days = fastDays(text);
    if (days !== undefined) return days;
  }
  const m = DATE.exec(text.trim());
  if (!m) notIso(text, 'date (YYYY-MM-DD)');
  return checkedDays(m[1], m[2], m[3], text);
}

/** `HH:MM[:SS[.ffffff]]` → µs since midnight. @throws ValidationError */
export function parseIsoTime(text: string): bigint {
  const m = TIME.exec(text.trim());
  if (!m) throw new ValidationError(`'${text}' is not an ISO-8601 time (HH:MM:SS[.ffffff])`);
  return clockMicros(m[1], m[2], m[3], m[4], text);
}

/**
 * ISO-8601 date-time → µs since the epoch, UTC. A date alone means midnight. Without an offset the
 * text is taken as UTC.
 *
 * `local` (a `timestamp` column, without zone): the value is the wall-clock time as written, which
 * Spark and Iceberg Java read as local time. An offset of zero (`Z`, `+00:00`) leaves the written
 * wall clock and the UTC one the same, so it is taken; any other offset is refused: storing the UTC
 * wall clock would silently change the digits written, storing the written ones would silently drop
 * the offset, and neither is what every producer means.
 * @throws ValidationError
 */
export function parseIsoTimestamp(text: string, local = false): bigint {
  const fast = fastTimestamp(text, local);
  if (fast !== undefined) return fast;
  const m = TIMESTAMP.exec(text.trim());
  if (!m) notIso(text, 'timestamp');
  const days = checkedDays(m[1], m[2], m[3], text);
  let micros = BigInt(days) * 86_400_000_000n + clockMicros(m[4], m[5], m[6], m[7], text);
  const zone = m[8];
  if (zone && zone !== 'Z' && zone !== 'z') {
    const offset = offsetMinutesOf(zone, text);
    if (local && offset !== 0)
      throw new ValidationError(
        `'${text}' has the zone offset ${zone}, but the column is a timestamp without zone (local wall-clock time): send the time without an offset, or make the column timestamptz`,
      );
    micros -= BigInt(offset) * 60_000_000n;
  }
  return micros;
}
