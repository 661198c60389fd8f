/**
 * Every place floe reads a zone offset or a year takes the same rules (issue 20, items 9 and 13):
 * offsets within ±18:00 with minutes 00–59 (what ISO 8601 and java.time's ZoneOffset accept), years
 * of more than four digits only with their sign, and no nonzero offset on a timestamp without zone.
 * Expected microseconds are worked out with Python's datetime, not by floe.
 */
import { describe, expect, it } from 'vitest';
import { connectFieldTypes, fromConnectSchema } from '../../../functions/core/cdc/connect-logical.js';
import { jsonToValue } from '../../../functions/core/records/json-to-value.js';
import { coerceValue } from '../../../functions/core/mapping/coercions.js';
import { compileTimestampFormat, parseZoneOffset } from '../../../functions/core/mapping/timestamp-format.js';
import { parseIsoDate, parseIsoTimestamp } from '../../../functions/core/records/parse-temporal.js';
import { parseDate, parseTimestamp } from '../../../functions/core/scan/temporal-literal.js';

/** 2026-11-20T10:00:00Z in µs: datetime(2026, 11, 20, 10, tzinfo=timezone.utc). */
const NOV20_10Z = 1_795_168_800_000_000n;
const HOUR = 3_600_000_000n;

describe('zone offsets', () => {
  it.each([
    ['+18:00', NOV20_10Z - 18n * HOUR],
    ['-18:00', NOV20_10Z + 18n * HOUR],
    ['+1800', NOV20_10Z - 18n * HOUR],
    ['-05', NOV20_10Z + 5n * HOUR],
    ['+05:45', NOV20_10Z - 5n * HOUR - 45n * 60_000_000n],
  ])('ISO text takes %s', (offset, micros) => {
    expect(parseIsoTimestamp(`2026-11-20T10:00:00${offset}`)).toBe(micros);
    expect(parseTimestamp(`2026-11-20T10:00:00${offset}`, true)).toBe(micros);
  });

  it.each(['+25:00', '-99:99', '+2500', '+18:01', '-18:30', '+12:60', '+0060', '+19'])(
    'ISO text refuses %s: ingest with the reason, --where literals too',
    (offset) => {
      const text = `2026-11-20T10:00:00${offset}`;
      expect(() => parseIsoTimestamp(text)).toThrow(
        `'${text}' has the zone offset ${offset}, beyond ±18:00 (or minutes past 59)`,
      );
      expect(() => parseTimestamp(text, true)).toThrow(`'${text}' has an invalid zone offset`);
    },
  );

  it('a pattern with an offset takes ±18:00 and refuses what lies beyond or has minutes past 59', () => {
    const xx = compileTimestampFormat("yyyyMMdd'T'HHmmssXX");
    expect(xx.parse('20261120T100000-1800').offsetMinutes).toBe(-1080);
    expect(() => xx.parse('20261120T100000+1801')).toThrow('has the zone offset +1801, beyond ±18:00');
    expect(() => xx.parse('20261120T100000+1260')).toThrow('has the zone offset +1260, beyond ±18:00');
    expect(() => xx.parse('20261120T100000+2500')).toThrow('has the zone offset +2500, beyond ±18:00');
    const xxx = compileTimestampFormat('yyyy-MM-dd HH:mm XXX');
    expect(() => xxx.parse('2026-11-20 10:00 -99:99')).toThrow('has the zone offset -99:99');
    expect(xxx.parse('2026-11-20 10:00 +05:30').offsetMinutes).toBe(330);
  });

  it('a configured zone is a fixed offset within ±18:00', () => {
    expect(parseZoneOffset('+18:00')).toBe(1080);
    expect(parseZoneOffset('-18:00')).toBe(-1080);
    for (const zone of ['+18:30', '+18:59', '-19:00', '+05:60']) {
      expect(() => parseZoneOffset(zone), zone).toThrow('must be UTC, Z or a fixed offset');
    }
  });
});

describe('five-digit years need their sign', () => {
  it('ISO dates and timestamps', () => {
    // Python: (date(9999, 12, 31) - date(1970, 1, 1)).days + 1 == 2932897
    expect(parseIsoDate('+10000-01-01')).toBe(2_932_897);
    expect(parseIsoTimestamp('+10000-01-01T00:00:00Z')).toBe(2_932_897n * 86_400_000_000n);
    expect(() => parseIsoDate('10000-01-01')).toThrow(
      "'10000-01-01' has a year of more than four digits without a sign (ISO 8601 writes it +10000-…)",
    );
    expect(() => parseIsoTimestamp('10000-01-01T00:00:00Z')).toThrow('without a sign');
    expect(() => parseIsoTimestamp('123456-01-01')).toThrow('+123456-…');
  });

  it('--where literals', () => {
    expect(parseDate('+10000-01-01')).toBe(2_932_897);
    expect(() => parseDate('10000-01-01')).toThrow("'10000-01-01' is not a date");
    expect(() => parseTimestamp('10000-01-01T00:00:00', false)).toThrow('is not an ISO-8601 timestamp');
  });
});

describe('a timestamp without zone and an offset', () => {
  it('takes the wall clock as written, with no offset or a zero one', () => {
    for (const text of ['2026-11-20T10:00:00', '2026-11-20T10:00:00Z', '2026-11-20T10:00:00+00:00']) {
      expect(parseIsoTimestamp(text, true), text).toBe(NOV20_10Z);
    }
  });

  it('refuses a nonzero offset, from ISO text and from a pattern alike', () => {
    expect(() => parseIsoTimestamp('2026-11-20T10:00:00+01:00', true)).toThrow(
      "'2026-11-20T10:00:00+01:00' has the zone offset +01:00, but the column is a timestamp without zone (local wall-clock time): send the time without an offset, or make the column timestamptz",
    );
    const format = compileTimestampFormat('dd/MM/yyyy HH:mm XXX');
    expect(() => coerceValue({ type: 'timestamp', format }, '20/11/2026 10:00 +01:00', 'ts')).toThrow(
      "ts: '20/11/2026 10:00 +01:00' has a zone offset, but the column is a timestamp without zone",
    );
    expect(coerceValue({ type: 'timestamp', format }, '20/11/2026 10:00 Z', 'ts')).toBe(NOV20_10Z);
    // timestamptz converts the instant, as before
    expect(coerceValue({ type: 'timestamptz', format }, '20/11/2026 10:00 +01:00', 'ts')).toBe(
      NOV20_10Z - HOUR,
    );
  });
});

describe('Debezium ZonedTimestamp (Connect schemas)', () => {
  const schema = {
    type: 'struct',
    fields: [{ field: 'at', type: 'string', name: 'io.debezium.time.ZonedTimestamp' }],
  };

  it('is ISO text for a timestamptz column, read by the same offset rules', () => {
    expect(connectFieldTypes(schema).get('at')).toBe('timestamptz');
    const read = (at: string) =>
      jsonToValue('timestamptz', (fromConnectSchema(schema, { at }) as { at: unknown }).at, 'after.at');
    expect(read('2026-11-20T10:00:00+18:00')).toBe(NOV20_10Z - 18n * HOUR);
    expect(() => read('2026-11-20T10:00:00+25:00')).toThrow(
      "after.at: '2026-11-20T10:00:00+25:00' has the zone offset +25:00, beyond ±18:00",
    );
  });
});
