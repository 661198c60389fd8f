/**
 * ISO-8601 text → Iceberg's temporal values (date = days since 1970-01-01, time = µs since midnight,
 * timestamp(tz) = µs since the epoch, timestamp(tz)_ns = ns since the epoch), exact to the microsecond
 * (nanosecond for the _ns types) in the proleptic Gregorian calendar.
 *
 * Hand-written rather than `Date.parse`: Date keeps milliseconds only, treats zone-less date-times as
 * local time, maps years 0–99 to 1900–1999, and accepts many non-ISO shapes.
 */
import { ValidationError } from '../errors.js';
import { daysFromCivil, MICROS_PER_DAY } from '../spec/epoch-time.js';

// Years beyond four digits need their sign (ISO 8601 expanded years; java.time refuses `10000-01-01`),
// as ingest reads them (ingest/parse-temporal.ts).
const DATE = /^([+-]\d{4,6}|\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?$/;
const DATE_TIME =
  /^([+-]\d{4,6}|\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function checkedDays(text: string, y: string, m: string, d: string): number {
  const year = Number(y);
  const month = Number(m);
  const day = Number(d);
  const monthDays = [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  if (month < 1 || month > 12 || day < 1 || day > monthDays[month - 1]) {
    throw new ValidationError(`'${text}' is not a valid date`);
  }
  return daysFromCivil(year, month, day);
}

function checkedMicrosOfDay(text: string, h: string, mi: string, s?: string, frac?: string): bigint {
  const digits = (frac ?? '').padEnd(9, '0');
  if (/[1-9]/.test(digits.slice(6))) {
    throw new ValidationError(`'${text}' is more precise than Iceberg's microseconds`);
  }
  return checkedNanosOfDay(text, h, mi, s, frac) / 1000n;
}

function checkedNanosOfDay(text: string, h: string, mi: string, s?: string, frac?: string): bigint {
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s ?? '0');
  if (hour > 23 || minute > 59 || second > 59) throw new ValidationError(`'${text}' is not a valid time`);
  const digits = (frac ?? '').padEnd(9, '0');
  return BigInt((hour * 60 + minute) * 60 + second) * 1_000_000_000n + BigInt(digits);
}

/** `YYYY-MM-DD` → days since the epoch. @throws ValidationError for anything else */
export function parseDate(text: string): number {
  const m = DATE.exec(text.trim());
  if (!m) throw new ValidationError(`'${text}' is not a date (expected YYYY-MM-DD)`);
  return checkedDays(text, m[1], m[2], m[3]);
}

/** `HH:MM[:SS[.fraction]]` → µs since midnight. @throws ValidationError */
export function parseTime(text: string): bigint {
  const m = TIME.exec(text.trim());
  if (!m) throw new ValidationError(`'${text}' is not a time (expected HH:MM:SS[.ffffff])`);
  return checkedMicrosOfDay(text, m[1], m[2], m[3], m[4]);
}

/**
 * An ISO-8601 date or date-time → µs since the epoch. A date alone means midnight. With
 * `withZone` (timestamptz) an offset is applied and a missing one means UTC; without it (timestamp)
 * an offset is refused, since a zone-less column cannot say which instant the text means.
 * @throws ValidationError for malformed text or an offset on a timestamp without zone
 */
export function parseTimestamp(text: string, withZone: boolean): bigint {
  return parseInstant(text, withZone, false);
}

/**
 * As parseTimestamp, to ns since the epoch (timestamp_ns, timestamptz_ns): up to nine fraction digits.
 * @throws ValidationError for malformed text or an offset on a timestamp without zone
 */
export function parseTimestampNanos(text: string, withZone: boolean): bigint {
  return parseInstant(text, withZone, true);
}

function parseInstant(text: string, withZone: boolean, nanos: boolean): bigint {
  const unitsPerMicro = nanos ? 1000n : 1n;
  const trimmed = text.trim();
  const date = DATE.exec(trimmed);
  if (date) return BigInt(checkedDays(text, date[1], date[2], date[3])) * MICROS_PER_DAY * unitsPerMicro;
  const m = DATE_TIME.exec(trimmed);
  if (!m) {
    throw new ValidationError(
      `'${text}' is not an ISO-8601 timestamp (expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS[.ffffff]${withZone ? '[Z|±HH:MM]' : ''})`,
    );
  }
  const days = checkedDays(text, m[1], m[2], m[3]);
  const ofDay = nanos
    ? checkedNanosOfDay(text, m[4], m[5], m[6], m[7])
    : checkedMicrosOfDay(text, m[4], m[5], m[6], m[7]);
  let value = BigInt(days) * MICROS_PER_DAY * unitsPerMicro + ofDay;
  const zone = m[8];
  if (zone !== undefined && !withZone) {
    throw new ValidationError(
      `'${text}' has a time zone, but the column is a timestamp without zone; drop the '${zone}'`,
    );
  }
  if (zone !== undefined && zone.toUpperCase() !== 'Z') {
    const sign = zone[0] === '-' ? -1n : 1n;
    const digits = zone.slice(1).replace(':', '');
    const hours = Number(digits.slice(0, 2));
    const minutes = Number(digits.slice(2) || '0');
    // ±18:00 at most, as ISO 8601 and java.time's ZoneOffset (+18:30 is no offset).
    if (minutes > 59 || hours * 60 + minutes > 18 * 60)
      throw new ValidationError(`'${text}' has an invalid zone offset`);
    // local = UTC + offset, so UTC = local − offset.
    value -= sign * BigInt((hours * 60 + minutes) * 60) * 1_000_000n * unitsPerMicro;
  }
  return value;
}
