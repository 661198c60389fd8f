/**
 * decimal-text.ts reads plain decimal text without its regex; this holds it equal to the regex-only
 * parseDecimalText json-to-value.ts had (copied below), results and errors, on generated text.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RecordDecodeError } from '../../../functions/core/errors.js';
import { parseDecimalText } from '../../../functions/core/records/decimal-text.js';

// ---- the former parseDecimalText of json-to-value.ts, unchanged but for zero: exact at any scale ----
// (it refused `0e-400` as having too many decimal places; issue 20, item 10)
function fail(path: string, message: string): never {
  throw new RecordDecodeError(`${path}: ${message}`, 'map');
}

function oldParseDecimalText(text: string, precision: number, scale: number, path: string): bigint {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) fail(path, `'${text}' is not a decimal number`);
  let digits = (m[2] ?? '') + (m[3] ?? '');
  if (/^0*$/.test(digits)) return 0n;
  let exponent = Number(m[4] ?? 0) - (m[3] ?? '').length; // value = digits × 10^exponent
  while (exponent < -scale) {
    if (!digits.endsWith('0'))
      fail(path, `${text} has more than ${scale} decimal places (no rounding is done)`);
    digits = digits.slice(0, -1);
    exponent++;
  }
  digits += '0'.repeat(exponent + scale);
  const unscaled = BigInt(digits === '' ? '0' : digits) * (m[1] === '-' ? -1n : 1n);
  const abs = unscaled < 0n ? -unscaled : unscaled;
  if (abs.toString().length > precision && abs !== 0n)
    fail(path, `${text} does not fit decimal(${precision}, ${scale})`);
  return unscaled;
}
// ---- end of the former code ----

type Outcome = { value: bigint } | { error: string; message: string; stage?: string };

function outcome(parse: typeof parseDecimalText, text: string, precision: number, scale: number): Outcome {
  try {
    return { value: parse(text, precision, scale, 'row.amount') };
  } catch (error) {
    const e = error as Error & { stage?: string };
    return { error: e.constructor.name, message: e.message, stage: e.stage };
  }
}

const digits = (max: number) => fc.stringMatching(new RegExp(`^\\d{0,${max}}$`));
const sign = fc.oneof({ weight: 6, arbitrary: fc.constant('') }, fc.constantFrom('-', '+', '--'));
const leadingZeros = fc.oneof({ weight: 4, arbitrary: fc.constant('') }, fc.stringMatching(/^0{1,5}$/));
const exponent = fc.oneof(
  { weight: 8, arbitrary: fc.constant('') },
  fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), digits(2)).map((p) => p.join('')),
);
const space = fc.oneof({ weight: 8, arbitrary: fc.constant('') }, fc.constantFrom(' ', '\t', '\n', '\u00a0'));
const fraction = fc.oneof(
  { weight: 2, arbitrary: fc.constant('') },
  { weight: 6, arbitrary: digits(12).map((f) => `.${f}`) },
  digits(4).map((f) => `.${f}000`),
  fc.constantFrom('.', '..5', '.5.'),
);
/** Plain text first (the fast path's), then every variation the general path must keep reading or refusing. */
const decimalText = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.constantFrom('', '-'), leadingZeros, digits(24), fraction)
      .map(([s, z, i, f]) => `${s}${z}${i}${f}`),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(space, sign, leadingZeros, digits(20), fraction, exponent, space)
      .map((p) => p.join('')),
  },
  fc.string({ maxLength: 12 }),
  fc.constantFrom(
    '',
    '-',
    '+',
    '.',
    '-.',
    '5.',
    '.5',
    '-0',
    '-0.0',
    '0.00',
    'NaN',
    'Infinity',
    '1_000',
    '١٢',
  ),
);
const precision = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 1, max: 38 }) },
  fc.constantFrom(0, 60, Number.NaN),
);
const scale = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0, max: 18 }) },
  fc.integer({ min: 19, max: 70 }),
  fc.constantFrom(-1, 1.5),
);

describe('parseDecimalText', () => {
  it('gives the former result or error on generated text', () => {
    fc.assert(
      fc.property(decimalText, precision, scale, (text, p, s) => {
        expect(outcome(parseDecimalText, text, p, s)).toEqual(outcome(oldParseDecimalText, text, p, s));
      }),
      { numRuns: 30_000 },
    );
  });

  it.each<[string, number, number, bigint | string]>([
    ['12.30', 10, 2, 1230n],
    ['-0.5', 10, 1, -5n],
    ['123.45', 10, 2, 12345n],
    ['1e3', 10, 2, 100000n],
    ['1E-2', 10, 2, 1n],
    ['0000123.40', 5, 2, 12340n],
    ['.5', 10, 1, 5n],
    ['5.', 10, 1, 50n],
    ['12.300', 10, 2, 1230n],
    ['-0', 10, 2, 0n],
    ['0.00', 1, 2, 0n],
    ['999999999999999', 15, 0, 999999999999999n],
    ['9999999999999999', 16, 0, 9999999999999999n],
    ['-12345678901234567890.123456789012345678', 38, 18, -12345678901234567890123456789012345678n],
    ['1', 38, 37, 10n ** 37n],
    [' 7 ', 10, 0, 7n],
    ['+7', 10, 0, 7n],
    ['12.345', 10, 2, 'row.amount: 12.345 has more than 2 decimal places (no rounding is done)'],
    ['123456', 5, 0, 'row.amount: 123456 does not fit decimal(5, 0)'],
    ['1234.5', 5, 2, 'row.amount: 1234.5 does not fit decimal(5, 2)'],
    ['', 10, 2, "row.amount: '' is not a decimal number"],
    ['-', 10, 2, "row.amount: '-' is not a decimal number"],
    ['.', 10, 2, "row.amount: '.' is not a decimal number"],
    ['1.2.3', 10, 2, "row.amount: '1.2.3' is not a decimal number"],
    ['abc', 10, 2, "row.amount: 'abc' is not a decimal number"],
    // the exponent applied to the digits, never through a double (issue 20, item 10)
    ['123e-400', 10, 2, 'row.amount: 123e-400 has more than 2 decimal places (no rounding is done)'],
    ['-1e-400', 10, 2, 'row.amount: -1e-400 has more than 2 decimal places (no rounding is done)'],
    ['1e-325', 10, 2, 'row.amount: 1e-325 has more than 2 decimal places (no rounding is done)'],
    ['0e-400', 10, 2, 0n],
    ['-0.000e-999', 10, 2, 0n],
    ['12300e-4', 10, 2, 123n],
    ['1e400', 10, 2, 'row.amount: 1e400 does not fit decimal(10, 2)'],
  ])('%s at decimal(%d, %d)', (text, p, s, want) => {
    const got = outcome(parseDecimalText, text, p, s);
    expect(got).toEqual(outcome(oldParseDecimalText, text, p, s));
    if (typeof want === 'bigint') expect(got).toEqual({ value: want });
    else expect(got).toEqual({ error: 'RecordDecodeError', message: want, stage: 'map' });
  });

  it('refuses a huge exponent before padding: a dead letter, not a RangeError that fails the batch', () => {
    // The former code built a string of a billion zeros: RangeError (Invalid string length), which is
    // not a RecordDecodeError, so the whole batch failed and the ESM would redeliver it forever.
    expect(() => oldParseDecimalText('1e999999999', 38, 2, 'row.amount')).toThrow(RangeError);
    expect(outcome(parseDecimalText, '1e999999999', 38, 2)).toEqual({
      error: 'RecordDecodeError',
      message: 'row.amount: 1e999999999 does not fit decimal(38, 2)',
      stage: 'map',
    });
  });
});
