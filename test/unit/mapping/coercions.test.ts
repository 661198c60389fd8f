import { describe, expect, it } from 'vitest';
import { RecordDecodeError } from '../../../functions/core/errors.js';
import { JsonNumberText } from '../../../functions/core/records/json-to-value.js';
import { type Coercion, coerceValue, fitValue } from '../../../functions/core/mapping/coercions.js';
import { compileTimestampFormat } from '../../../functions/core/mapping/timestamp-format.js';
import { parseJsonBytes } from '../../../functions/core/records/parse-json.js';
import {
  parseIsoDate,
  parseIsoTime,
  parseIsoTimestamp,
} from '../../../functions/core/records/parse-temporal.js';

const ts = (iso: string) => parseIsoTimestamp(iso);

describe('coerceValue', () => {
  it('parses text with a format, in the configured zone unless the text has an offset', () => {
    const c: Coercion = {
      type: 'timestamptz',
      format: compileTimestampFormat('yyyy-MM-dd HH:mm:ss'),
      zoneMinutes: 120,
    };
    expect(coerceValue(c, '2026-11-20 12:00:00', 'ts')).toBe(ts('2026-11-20T10:00:00Z'));
    const withOffset: Coercion = {
      type: 'timestamptz',
      format: compileTimestampFormat('yyyy-MM-dd HH:mmXXX'),
      zoneMinutes: 120,
    };
    expect(coerceValue(withOffset, '2026-11-20 12:00Z', 'ts')).toBe(ts('2026-11-20T12:00:00Z'));
    const local: Coercion = { type: 'timestamp', format: compileTimestampFormat('dd/MM/yyyy') };
    expect(coerceValue(local, '20/11/2026', 'ts')).toBe(ts('2026-11-20T00:00:00Z'));
    const date: Coercion = { type: 'date', format: compileTimestampFormat('dd/MM/yyyy HH:mm') };
    expect(coerceValue(date, '20/11/2026 23:59', 'd')).toBe(parseIsoDate('2026-11-20'));
  });

  it('applies the zone to ISO text without an offset only', () => {
    const c: Coercion = { type: 'timestamptz', zoneMinutes: -60 };
    expect(coerceValue(c, '2026-11-20T10:00:00', 'ts')).toBe(ts('2026-11-20T11:00:00Z'));
    expect(coerceValue(c, '2026-11-20T10:00:00+00:00', 'ts')).toBe(ts('2026-11-20T10:00:00Z'));
    expect(coerceValue(c, '2026-11-20T10:00:00Z', 'ts')).toBe(ts('2026-11-20T10:00:00Z'));
  });

  it.each([
    ['seconds', 1795168800, '2026-11-20T10:00:00Z'],
    ['seconds', '1795168800', '2026-11-20T10:00:00Z'],
    ['seconds', 1795168800.123456, '2026-11-20T10:00:00.123456Z'],
    ['millis', 1795168800123, '2026-11-20T10:00:00.123Z'],
    ['millis', 1795168800123.5, '2026-11-20T10:00:00.1235Z'],
    ['micros', 1795168800123456, '2026-11-20T10:00:00.123456Z'],
    ['nanos', new JsonNumberText('1795168800123456789'), '2026-11-20T10:00:00.123456Z'],
    ['nanos', new JsonNumberText('-1'), '1969-12-31T23:59:59.999999Z'],
    ['seconds', -1, '1969-12-31T23:59:59Z'],
  ] as const)('epoch %s %s → %s', (unit, value, iso) => {
    expect(coerceValue({ type: 'timestamptz', epoch: unit }, value, 'ts')).toBe(ts(iso));
  });

  it('reads epoch millis by default and epoch days for dates', () => {
    expect(coerceValue({ type: 'timestamptz' }, 1795168800123, 'ts')).toBe(ts('2026-11-20T10:00:00.123Z'));
    expect(coerceValue({ type: 'date', epoch: 'seconds' }, 1795168800, 'd')).toBe(parseIsoDate('2026-11-20'));
    expect(coerceValue({ type: 'date', epoch: 'seconds' }, -1, 'd')).toBe(-1);
  });

  it('reads whole days since the epoch (Debezium Date) for dates and timestamps', () => {
    expect(coerceValue({ type: 'date', epoch: 'days' }, 20412, 'd')).toBe(parseIsoDate('2025-11-20'));
    expect(coerceValue({ type: 'date', epoch: 'days' }, -1, 'd')).toBe(parseIsoDate('1969-12-31'));
    expect(coerceValue({ type: 'timestamp', epoch: 'days' }, '20412', 'ts')).toBe(ts('2025-11-20T00:00:00Z'));
    expect(() => coerceValue({ type: 'date', epoch: 'days' }, 1.5, 'd')).toThrow('d: ');
  });

  it.each([
    ['seconds', 45296, '12:34:56'],
    ['millis', 45296789, '12:34:56.789'],
    ['micros', 45296789012, '12:34:56.789012'],
    ['micros', '0', '00:00:00'],
    ['nanos', new JsonNumberText('86399999999999'), '23:59:59.999999'],
  ] as const)('time since midnight in %s: %j → %s', (unit, value, iso) => {
    expect(coerceValue({ type: 'time', epoch: unit }, value, 't')).toBe(parseIsoTime(iso));
  });

  it('reads ISO text for a time with a unit, and refuses numbers that are not a time of day', () => {
    expect(coerceValue({ type: 'time', epoch: 'micros' }, '12:00:00', 't')).toBe(parseIsoTime('12:00:00'));
    expect(() => coerceValue({ type: 'time', epoch: 'micros' }, 86_400_000_000, 't')).toThrow(
      't: 86400000000 (micros since midnight) is not a time of day',
    );
    expect(() => coerceValue({ type: 'time', epoch: 'millis' }, -1, 't')).toThrow('is not a time of day');
    expect(() => coerceValue({ type: 'time' }, 5, 't')).toThrow('t: expected a time of day');
  });

  it.each([
    [{ type: 'timestamptz', epoch: 'seconds' }, 1.0000001, 'more than 6 decimal places'],
    [{ type: 'timestamptz', epoch: 'millis' }, 9.3e18, 'out of the timestamp range'],
    [
      { type: 'timestamptz', epoch: 'seconds' },
      new JsonNumberText('99999999999999999'),
      'out of the timestamp range',
    ],
    [{ type: 'timestamptz', format: compileTimestampFormat('dd/MM/yyyy') }, '2026-11-20', 'does not match'],
    [{ type: 'timestamptz' }, { at: 1 }, 'expected a timestamptz (text or epoch number)'],
    [{ type: 'long' }, '12abc', 'expected integer text for a long'],
    [{ type: 'long' }, '99999999999999999999', 'out of range for a long'],
    [{ type: 'int' }, '2147483648', 'out of range for an int'],
    [{ type: 'double' }, '1e400', 'out of range for a double'],
    [{ type: 'double' }, 'abc', 'expected a number'],
    [{ type: 'boolean' }, 'yes', 'expected a boolean'],
    [{ type: 'decimal(5, 2)' }, 'NaN', "'NaN' is not a decimal number"],
    [{ type: 'decimal(5, 2)' }, 1234.5, 'does not fit decimal(5, 2)'],
  ] as [Coercion, unknown, string][])('%j refuses %j', (c, value, message) => {
    expect(() => coerceValue(c, value, 'col')).toThrow(RecordDecodeError);
    expect(() => coerceValue(c, value, 'col')).toThrow(`col: `);
    expect(() => coerceValue(c, value, 'col')).toThrow(message);
  });

  it('converts text to numbers and numbers to text exactly', () => {
    expect(coerceValue({ type: 'long' }, '9007199254740993', 'n')).toBe(9007199254740993n);
    expect(coerceValue({ type: 'int' }, ' -42 ', 'n')).toBe(-42);
    expect(coerceValue({ type: 'double' }, '1.5e3', 'n')).toBe(1500);
    expect(coerceValue({ type: 'boolean' }, 'false', 'b')).toBe(false);
    const parsed = parseJsonBytes(new TextEncoder().encode('{"n": 12345678901234567.25}')) as { n: unknown };
    expect(coerceValue({ type: 'string' }, parsed.n, 's')).toBe('12345678901234567.25');
    expect(coerceValue({ type: 'decimal(20, 2)' }, parsed.n, 'd')).toBe(1234567890123456725n);
    expect(coerceValue({ type: 'decimal(10, 2)' }, 0.1, 'd')).toBe(10n);
    expect(coerceValue({ type: 'decimal(10, 2)' }, '-12.30', 'd')).toBe(-1230n);
    expect(coerceValue({ type: 'string' }, 7n, 's')).toBe('7');
    expect(coerceValue({ type: 'string' }, true, 's')).toBe('true');
    expect(coerceValue({ type: 'long' }, null, 'n')).toBeNull();
  });
});

describe('fitValue', () => {
  it('widens into wider columns and checks narrower ones', () => {
    expect(fitValue(5, 'int', 'long', 'x')).toBe(5n);
    expect(fitValue(1.5, 'float', 'double', 'x')).toBe(1.5);
    expect(fitValue(12345n, 'decimal(10, 2)', 'decimal(12, 2)', 'x')).toBe(12345n);
    expect(fitValue(5n, 'long', 'int', 'x')).toBe(5);
    expect(() => fitValue(2n ** 40n, 'long', 'int', 'x')).toThrow('does not fit the int column');
    expect(() => fitValue(12345678901n, 'decimal(12, 2)', 'decimal(10, 2)', 'x')).toThrow(
      'does not fit decimal(10, 2)',
    );
    expect(() => fitValue(0.1, 'double', 'float', 'x')).toThrow('does not fit the float column exactly');
    expect(() => fitValue('a', 'string', 'long', 'x')).toThrow(
      'a string value cannot be stored in the long column',
    );
  });
});
