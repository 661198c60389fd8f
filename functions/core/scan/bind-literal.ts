/**
 * Converts a filter literal to the `Value` representation of a column's type (see spec/types.ts):
 * numbers from their text, exactly (decimals and longs never pass through a float), temporal
 * strings through ISO-8601.
 */
import { ValidationError } from '../errors.js';
import { decimalParams, fixedLength } from '../spec/conversions.js';
import type { PrimitiveType, Value } from '../spec/types.js';
import type { Literal } from './expression.js';
import { parseDate, parseTime, parseTimestamp, parseTimestampNanos } from './temporal-literal.js';

const INT_MIN = -(2n ** 31n);
const INT_MAX = 2n ** 31n - 1n;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const NUMBER_TEXT = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/**
 * The literal as a value of `type`, for column `column` (named in messages).
 * @throws ValidationError when the literal cannot be that type, is out of range, or would lose digits
 */
export function convertLiteral(literal: Literal, type: PrimitiveType, column: string): Value {
  const shown = describeLiteral(literal);
  const mismatch = (hint = ''): never => {
    throw new ValidationError(`column '${column}' is ${type}; ${shown} is not a ${type}${hint}`);
  };
  const within = <T extends Value>(convert: () => T): T => {
    try {
      return convert();
    } catch (error) {
      if (error instanceof ValidationError) {
        throw new ValidationError(`column '${column}' (${type}): ${error.message}`, { cause: error });
      }
      throw error;
    }
  };
  const numeric = numericText(literal);
  switch (type) {
    case 'boolean':
      if (typeof literal === 'boolean') return literal;
      return mismatch(' (use true or false)');
    case 'int':
    case 'long': {
      if (numeric === undefined) return mismatch();
      const value = within(() => scaleExactly(numeric, 0));
      const [min, max] = type === 'int' ? [INT_MIN, INT_MAX] : [LONG_MIN, LONG_MAX];
      if (value < min || value > max) {
        throw new ValidationError(`column '${column}' is ${type}; ${shown} is out of its range`);
      }
      return type === 'int' ? Number(value) : value;
    }
    case 'float':
    case 'double': {
      if (numeric === undefined) return mismatch();
      const value = typeof literal === 'number' ? literal : Number(numeric);
      if (Number.isNaN(value)) {
        throw new ValidationError(`column '${column}': compare with NaN using 'is nan' / 'is not nan'`);
      }
      if (!Number.isFinite(value)) {
        throw new ValidationError(`column '${column}' is ${type}; ${shown} is out of its range`);
      }
      return type === 'float' ? Math.fround(value) : value;
    }
    case 'date':
      if (typeof literal === 'string') return within(() => parseDate(literal));
      return mismatch(" (write it as 'YYYY-MM-DD')");
    case 'time':
      if (typeof literal === 'string') return within(() => parseTime(literal));
      if (typeof literal === 'bigint') return literal;
      return mismatch(" (write it as 'HH:MM:SS')");
    case 'timestamp':
    case 'timestamptz':
      if (typeof literal === 'string') return within(() => parseTimestamp(literal, type === 'timestamptz'));
      // Code may pass microseconds since the epoch directly.
      if (typeof literal === 'bigint') return literal;
      return mismatch(
        ` (write it as an ISO-8601 string, e.g. '2024-05-01T00:00:00${type === 'timestamptz' ? 'Z' : ''}')`,
      );
    case 'timestamp_ns':
    case 'timestamptz_ns':
      if (typeof literal === 'string') {
        return within(() => parseTimestampNanos(literal, type === 'timestamptz_ns'));
      }
      // Code may pass nanoseconds since the epoch directly.
      if (typeof literal === 'bigint') return literal;
      return mismatch(" (write it as an ISO-8601 string, e.g. '2024-05-01T00:00:00.123456789')");
    case 'string':
      if (typeof literal === 'string') return literal;
      return mismatch(" (quote it: '...')");
    case 'uuid':
      if (typeof literal === 'string' && UUID.test(literal)) return literal.toLowerCase();
      return mismatch();
    case 'binary':
      if (literal instanceof Uint8Array) return literal;
      return mismatch();
  }
  const decimal = decimalParams(type);
  if (decimal) {
    if (numeric === undefined) return mismatch();
    const value = within(() => scaleExactly(numeric, decimal.scale));
    const limit = 10n ** BigInt(decimal.precision);
    if (value >= limit || value <= -limit) {
      throw new ValidationError(
        `column '${column}' is ${type}; ${shown} has more than ${decimal.precision} digits`,
      );
    }
    return value;
  }
  const length = fixedLength(type);
  if (length !== undefined) {
    if (literal instanceof Uint8Array && literal.length === length) return literal;
    return mismatch(` (${length} bytes)`);
  }
  throw new ValidationError(`column '${column}' has unknown type '${type}'`);
}

/** Decimal text of a numeric literal, or undefined if it is not numeric. */
function numericText(literal: Literal): string | undefined {
  if (typeof literal === 'bigint') return literal.toString();
  if (typeof literal === 'number') return String(literal);
  if (typeof literal === 'object' && !(literal instanceof Uint8Array) && literal.type === 'number') {
    return literal.text;
  }
  return undefined;
}

/**
 * `text × 10^scale` as an exact integer (a decimal's unscaled value; scale 0 for int/long).
 * @throws ValidationError when the text has more fractional digits than `scale` (other than zeros)
 */
export function scaleExactly(text: string, scale: number): bigint {
  const m = NUMBER_TEXT.exec(text);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) throw new ValidationError(`'${text}' is not a number`);
  const [, sign, whole, fraction = '', exponent = '0'] = m;
  // text = digits × 10^(exponent − fraction.length); unscaled = digits × 10^(that + scale).
  const digits = BigInt(`${whole}${fraction}` || '0');
  const shift = Number(exponent) - fraction.length + scale;
  if (Math.abs(shift) > 400) throw new ValidationError(`'${text}' is out of range`);
  let unscaled: bigint;
  if (shift >= 0) {
    unscaled = digits * 10n ** BigInt(shift);
  } else {
    const divisor = 10n ** BigInt(-shift);
    if (digits % divisor !== 0n) {
      throw new ValidationError(
        scale === 0 ? `'${text}' is not a whole number` : `'${text}' has more than ${scale} decimal places`,
      );
    }
    unscaled = digits / divisor;
  }
  return sign === '-' ? -unscaled : unscaled;
}

function describeLiteral(literal: Literal): string {
  if (typeof literal === 'string') return `'${literal}'`;
  if (literal instanceof Uint8Array) return `${literal.length} bytes`;
  if (typeof literal === 'object') return literal.text;
  return String(literal);
}
