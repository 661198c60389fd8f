/**
 * ISO-8601 text → Iceberg temporal values (date = days, time/timestamp = µs), exactly, in integers.
 * Written by hand: `Date.parse` keeps only milliseconds, accepts non-ISO text, and cannot reach
 * Iceberg's range; no small library parses to microseconds.
 */
import { ValidationError } from '../errors.js';
import { daysFromCivil } from '../spec/epoch-time.js';

const DATE = /^([+-]?\d{4,6})-(\d{2})-(\d{2})$/;
const TIME = /^(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?$/;
const TIMESTAMP =
  /^([+-]?\d{4,6})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

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

/** `YYYY-MM-DD` → days since 1970-01-01. @throws ValidationError */
export function parseIsoDate(text: string): number {
  const m = DATE.exec(text.trim());
  if (!m) throw new ValidationError(`'${text}' is not an ISO-8601 date (YYYY-MM-DD)`);
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
 * text is taken as UTC (for `timestamp`, the wall-clock value itself).
 * @throws ValidationError
 */
export function parseIsoTimestamp(text: string): bigint {
  const m = TIMESTAMP.exec(text.trim());
  if (!m) throw new ValidationError(`'${text}' is not an ISO-8601 timestamp`);
  const days = checkedDays(m[1], m[2], m[3], text);
  let micros = BigInt(days) * 86_400_000_000n + clockMicros(m[4], m[5], m[6], m[7], text);
  const zone = m[8];
  if (zone && zone !== 'Z' && zone !== 'z') {
    const sign = zone[0] === '-' ? -1n : 1n;
    const digits = zone.slice(1).replace(':', '');
    const offsetMinutes = BigInt(Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || 0));
    micros -= sign * offsetMinutes * 60_000_000n;
  }
  return micros;
}
