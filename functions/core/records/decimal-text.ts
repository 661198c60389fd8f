/**
 * Exact decimal text (`-12.345`, `1e-3`) → unscaled bigint at a scale, never through a float. Ingest
 * parses one per decimal value, so plain text (`-?\d+(\.\d+)?`, what producers send) is read with
 * charCodeAt; anything else, and every refusal, takes the general regex path, so results and messages
 * are the same either way (test/unit/ingest/decimal-text.test.ts holds the two equal).
 */
import { RecordDecodeError } from '../errors.js';

function fail(path: string, message: string): never {
  throw new RecordDecodeError(`${path}: ${message}`, 'map');
}

/** Up to 15 significant digits a Number holds exactly (< 2^53), so BigInt(number) is exact. */
const EXACT_DIGITS = 15;
const POW10 = Array.from({ length: EXACT_DIGITS + 1 }, (_, i) => 10 ** i);
/** Declared scales are small (Iceberg: at most 38); larger or odd ones keep to the general path. */
const MAX_FAST_SCALE = 64;

/** Exact decimal text (`-12.345`, `1e-3`) → unscaled bigint at `scale`. @throws RecordDecodeError */
export function parseDecimalText(text: string, precision: number, scale: number, path: string): bigint {
  const fast = plainDecimal(text, precision, scale);
  return fast !== undefined ? fast : generalDecimal(text, precision, scale, path);
}

/** Plain `-?\d+(\.\d+)?` text that fits: its unscaled value; undefined for anything else. */
function plainDecimal(text: string, precision: number, scale: number): bigint | undefined {
  if (!(scale >= 0 && scale <= MAX_FAST_SCALE) || scale % 1 !== 0) return undefined;
  const len = text.length;
  const start = text.charCodeAt(0) === 45 ? 1 : 0; // '-'
  let dot = -1;
  let significant = 0; // digits after the leading zeros, which the precision check counts
  let n = 0; // their value, exact while significant <= EXACT_DIGITS
  for (let i = start; i < len; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d >= 0 && d <= 9) {
      if (significant > 0 || d !== 0) {
        significant++;
        n = n * 10 + d;
      }
    } else if (d === -2 && dot < 0)
      dot = i; // '.'
    else return undefined;
  }
  const fraction = dot < 0 ? 0 : len - dot - 1;
  // A digit on each side of the point; '', '-', '.5', '5.' take the general path.
  if (dot < 0 ? len === start : dot === start || fraction === 0) return undefined;
  // More places than the scale may still be exact (trailing zeros) or an error: the general path decides.
  if (fraction > scale) return undefined;
  if (significant === 0) return 0n;
  const pad = scale - fraction;
  if (significant + pad > precision) return undefined; // the general path words the error
  if (significant + pad <= EXACT_DIGITS) return BigInt(start === 1 ? -(n * POW10[pad]) : n * POW10[pad]);
  const digits = dot < 0 ? text.slice(start) : text.slice(start, dot) + text.slice(dot + 1);
  const abs = BigInt(pad === 0 ? digits : digits + '0'.repeat(pad));
  return start === 1 ? -abs : abs;
}

/** The general path: signs, exponents, surrounding whitespace, and every refusal. */
function generalDecimal(text: string, precision: number, scale: number, path: string): bigint {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) fail(path, `'${text}' is not a decimal number`);
  // The exponent applies to the digits exactly; the double of the text is never looked at (123e-400
  // underflows to 0 as a double, but is not zero).
  let digits = `${m[2] ?? ''}${m[3] ?? ''}`.replace(/^0+/, '');
  // Zero is exact at any scale, whatever its exponent (0e-400).
  if (digits === '') return 0n;
  let exponent = Number(m[4] ?? 0) - (m[3] ?? '').length; // value = digits × 10^exponent
  // Bring to the target scale: exponent must become -scale.
  while (exponent < -scale) {
    if (!digits.endsWith('0'))
      fail(path, `${text} has more than ${scale} decimal places (no rounding is done)`);
    digits = digits.slice(0, -1);
    exponent++;
  }
  // Checked before padding: 1e999999999 must not build a string of a billion zeros. (trunc: as
  // String.repeat counts, for the odd scales the property tests try.)
  const pad = Math.trunc(exponent + scale);
  if (digits.length + pad > precision) fail(path, `${text} does not fit decimal(${precision}, ${scale})`);
  const abs = BigInt(digits + '0'.repeat(pad));
  return m[1] === '-' ? -abs : abs;
}
