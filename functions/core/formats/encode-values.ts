/**
 * Iceberg values (a table's columns, spec/types.ts's in-memory forms) back to the values a registry
 * format writes: the inverse of what the decoders and the mapping did to a record's fields. A field may
 * have landed in a column of its own type (an Avro long in a long column) or in the column the mapping
 * inferred from the decoder's JSON-like value (a timestamp as ISO text, bytes as base64 text, a decimal
 * as a double), so each conversion takes the column's type and returns UNFIT when the value cannot be
 * given back exactly (out of range, digits lost, text that is not what the decoder wrote): the caller
 * then serves that row as JSON instead of a frame that would lie. Text is read back only when formatting
 * the result again gives the same text, so nothing is guessed.
 */
import { decimalParams, uuidToBytes } from '../spec/conversions.js';
import { daysFromCivil } from '../spec/epoch-time.js';
import type { IcebergType, Value } from '../spec/types.js';
import {
  type EpochUnit,
  formatEpochDate,
  formatEpochValue,
  formatTimeOfDay,
  toBase64,
} from './value-text.js';

/**
 * Why a registry schema does not fit a table's columns (a field it lacks, or holds as another type), with
 * the field's path: the schema's rows are served as JSON. A value, not an error: nothing failed.
 */
export class ShapeMismatch {
  constructor(readonly reason: string) {}
}

/** A value that cannot be given back exactly in the asked-for form. */
export const UNFIT: unique symbol = Symbol('unfit');
export type Unfit = typeof UNFIT;

/** A column value as an encoder wants it, or UNFIT. */
export type Convert = (v: Value) => unknown;

/**
 * The converter of a schema type for a column, built once per (type, column) by `build`: a recursive
 * schema meets the same pair again while its converter is being built, and gets the one being built.
 * A mismatch is not kept. Throws what `build` throws.
 */
export function memoisedConverter<T>(
  memo: Map<T, Map<IcebergType, Convert>>,
  type: T,
  column: IcebergType,
  build: () => Convert | ShapeMismatch,
): Convert | ShapeMismatch {
  const known = memo.get(type)?.get(column);
  if (known) return known;
  let impl: Convert = () => UNFIT;
  const convert: Convert = (v) => impl(v);
  const byColumn = memo.get(type) ?? new Map<IcebergType, Convert>();
  memo.set(type, byColumn);
  byColumn.set(column, convert);
  const built = build();
  if (built instanceof ShapeMismatch) {
    byColumn.delete(column);
    return built;
  }
  impl = built;
  return convert;
}

const PER_SECOND: Record<EpochUnit, bigint> = { millis: 1_000n, micros: 1_000_000n, nanos: 1_000_000_000n };
const INT_MIN = -(2n ** 31n);
const INT_MAX = 2n ** 31n - 1n;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;

/** An integer value (int, long columns; integral numbers) as a bigint, else undefined. */
function integerOf(v: Value): bigint | undefined {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  return undefined;
}

/** A 32-bit signed integer from an int or long column. */
export function toInt32(v: Value): number | Unfit {
  const n = integerOf(v);
  return n !== undefined && n >= INT_MIN && n <= INT_MAX ? Number(n) : UNFIT;
}

/** A 64-bit signed integer from an int or long column (or a decimal of scale 0). */
export function toInt64(v: Value, type: IcebergType): bigint | Unfit {
  const scale = decimalParams(type)?.scale;
  if (scale !== undefined && scale !== 0) return UNFIT;
  const n = integerOf(v);
  return n !== undefined && n >= LONG_MIN && n <= LONG_MAX ? n : UNFIT;
}

/** A double from a float, double, int or long column (a long only when a double holds it exactly). */
export function toDouble(v: Value): number | Unfit {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return BigInt(Number(v)) === v ? Number(v) : UNFIT;
  return UNFIT;
}

/** A float (32-bit) from those columns: only values a float holds exactly. */
export function toFloat(v: Value): number | Unfit {
  const d = toDouble(v);
  if (d === UNFIT) return UNFIT;
  return Number.isNaN(d) || Math.fround(d) === d ? d : UNFIT;
}

/** Bytes from a binary or fixed column, or the base64 text a decoder made of them (a string column). */
export function toBytes(v: Value): Uint8Array | Unfit {
  if (v instanceof Uint8Array) return v;
  if (typeof v !== 'string') return UNFIT;
  const bytes = Buffer.from(v, 'base64');
  return toBase64(bytes) === v ? bytes : UNFIT;
}

/** A decimal's unscaled value at `scale` from a decimal, int, long, double or decimal-text column. */
export function toUnscaled(v: Value, type: IcebergType, scale: number): bigint | Unfit {
  const params = decimalParams(type);
  if (params && typeof v === 'bigint') return rescale(v, params.scale, scale);
  if (typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v)))
    return rescale(BigInt(v), 0, scale);
  if (typeof v === 'number') return Number.isFinite(v) ? parseDecimal(String(v), scale) : UNFIT;
  if (typeof v === 'string') return parseDecimal(v, scale);
  return UNFIT;
}

function rescale(unscaled: bigint, from: number, to: number): bigint | Unfit {
  if (from === to) return unscaled;
  if (from < to) return unscaled * 10n ** BigInt(to - from);
  const d = 10n ** BigInt(from - to);
  return unscaled % d === 0n ? unscaled / d : UNFIT;
}

/** Decimal text (`-12.30`, `1e-7` as a double prints) → unscaled at `scale`, exactly or UNFIT. */
function parseDecimal(text: string, scale: number): bigint | Unfit {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/i.exec(text);
  if (!m) return UNFIT;
  const fraction = m[3] ?? '';
  const exponent = Number(m[4] ?? 0);
  const digits = BigInt(`${m[2]}${fraction}`);
  const unscaled = rescale(digits, fraction.length - exponent, scale);
  return unscaled === UNFIT ? UNFIT : m[1] === '-' ? -unscaled : unscaled;
}

/** Big-endian two's complement in `size` bytes (Avro fixed decimals), or the fewest (bytes, size undefined). */
export function twosComplement(n: bigint, size?: number): Uint8Array | Unfit {
  const out: number[] = [];
  let v = n;
  for (;;) {
    const byte = Number(v & 0xffn);
    out.push(byte);
    v >>= 8n;
    const sign = (byte & 0x80) !== 0;
    if ((v === 0n && !sign) || (v === -1n && sign)) break;
  }
  if (size !== undefined) {
    if (out.length > size) return UNFIT;
    while (out.length < size) out.push(n < 0n ? 0xff : 0);
  }
  return Uint8Array.from(out.reverse());
}

const DATE = /^([+-]?\d{4,})-(\d{2})-(\d{2})$/;
const TIMESTAMP = /^([+-]?\d{4,})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3}|\d{6}|\d{9})(Z?)$/;
const TIME = /^(\d{2}):(\d{2}):(\d{2})\.(\d{3}|\d{6})$/;

/** Days since the epoch from a date column or the `YYYY-MM-DD` text a decoder wrote. */
export function toEpochDays(v: Value, type: IcebergType): number | Unfit {
  if (type === 'date') return typeof v === 'number' ? v : UNFIT;
  if (typeof v !== 'string') return UNFIT;
  const m = DATE.exec(v);
  if (!m) return UNFIT;
  const days = daysFromCivil(Number(m[1]), Number(m[2]), Number(m[3]));
  return formatEpochDate(days) === v ? days : UNFIT;
}

const COLUMN_UNIT: Partial<Record<string, [EpochUnit, boolean]>> = {
  timestamp: ['micros', false],
  timestamptz: ['micros', true],
  timestamp_ns: ['nanos', false],
  timestamptz_ns: ['nanos', true],
};

/**
 * An epoch value in `unit` for an instant (`utc`) or a wall-clock time, from a timestamp column of the
 * same kind or the ISO text a decoder wrote (`…Z` for instants, without for wall-clock ones).
 */
export function toEpoch(v: Value, type: IcebergType, unit: EpochUnit, utc: boolean): bigint | Unfit {
  const column = typeof type === 'string' ? COLUMN_UNIT[type] : undefined;
  if (column) {
    if (typeof v !== 'bigint' || column[1] !== utc) return UNFIT;
    return rescale(v, column[0] === 'nanos' ? 9 : 6, unit === 'nanos' ? 9 : unit === 'micros' ? 6 : 3);
  }
  if (typeof v !== 'string') return UNFIT;
  const m = TIMESTAMP.exec(v);
  if (!m) return UNFIT;
  const days = BigInt(daysFromCivil(Number(m[1]), Number(m[2]), Number(m[3])));
  const seconds = days * 86_400n + BigInt(Number(m[4]) * 3600 + Number(m[5]) * 60 + Number(m[6]));
  const digits = unit === 'nanos' ? 9 : unit === 'micros' ? 6 : 3;
  const value = seconds * PER_SECOND[unit] + BigInt(m[7].padEnd(digits, '0').slice(0, digits));
  return formatEpochValue(value, unit, utc) === v ? value : UNFIT;
}

/** A time of day in `unit` from a time column (µs) or the `HH:MM:SS.fff[fff]` text a decoder wrote. */
export function toTimeOfDay(v: Value, type: IcebergType, unit: 'millis' | 'micros'): bigint | Unfit {
  if (type === 'time') return typeof v === 'bigint' ? rescale(v, 6, unit === 'micros' ? 6 : 3) : UNFIT;
  if (typeof v === 'string') {
    const m = TIME.exec(v);
    if (!m) return UNFIT;
    const seconds = BigInt(Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]));
    const value = seconds * PER_SECOND[unit] + BigInt(m[4].padEnd(unit === 'micros' ? 6 : 3, '0'));
    return formatTimeOfDay(value, unit) === v ? value : UNFIT;
  }
  // A time outside one day was kept as its number by the decoder (a long column).
  return integerOf(v) ?? UNFIT;
}

/** A canonical UUID's text from a uuid or string column. */
export function toUuidText(v: Value): string | Unfit {
  if (typeof v !== 'string' || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(v))
    return UNFIT;
  return v;
}

/** A UUID's 16 bytes from a uuid or string column, or a fixed(16) / binary column holding them. */
export function toUuidBytes(v: Value): Uint8Array | Unfit {
  if (v instanceof Uint8Array) return v.length === 16 ? v : UNFIT;
  const text = toUuidText(v);
  return text === UNFIT ? UNFIT : uuidToBytes(text);
}
