import { describe, expect, it } from 'vitest';
import {
  humanDecimal,
  humanFloatingPoint,
  humanHour,
  humanMonth,
  humanYear,
  toHumanString,
} from '../../../functions/core/spec/human-string.js';

// Expected strings are what java.lang / java.time / java.math print for the same values.
describe('human strings (Iceberg Java TransformUtil)', () => {
  it('prints year, month and hour ordinals around the epoch', () => {
    expect(humanYear(54)).toBe('2024');
    expect(humanYear(-1)).toBe('1969');
    expect(humanMonth(652)).toBe('2024-05');
    expect(humanMonth(-1)).toBe('1969-12');
    expect(humanMonth(-12)).toBe('1969-01');
    expect(humanMonth(-13)).toBe('1968-12');
    expect(humanHour(-1)).toBe('1969-12-31-23');
    expect(humanHour(0)).toBe('1970-01-01-00');
  });

  it('prints decimals as BigDecimal#toString', () => {
    expect(humanDecimal(1420n, 2)).toBe('14.20');
    expect(humanDecimal(-5n, 2)).toBe('-0.05');
    expect(humanDecimal(7n, 0)).toBe('7');
    expect(humanDecimal(1n, 6)).toBe('0.000001');
    expect(humanDecimal(1n, 10)).toBe('1E-10');
    expect(humanDecimal(-123n, 12)).toBe('-1.23E-10');
  });

  it('prints floats and doubles as Float#toString / Double#toString', () => {
    expect(humanFloatingPoint(1, false)).toBe('1.0');
    expect(humanFloatingPoint(123.45, false)).toBe('123.45');
    expect(humanFloatingPoint(0.001, false)).toBe('0.001');
    expect(humanFloatingPoint(1e-5, false)).toBe('1.0E-5');
    expect(humanFloatingPoint(12345678, false)).toBe('1.2345678E7');
    expect(humanFloatingPoint(-0, false)).toBe('-0.0');
    expect(humanFloatingPoint(Number.NaN, false)).toBe('NaN');
    expect(humanFloatingPoint(Math.fround(0.1), true)).toBe('0.1');
    expect(humanFloatingPoint(Math.fround(1.1), false)).toBe('1.100000023841858');
  });

  it('prints identity values by source type', () => {
    expect(toHumanString('identity', 'time', 81_068_000_000n)).toBe('22:31:08');
    expect(toHumanString('identity', 'time', 0n)).toBe('00:00');
    expect(toHumanString('identity', 'timestamp', 1_510_871_468_123_000n)).toBe('2017-11-16T22:31:08.123');
    expect(toHumanString('identity', 'timestamptz', 1_510_871_460_000_000n)).toBe('2017-11-16T22:31Z');
    expect(toHumanString('identity', 'date', 17486)).toBe('2017-11-16');
    expect(toHumanString('identity', 'binary', Uint8Array.of(0, 1, 2, 3))).toBe('AAECAw==');
    expect(toHumanString('identity', 'boolean', true)).toBe('true');
    expect(toHumanString('bucket[16]', 'string', 9)).toBe('9');
    expect(toHumanString('truncate[4]', 'long', -10n)).toBe('-10');
    expect(toHumanString('identity', 'string', null)).toBe('null');
  });
});
