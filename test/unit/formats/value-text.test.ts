import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonToValue } from '../../../functions/core/records/json-to-value.js';
import {
  parseIsoDate,
  parseIsoTime,
  parseIsoTimestamp,
} from '../../../functions/core/records/parse-temporal.js';
import {
  bigintFromTwosComplement,
  exactInteger,
  formatDecimal,
  formatEpochDate,
  formatEpochValue,
  formatTimeOfDay,
} from '../../../functions/core/formats/value-text.js';

// Iceberg's timestamp range as the mapper parses it (years with up to 6 digits).
const MICROS = fc.bigInt({ min: -62_135_596_800_000_000n, max: 253_402_300_799_999_999n });

describe('exact value text', () => {
  it('round-trips epoch micros through the ISO text the mapper parses', () => {
    fc.assert(
      fc.property(MICROS, (micros) => {
        expect(parseIsoTimestamp(formatEpochValue(micros, 'micros', true))).toBe(micros);
        expect(parseIsoTimestamp(formatEpochValue(micros, 'micros', false))).toBe(micros);
      }),
    );
  });

  it('keeps millis exact and truncates nanos to micros as Iceberg timestamps do', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -62_135_596_800_000n, max: 253_402_300_799_999n }), (ms) => {
        expect(parseIsoTimestamp(formatEpochValue(ms, 'millis', true))).toBe(ms * 1000n);
      }),
    );
    expect(formatEpochValue(1_709_294_400_123_456_789n, 'nanos', true)).toBe(
      '2024-03-01T12:00:00.123456789Z',
    );
    expect(parseIsoTimestamp('2024-03-01T12:00:00.123456789Z')).toBe(1_709_294_400_123_456n);
    expect(formatEpochValue(-1n, 'micros', true)).toBe('1969-12-31T23:59:59.999999Z');
  });

  it('formats dates and times of day the mapper parses back', () => {
    fc.assert(
      fc.property(fc.integer({ min: -719_162, max: 2_932_896 }), (days) => {
        expect(parseIsoDate(formatEpochDate(days))).toBe(days);
      }),
    );
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 86_399_999_999n }), (micros) => {
        expect(parseIsoTime(formatTimeOfDay(micros, 'micros')!)).toBe(micros);
      }),
    );
    expect(formatTimeOfDay(86_400_000n, 'millis')).toBeUndefined();
  });

  it('decodes two’s complement and formats decimals that the mapper reads exactly', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 38n) + 1n, max: 10n ** 38n - 1n }),
        fc.integer({ min: 0, max: 38 }),
        (unscaled, scale) => {
          // Prepare: minimal big-endian two's complement, as Java's BigInteger.toByteArray writes it
          let hex = (unscaled < 0n ? (1n << 136n) + unscaled : unscaled).toString(16);
          if (hex.length % 2) hex = `0${hex}`;
          let bytes = Buffer.from(hex, 'hex');
          if (unscaled >= 0n && bytes[0] & 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
          if (unscaled < 0n)
            while (bytes.length > 1 && bytes[0] === 0xff && bytes[1] & 0x80) bytes = bytes.subarray(1);
          // Act
          const text = formatDecimal(bigintFromTwosComplement(bytes), scale);
          // Assess
          expect(jsonToValue(`decimal(38, ${scale})`, text, 'd')).toBe(unscaled);
        },
      ),
    );
    expect(formatDecimal(-5n, 3)).toBe('-0.005');
    expect(formatDecimal(1230n, 2)).toBe('12.30');
  });

  it('keeps integers beyond 2^53 as exact text', () => {
    expect(exactInteger(2n ** 53n - 1n)).toBe(2 ** 53 - 1);
    const big = exactInteger(2n ** 63n - 1n);
    expect(jsonToValue('long', big, 'x')).toBe(2n ** 63n - 1n);
  });
});
