/**
 * Type coercions a mapping rule asks for: text → timestamp with a pattern, epoch seconds/millis/micros/
 * nanos → timestamp, numbers or text → decimal without going through a float, text → int/long/double/
 * boolean, numbers → text. Everything else is the plain JSON conversion (json-to-value.ts). No rounding
 * anywhere: a value that does not fit exactly is a RecordDecodeError naming its path.
 */
import { RecordDecodeError } from '../errors.js';
import { decimalParams } from '../spec/conversions.js';
import { floorDivBig, MICROS_PER_DAY } from '../spec/epoch-time.js';
import type { PrimitiveType, Value } from '../spec/types.js';
import { parseDecimalText } from '../records/decimal-text.js';
import { describeJsonValue, JsonNumberText, jsonToValue } from '../records/json-to-value.js';
import type { ColumnRule, EpochUnit } from './mapping-config.js';

const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
const INTEGER_TEXT = /^[+-]?\d+$/;
const TRAILING_OFFSET = /[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?\s*(?:Z|z|[+-]\d{2}(?::?\d{2})?)$/;

/** The part of a rule that says how to convert. */
export type Coercion = Pick<ColumnRule, 'type' | 'format' | 'zoneMinutes' | 'epoch'> & {
  type: PrimitiveType;
};

function fail(path: string, message: string): never {
  throw new RecordDecodeError(`${path}: ${message}`, 'map');
}

function numericText(v: unknown): string | undefined {
  if (v instanceof JsonNumberText) return v.text;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : undefined;
  return undefined;
}

function checkedMicros(micros: bigint, path: string, shown: string): bigint {
  if (micros < LONG_MIN || micros > LONG_MAX) fail(path, `${shown} is out of the timestamp range`);
  return micros;
}

/**
 * Epoch number text in a unit → µs, exactly (fractions below a microsecond are refused, nanos
 * truncate; days are whole).
 */
function epochMicros(text: string, unit: EpochUnit, path: string): bigint {
  const shown = `${text} (epoch ${unit})`;
  switch (unit) {
    case 'days':
      return checkedMicros(parseDecimalText(text, 38, 0, path) * MICROS_PER_DAY, path, shown);
    case 'seconds':
      return checkedMicros(parseDecimalText(text, 38, 6, path), path, shown);
    case 'millis':
      return checkedMicros(parseDecimalText(text, 38, 3, path), path, shown);
    case 'micros':
      return checkedMicros(parseDecimalText(text, 38, 0, path), path, shown);
    case 'nanos':
      // Iceberg timestamps hold µs; like ISO text with 9 fraction digits, nanoseconds are truncated.
      return checkedMicros(floorDivBig(parseDecimalText(text, 38, 0, path), 1000n), path, shown);
  }
}

function temporal(c: Coercion, v: unknown, path: string): Value {
  let micros: bigint;
  const epochText =
    numericText(v) ?? (typeof v === 'string' && c.epoch && INTEGER_TEXT.test(v) ? v : undefined);
  if (epochText !== undefined) {
    micros = epochMicros(epochText, c.epoch ?? 'millis', path);
  } else if (typeof v === 'string' && c.format) {
    let parsed: ReturnType<NonNullable<Coercion['format']>['parse']>;
    try {
      parsed = c.format.parse(v);
    } catch (error) {
      fail(path, (error as Error).message);
    }
    if (c.type === 'date') return parsed.days;
    micros = BigInt(parsed.days) * MICROS_PER_DAY + parsed.micros;
    if (c.type === 'timestamptz') micros -= BigInt(parsed.offsetMinutes ?? c.zoneMinutes ?? 0) * 60_000_000n;
    else if (c.type === 'timestamp' && parsed.offsetMinutes) {
      // The same rule as ISO text (parse-temporal.ts): a timestamp without zone is the wall clock
      // as written; a nonzero offset leaves it unclear which wall clock was meant. (mapping-config
      // refuses an offset pattern for a timestamp rule at start-up; this keeps the rule in one place.)
      fail(
        path,
        `'${v}' has a zone offset, but the column is a timestamp without zone (local wall-clock time): use a format without the offset, or make the column timestamptz`,
      );
    }
    micros = checkedMicros(micros, path, `'${v}'`);
  } else if (typeof v === 'string') {
    const value = jsonToValue(c.type, v, path);
    if (
      c.type === 'timestamptz' &&
      c.zoneMinutes &&
      typeof value === 'bigint' &&
      !TRAILING_OFFSET.test(v.trim())
    ) {
      return checkedMicros(value - BigInt(c.zoneMinutes) * 60_000_000n, path, `'${v}'`);
    }
    return value;
  } else {
    fail(path, `expected a ${c.type} (text or epoch number), got ${describeJsonValue(v)}`);
  }
  return c.type === 'date' ? Number(floorDivBig(micros, MICROS_PER_DAY)) : micros;
}

/**
 * Converts a decoded value as a rule says, to a Value of the rule's type. null/undefined → null.
 * @throws RecordDecodeError (stage map) naming the path
 */
export function coerceValue(c: Coercion, v: unknown, path: string): Value {
  if (v === null || v === undefined) return null;
  switch (c.type) {
    case 'timestamp':
    case 'timestamptz':
    case 'date':
      return temporal(c, v, path);
    case 'int':
    case 'long':
      if (typeof v === 'string') {
        if (!INTEGER_TEXT.test(v.trim()))
          fail(path, `expected integer text for a ${c.type}, got ${describeJsonValue(v)}`);
        return jsonToValue(c.type, new JsonNumberText(v.trim()), path);
      }
      return jsonToValue(c.type, v, path);
    case 'float':
    case 'double':
      // Number text is the plain conversion's own rule for float columns (json-to-value's doubleOf).
      return jsonToValue(c.type, v, path);
    case 'time': {
      // A number (or integer text) with a unit is a time since midnight (Debezium's Time/MicroTime/
      // NanoTime without Connect schemas); anything else is the plain conversion (ISO text).
      const unit = c.epoch;
      const text =
        unit && (numericText(v) ?? (typeof v === 'string' && INTEGER_TEXT.test(v) ? v : undefined));
      if (!unit || !text) return jsonToValue('time', v, path);
      const micros = epochMicros(text, unit, path);
      if (micros < 0n || micros >= MICROS_PER_DAY)
        fail(path, `${text} (${unit} since midnight) is not a time of day`);
      return micros;
    }
    case 'boolean':
      if (v === 'true' || v === 'false') return v === 'true';
      return jsonToValue('boolean', v, path);
    case 'string': {
      const text = numericText(v) ?? (typeof v === 'boolean' ? String(v) : undefined);
      return jsonToValue('string', text ?? v, path);
    }
    default:
      return jsonToValue(c.type, v, path);
  }
}

/**
 * A value of type `from` stored in a column of type `to`: widened when `to` is wider (int → long,
 * float → double, a decimal of larger precision), checked when it is narrower (the column was not
 * promoted, e.g. evolution is off).
 * @throws RecordDecodeError when the value does not fit `to` exactly
 */
export function fitValue(value: Value, from: PrimitiveType, to: PrimitiveType, path: string): Value {
  if (value === null || from === to) return value;
  if (to === 'long' && typeof value === 'number') return BigInt(value);
  if (to === 'int' && typeof value === 'bigint') {
    if (value < -(2n ** 31n) || value >= 2n ** 31n) fail(path, `${value} does not fit the int column`);
    return Number(value);
  }
  if (to === 'double' && typeof value === 'number') return value;
  if (to === 'float' && typeof value === 'number') {
    if (!Number.isNaN(value) && Math.fround(value) !== value)
      fail(path, `${value} does not fit the float column exactly`);
    return value;
  }
  const dt = decimalParams(to);
  const df = decimalParams(from);
  if (dt && df && typeof value === 'bigint' && dt.scale === df.scale) {
    const abs = value < 0n ? -value : value;
    if (abs.toString().length > dt.precision) fail(path, `${value} (unscaled) does not fit ${to}`);
    return value;
  }
  if (dt === undefined && df === undefined && from.replace(/\s/g, '') === to.replace(/\s/g, '')) return value;
  return fail(path, `a ${from} value cannot be stored in the ${to} column`);
}
