/**
 * Date-time patterns in the letters users know from Java's DateTimeFormatter (`yyyy-MM-dd HH:mm:ss`,
 * `dd/MM/yyyy`, `yyyyMMdd'T'HHmmss.SSSXXX`), compiled once at start-up into a strict parser that
 * returns exact microseconds. Written by hand: no installed library parses to microseconds, and
 * `Date.parse` guesses (it accepts `02/03/2026` in a locale-dependent way and keeps milliseconds only).
 *
 * Letters: y/u (yyyy = 4 digits, yy = 2000 + 2 digits), M (M, MM, MMM = Jan..Dec), d, H (0-23),
 * h (1-12, needs `a` = AM/PM), m, s, S (n letters = exactly n fraction digits, up to 9; digits past
 * microseconds are dropped, as Iceberg keeps µs), X/XX/XXX (Z or an offset), Z (+HHMM). Text in single
 * quotes is literal (`''` is a quote); any other non-letter is literal.
 */
import { ValidationError } from '../errors.js';
import { daysFromCivil } from '../spec/epoch-time.js';

export interface ParsedDateTime {
  /** Days since 1970-01-01 of the written date. */
  days: number;
  /** Microseconds since midnight of the written time (0 when the pattern has no time). */
  micros: bigint;
  /** Offset written in the text, in minutes east of UTC; undefined when the text has none. */
  offsetMinutes?: number;
}

export interface TimestampFormat {
  readonly pattern: string;
  readonly hasTime: boolean;
  readonly hasOffset: boolean;
  /** @throws ValidationError naming the text when it does not match or is not a real date/time */
  parse(text: string): ParsedDateTime;
}

type Slot =
  | 'year4'
  | 'year2'
  | 'month'
  | 'monthName'
  | 'day'
  | 'hour24'
  | 'hour12'
  | 'ampm'
  | 'minute'
  | 'second'
  | 'fraction'
  | 'offsetX'
  | 'offsetZ';

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

function letterToken(letter: string, count: number, pattern: string): { slot: Slot; regex: string } {
  const bad = (): never => {
    throw new ValidationError(
      `timestamp format '${pattern}': '${letter.repeat(count)}' is not a supported pattern (see the letters in the mapping docs)`,
    );
  };
  switch (letter) {
    case 'y':
    case 'u':
      if (count === 4) return { slot: 'year4', regex: '(\\d{4})' };
      if (count === 2) return { slot: 'year2', regex: '(\\d{2})' };
      return bad();
    case 'M':
      if (count === 1) return { slot: 'month', regex: '(\\d{1,2})' };
      if (count === 2) return { slot: 'month', regex: '(\\d{2})' };
      if (count === 3) return { slot: 'monthName', regex: '([A-Za-z]{3})' };
      return bad();
    case 'd':
      return count <= 2 ? { slot: 'day', regex: count === 1 ? '(\\d{1,2})' : '(\\d{2})' } : bad();
    case 'H':
      return count <= 2 ? { slot: 'hour24', regex: count === 1 ? '(\\d{1,2})' : '(\\d{2})' } : bad();
    case 'h':
      return count <= 2 ? { slot: 'hour12', regex: count === 1 ? '(\\d{1,2})' : '(\\d{2})' } : bad();
    case 'a':
      return count === 1 ? { slot: 'ampm', regex: '([AaPp][Mm])' } : bad();
    case 'm':
      return count <= 2 ? { slot: 'minute', regex: count === 1 ? '(\\d{1,2})' : '(\\d{2})' } : bad();
    case 's':
      return count <= 2 ? { slot: 'second', regex: count === 1 ? '(\\d{1,2})' : '(\\d{2})' } : bad();
    case 'S':
      return count <= 9 ? { slot: 'fraction', regex: `(\\d{${count}})` } : bad();
    case 'X':
      if (count === 1) return { slot: 'offsetX', regex: '(Z|[+-]\\d{2}(?:\\d{2})?)' };
      if (count === 2) return { slot: 'offsetX', regex: '(Z|[+-]\\d{4})' };
      if (count === 3) return { slot: 'offsetX', regex: '(Z|[+-]\\d{2}:\\d{2})' };
      return bad();
    case 'Z':
      return count <= 3 ? { slot: 'offsetZ', regex: '([+-]\\d{4})' } : bad();
    default:
      return bad();
  }
}

/** ISO 8601 and java.time's ZoneOffset stop at ±18:00. */
const MAX_OFFSET_MINUTES = 18 * 60;

/** Minutes east of UTC; undefined for an offset that is none (minutes past 59, beyond ±18:00). */
function offsetMinutesOf(text: string): number | undefined {
  if (text === 'Z') return 0;
  const sign = text[0] === '-' ? -1 : 1;
  const digits = text.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2, 4) || 0);
  if (minutes > 59 || hours * 60 + minutes > MAX_OFFSET_MINUTES) return undefined;
  return sign * (hours * 60 + minutes);
}

/**
 * Compiles a pattern. Needs a year, a month and a day; `h` needs `a`; each field at most once.
 * @throws ValidationError for unknown letters, repeated fields or a pattern without a full date
 */
export function compileTimestampFormat(pattern: string): TimestampFormat {
  const slots: Slot[] = [];
  let regex = '';
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === "'") {
      const end = pattern.indexOf("'", i + 1);
      if (end === -1) throw new ValidationError(`timestamp format '${pattern}': unterminated quote`);
      regex += end === i + 1 ? "'" : escapeRegex(pattern.slice(i + 1, end));
      i = end + 1;
      continue;
    }
    if (/[A-Za-z]/.test(c)) {
      let count = 1;
      while (pattern[i + count] === c) count++;
      const token = letterToken(c, count, pattern);
      const family = token.slot === 'monthName' ? 'month' : token.slot === 'offsetZ' ? 'offsetX' : token.slot;
      if (slots.some((s) => (s === 'monthName' ? 'month' : s === 'offsetZ' ? 'offsetX' : s) === family)) {
        throw new ValidationError(`timestamp format '${pattern}': '${c}' appears more than once`);
      }
      slots.push(token.slot);
      regex += token.regex;
      i += count;
      continue;
    }
    regex += escapeRegex(c);
    i++;
  }
  const has = (...s: Slot[]) => s.some((x) => slots.includes(x));
  if (!has('year4', 'year2') || !has('month', 'monthName') || !has('day')) {
    throw new ValidationError(
      `timestamp format '${pattern}': needs a year (yyyy), a month (MM) and a day (dd)`,
    );
  }
  if (has('hour12') !== has('ampm')) {
    throw new ValidationError(`timestamp format '${pattern}': 'h' (1-12) and 'a' (AM/PM) go together`);
  }
  const compiled = new RegExp(`^${regex}$`);
  const hasTime = has('hour24', 'hour12');
  const hasOffset = has('offsetX', 'offsetZ');

  return {
    pattern,
    hasTime,
    hasOffset,
    parse(text: string): ParsedDateTime {
      const m = compiled.exec(text);
      if (!m) throw new ValidationError(`'${clip(text)}' does not match the format '${pattern}'`);
      let year = 0;
      let month = 1;
      let day = 1;
      let hour = 0;
      let minute = 0;
      let second = 0;
      let fraction = '';
      let pm: boolean | undefined;
      let offsetMinutes: number | undefined;
      let badOffset: string | undefined;
      slots.forEach((slot, k) => {
        const g = m[k + 1];
        switch (slot) {
          case 'year4':
            year = Number(g);
            break;
          case 'year2':
            year = 2000 + Number(g);
            break;
          case 'month':
            month = Number(g);
            break;
          case 'monthName':
            month = MONTHS.indexOf(g.toLowerCase()) + 1;
            break;
          case 'day':
            day = Number(g);
            break;
          case 'hour24':
          case 'hour12':
            hour = Number(g);
            break;
          case 'ampm':
            pm = g.toLowerCase() === 'pm';
            break;
          case 'minute':
            minute = Number(g);
            break;
          case 'second':
            second = Number(g);
            break;
          case 'fraction':
            fraction = g;
            break;
          case 'offsetX':
          case 'offsetZ':
            offsetMinutes = offsetMinutesOf(g);
            if (offsetMinutes === undefined) badOffset = g;
            break;
        }
      });
      if (pm !== undefined) {
        if (hour < 1 || hour > 12) throw new ValidationError(`'${clip(text)}' has an invalid hour for 'h'`);
        hour = (hour % 12) + (pm ? 12 : 0);
      }
      const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
      const maxDay = month === 2 && !leap ? 28 : (DAYS_IN_MONTH[month - 1] ?? 0);
      if (month < 1 || month > 12 || day < 1 || day > maxDay) {
        throw new ValidationError(`'${clip(text)}' is not a valid date (format '${pattern}')`);
      }
      if (hour > 23 || minute > 59 || second > 59) {
        throw new ValidationError(`'${clip(text)}' has an invalid time of day (format '${pattern}')`);
      }
      if (badOffset !== undefined) {
        throw new ValidationError(
          `'${clip(text)}' has the zone offset ${badOffset}, beyond ±18:00 (or minutes past 59)`,
        );
      }
      const micros =
        BigInt((hour * 60 + minute) * 60 + second) * 1_000_000n +
        (fraction ? BigInt(fraction.slice(0, 6).padEnd(6, '0')) : 0n);
      return { days: daysFromCivil(year, month, day), micros, offsetMinutes };
    },
  };
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/**
 * A fixed zone offset for timestamps written without one: `UTC`, `Z`, or `±HH:MM`.
 * Named zones (Europe/Berlin) are not supported: their offset changes with the date, and guessing
 * around DST gaps is what this layer refuses to do.
 * @throws ValidationError
 */
export function parseZoneOffset(text: string): number {
  if (text === 'UTC' || text === 'Z') return 0;
  const m = /^([+-])(\d{2}):(\d{2})$/.exec(text);
  if (!m || Number(m[3]) > 59 || Number(m[2]) * 60 + Number(m[3]) > MAX_OFFSET_MINUTES) {
    throw new ValidationError(`zone '${text}' must be UTC, Z or a fixed offset like +02:00`);
  }
  return (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]));
}
