import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import { compileTimestampFormat, parseZoneOffset } from '../../../functions/core/mapping/timestamp-format.js';
import { parseIsoDate, parseIsoTimestamp } from '../../../functions/core/records/parse-temporal.js';

/** µs of a parsed value, as UTC, for comparing with the ISO parser no one changed here. */
function utcMicros(pattern: string, text: string): bigint {
  const parsed = compileTimestampFormat(pattern).parse(text);
  return (
    BigInt(parsed.days) * 86_400_000_000n + parsed.micros - BigInt(parsed.offsetMinutes ?? 0) * 60_000_000n
  );
}

describe('compileTimestampFormat', () => {
  it.each([
    ['yyyy-MM-dd HH:mm:ss', '2026-11-20 10:00:05', '2026-11-20T10:00:05Z'],
    ['dd/MM/yyyy', '20/11/2026', '2026-11-20T00:00:00Z'],
    ['dd/MM/yyyy HH:mm', '01/02/2026 23:59', '2026-02-01T23:59:00Z'],
    ["yyyyMMdd'T'HHmmss.SSS", '20261120T100005.123', '2026-11-20T10:00:05.123Z'],
    ['yyyy-MM-dd HH:mm:ss.SSSSSS', '2026-11-20 10:00:05.000001', '2026-11-20T10:00:05.000001Z'],
    ['yyyy-MM-dd HH:mm:ss.SSSSSSSSS', '2026-11-20 10:00:05.123456789', '2026-11-20T10:00:05.123456Z'],
    ["yyyy-MM-dd'T'HH:mm:ssXXX", '2026-11-20T11:00:00+01:00', '2026-11-20T10:00:00Z'],
    ["yyyy-MM-dd'T'HH:mm:ssXXX", '2026-11-20T10:00:00Z', '2026-11-20T10:00:00Z'],
    ['yyyy-MM-dd HH:mm:ss Z', '2026-11-20 05:30:00 -0430', '2026-11-20T10:00:00Z'],
    ['d MMM yyyy h:mm a', '3 Feb 2026 1:05 PM', '2026-02-03T13:05:00Z'],
    ['d MMM yyyy h:mm a', '3 feb 2026 12:05 am', '2026-02-03T00:05:00Z'],
    ['dd.MM.yy', '29.02.24', '2024-02-29T00:00:00Z'],
    ["yyyy-MM-dd 'at' HH''mm", "2026-11-20 at 10'30", '2026-11-20T10:30:00Z'],
  ])('%s parses %s exactly', (pattern, text, iso) => {
    expect(utcMicros(pattern, text)).toBe(parseIsoTimestamp(iso));
  });

  it.each([
    ['dd/MM/yyyy', '31/02/2026', 'is not a valid date'],
    ['dd/MM/yyyy', '29/02/2025', 'is not a valid date'],
    ['dd/MM/yyyy', '2026-02-01', "does not match the format 'dd/MM/yyyy'"],
    ['yyyy-MM-dd HH:mm:ss', '2026-11-20 24:00:00', 'invalid time of day'],
    ['yyyy-MM-dd HH:mm:ss', '2026-11-20 10:00', 'does not match'],
    ['d MMM yyyy', '3 Foo 2026', 'is not a valid date'],
    ['d MMM yyyy h:mm a', '3 Feb 2026 13:05 PM', "invalid hour for 'h'"],
    ["yyyy-MM-dd'T'HH:mm:ssXXX", '2026-11-20T10:00:00+19:00', 'beyond ±18:00'],
  ])('%s refuses %s', (pattern, text, message) => {
    const format = compileTimestampFormat(pattern);
    expect(() => format.parse(text)).toThrow(ValidationError);
    expect(() => format.parse(text)).toThrow(message);
  });

  it.each([
    ['HH:mm', 'needs a year'],
    ['yyyy-MM', 'needs a year (yyyy), a month (MM) and a day'],
    ['yyyy-MM-dd QQ', "'QQ' is not a supported pattern"],
    ['yyy-MM-dd', "'yyy' is not a supported pattern"],
    ['yyyy-MM-dd-yyyy', "'y' appears more than once"],
    ["yyyy-MM-dd 'T", 'unterminated quote'],
    ['yyyy-MM-dd hh:mm', "'h' (1-12) and 'a' (AM/PM) go together"],
  ])('refuses the pattern %s at start-up', (pattern, message) => {
    expect(() => compileTimestampFormat(pattern)).toThrow(message);
  });

  it('escapes regex characters in literals', () => {
    const format = compileTimestampFormat('yyyy.MM.dd');
    expect(() => format.parse('2026x11x20')).toThrow('does not match');
    expect(format.parse('2026.11.20').days).toBe(parseIsoDate('2026-11-20'));
  });
});

describe('parseZoneOffset', () => {
  it('reads fixed offsets and refuses named zones', () => {
    expect(parseZoneOffset('UTC')).toBe(0);
    expect(parseZoneOffset('+02:00')).toBe(120);
    expect(parseZoneOffset('-04:30')).toBe(-270);
    expect(() => parseZoneOffset('Europe/Berlin')).toThrow('fixed offset');
    expect(() => parseZoneOffset('+19:00')).toThrow('fixed offset');
  });
});
