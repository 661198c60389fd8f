/**
 * v3 nanosecond timestamps in transforms, literals and text: the spec's own hash vectors (Appendix B),
 * and the µs rules applied to ns values floored to µs.
 */
import { describe, expect, it } from 'vitest';
import { parseTimestamp, parseTimestampNanos } from '../../../functions/core/scan/temporal-literal.js';
import { formatTimestampNanos } from '../../../functions/core/spec/epoch-time.js';
import { toHumanString } from '../../../functions/core/spec/human-string.js';
import { applyTransform, canTransform, hashValue } from '../../../functions/core/spec/transforms.js';

describe('timestamp_ns and timestamptz_ns', () => {
  it.each([
    ['timestamp_ns', '2017-11-16T22:31:08', -2047944441],
    ['timestamp_ns', '2017-11-16T22:31:08.000001001', -1207196810],
    ['timestamptz_ns', '2017-11-16T14:31:08-08:00', -2047944441],
    ['timestamptz_ns', '2017-11-16T14:31:08.000001001-08:00', -1207196810],
  ] as const)('%s %s hashes to the spec vector %i', (type, text, hash) => {
    // Act / Assess
    expect(hashValue(type, parseTimestampNanos(text, type === 'timestamptz_ns'))).toBe(hash);
  });

  it.each(['year', 'month', 'day', 'hour', 'bucket[16]', 'identity'] as const)(
    '%s gives what it gives the same instant in µs (floored)',
    (transform) => {
      // Prepare: one ns before midnight, and a pre-epoch instant
      for (const text of ['2024-02-29T23:59:59.999999999', '1969-12-31T23:59:59.999999999']) {
        const nanos = parseTimestampNanos(text, false);
        const micros = parseTimestamp(text.slice(0, -3), false);

        // Act
        const got = applyTransform(transform, 'timestamp_ns', nanos);

        // Assess
        expect(canTransform(transform, 'timestamp_ns')).toBe(true);
        if (transform === 'identity') expect(got).toBe(nanos);
        else expect(got).toBe(applyTransform(transform, 'timestamp', micros));
      }
    },
  );

  it('does not truncate (the spec defines truncate on numbers, strings and bytes only)', () => {
    expect(canTransform('truncate[10]', 'timestamp_ns')).toBe(false);
  });

  it('reads and writes ISO-8601 text with nine fraction digits', () => {
    // Act
    const nanos = parseTimestampNanos('2017-11-16T22:31:08.123456789', false);
    const withZone = parseTimestampNanos('2017-11-16T23:31:08.123456789+01:00', true);

    // Assess
    expect(nanos).toBe(1510871468123456789n);
    expect(withZone).toBe(nanos);
    expect(formatTimestampNanos(nanos)).toBe('2017-11-16T22:31:08.123456789');
    expect(toHumanString('identity', 'timestamptz_ns', nanos)).toBe('2017-11-16T22:31:08.123456789Z');
    expect(() => parseTimestampNanos('2017-11-16T22:31:08.1+01:00', false)).toThrow(/has a time zone/);
  });
});
