/**
 * The byte readers of the JSON scan (byte-values.ts) against the text conversions they stand for:
 * whenever a byte reader answers, its value is the one parseDecimalText / parseIsoTimestamp give for
 * the same text (as a double); it answers for the plain forms producers write; and a UTF-8 sequence is
 * taken exactly when Buffer's isUtf8 takes it.
 */
import { isUtf8 } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isoTimestampBytes,
  plainDecimalBytes,
  utf8SequenceLength,
} from '../../../functions/core/mapping/fast/byte-values.js';
import { parseDecimalText } from '../../../functions/core/records/decimal-text.js';
import { parseIsoTimestamp } from '../../../functions/core/records/parse-temporal.js';

const bytesOf = (s: string) => Buffer.from(s, 'utf8');

function attempt<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}

const decimalText = fc.oneof(
  fc
    .tuple(fc.boolean(), fc.stringMatching(/^\d{1,18}$/), fc.option(fc.stringMatching(/^\d{0,6}$/)))
    .map(([neg, int, frac]) => `${neg ? '-' : ''}${int}${frac === null ? '' : `.${frac}`}`),
  fc.constantFrom('', '-', '.5', '5.', '1e3', '+1', ' 1', '0.00', '-0', '007.10', '1.2.3', '１'),
  fc.string({ maxLength: 8 }),
);

const timestampText = fc.oneof(
  fc.integer({ min: -6e13, max: 2.5e14 }).map((ms) => new Date(ms).toISOString()),
  fc
    .tuple(
      fc.integer({ min: 0, max: 9999 }),
      fc.integer({ min: 0, max: 13 }),
      fc.integer({ min: 0, max: 32 }),
      fc.integer({ min: 0, max: 24 }),
      fc.constantFrom('T', ' ', 't'),
      fc.constantFrom('', '.1', '.123456', '.1234567891', '.', '.1234567890123'),
      fc.constantFrom('', 'Z', 'z', '+02:00', '-0530', '+18:00', '+18:01', '+05', '-00:00', 'Zx', '+2'),
    )
    .map(
      ([y, mo, d, h, sep, frac, zone]) =>
        `${String(y).padStart(4, '0')}-${String(mo).padStart(2, '0')}-${String(d).padStart(2, '0')}${sep}${String(h).padStart(2, '0')}:07:59${frac}${zone}`,
    ),
  fc.string({ maxLength: 30 }),
);

describe('byte readers of the JSON scan', () => {
  it('read plain decimals as parseDecimalText does, or leave them to it', () => {
    let read = 0;
    fc.assert(
      fc.property(
        decimalText,
        fc.integer({ min: 1, max: 38 }),
        fc.integer({ min: 0, max: 8 }),
        (text, p, s) => {
          const scale = Math.min(s, p);
          const bytes = bytesOf(text);
          const fast = plainDecimalBytes(bytes, 0, bytes.length, p, scale);
          if (fast === undefined) return;
          read++;
          expect(BigInt(fast)).toBe(parseDecimalText(text, p, scale, 'c'));
          expect(Number.isSafeInteger(fast)).toBe(true);
        },
      ),
      { seed: 20261205, numRuns: 3000 },
    );
    expect(read).toBeGreaterThan(500);
    expect(plainDecimalBytes(bytesOf('-12.5'), 0, 5, 10, 2)).toBe(-1250);
  });

  it('read canonical timestamps as parseIsoTimestamp does, or leave them to it', () => {
    let read = 0;
    fc.assert(
      fc.property(timestampText, fc.boolean(), (text, local) => {
        const bytes = bytesOf(text);
        const fast = isoTimestampBytes(bytes, 0, bytes.length, local);
        if (fast === undefined) return;
        read++;
        expect(BigInt(fast)).toBe(attempt(() => parseIsoTimestamp(text, local)));
      }),
      { seed: 20261205, numRuns: 3000 },
    );
    expect(read).toBeGreaterThan(150);
    // Within a larger buffer: only [start, end) is read.
    const padded = bytesOf('xx2026-11-20T10:00:00Z"}');
    expect(isoTimestampBytes(padded, 2, 22, false)).toBe(Number(parseIsoTimestamp('2026-11-20T10:00:00Z')));
    expect(isoTimestampBytes(padded, 2, 20, false)).toBeUndefined();
  });

  it('take a UTF-8 sequence exactly when isUtf8 does', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0x80, max: 0xff }),
        fc.uint8Array({ minLength: 0, maxLength: 3 }),
        (lead, rest) => {
          const bytes = Uint8Array.from([lead, ...rest]);
          const len = utf8SequenceLength(bytes, 0);
          if (len === 0) {
            for (let n = 1; n <= bytes.length; n++) expect(isUtf8(bytes.subarray(0, n))).toBe(false);
          } else expect(isUtf8(bytes.subarray(0, len))).toBe(true);
        },
      ),
      { numRuns: 5000 },
    );
    for (const ch of ['é', '€', '\u{1F600}', '\u{10FFFF}', '\uFFFF'])
      expect(utf8SequenceLength(bytesOf(ch), 0)).toBe(bytesOf(ch).length);
  });
});
