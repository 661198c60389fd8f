/**
 * avsc types that decode straight to floe's JSON-like values, exactly:
 *
 * | Avro                                   | emitted                                                    |
 * |----------------------------------------|------------------------------------------------------------|
 * | long                                   | number when |n| ≤ 2^53 − 1, else JsonNumberText (exact)    |
 * | decimal (bytes or fixed)               | JsonNumberText of the exact decimal, scale digits kept ("12.30") |
 * | timestamp-millis / -micros / -nanos    | ISO-8601 UTC text, every digit of the unit: `2024-03-01T12:00:00.123456Z` |
 * | local-timestamp-millis / -micros / -nanos | the same without `Z` (wall-clock, for `timestamp` columns) |
 * | date                                   | `YYYY-MM-DD`                                               |
 * | time-millis / time-micros              | `HH:MM:SS.fff` / `HH:MM:SS.ffffff` (the number if outside a day) |
 * | uuid (string or fixed 16)              | canonical lower-case UUID text                             |
 * | duration (fixed 12)                    | `{ months, days, milliseconds }`                           |
 *
 * Long-based logical types are built with `LongType.__with` and returned from the type hook, because
 * avsc's own long is a JS number (loses digits past 2^53). Other logical types are avsc
 * `LogicalType`s; when one's attributes are invalid avsc falls back to the underlying type, as the
 * Avro spec says. These types only decode: writing is never asked of them.
 */
import avro from 'avsc';
import { JsonNumberText } from '../records/json-to-value.js';
import {
  bigintFromTwosComplement,
  type EpochUnit,
  exactInteger,
  formatDecimal,
  formatEpochDate,
  formatEpochValue,
  formatTimeOfDay,
} from './value-text.js';

function decodeOnly(): never {
  throw new Error('floe decodes Avro only; this type cannot encode');
}

function compareText(a: unknown, b: unknown): number {
  const x = String(a instanceof JsonNumberText ? a.text : a);
  const y = String(b instanceof JsonNumberText ? b.text : b);
  return x === y ? 0 : x < y ? -1 : 1;
}

/** A long decoded through `decode` from its exact 64-bit value. */
function longType(decode: (n: bigint) => unknown): avro.types.LongType {
  return avro.types.LongType.__with({
    fromBuffer: (buf: Buffer) => decode(buf.readBigInt64LE(0)),
    // Field defaults arrive as JSON numbers (or strings for big ones).
    fromJSON: (json: unknown) => decode(BigInt(json as number | string)),
    toBuffer: decodeOnly,
    toJSON: decodeOnly,
    isValid: () => true,
    compare: compareText,
  });
}

export const AVRO_LONG = longType(exactInteger);

function timeMicros(n: bigint): unknown {
  return formatTimeOfDay(n, 'micros') ?? exactInteger(n);
}

const LONG_LOGICAL: Record<string, avro.types.LongType> = {
  'time-micros': longType(timeMicros),
};
for (const unit of ['millis', 'micros', 'nanos'] as EpochUnit[]) {
  LONG_LOGICAL[`timestamp-${unit}`] = longType((n) => formatEpochValue(n, unit, true));
  LONG_LOGICAL[`local-timestamp-${unit}`] = longType((n) => formatEpochValue(n, unit, false));
}

/** The type hook: every Avro long (plain or logical) becomes one of the exact types above. */
export function avroLongHook(schema: unknown): avro.Type | undefined {
  if (schema === 'long') return AVRO_LONG;
  if (typeof schema !== 'object' || schema === null || (schema as { type?: unknown }).type !== 'long')
    return undefined;
  const logical = (schema as { logicalType?: unknown }).logicalType;
  return (typeof logical === 'string' ? LONG_LOGICAL[logical] : undefined) ?? AVRO_LONG;
}

type SchemaAttributes = Record<string, unknown>;

function underlyingName(schema: SchemaAttributes): unknown {
  return schema.type;
}

class DecimalType extends avro.types.LogicalType {
  readonly #scale: number;
  constructor(schema: avro.Schema, opts?: unknown) {
    super(schema, opts);
    const attrs = schema as unknown as SchemaAttributes;
    const precision = attrs.precision;
    const scale = attrs.scale ?? 0;
    if (!Number.isInteger(precision) || (precision as number) < 1)
      throw new Error('invalid decimal precision');
    if (!Number.isInteger(scale) || (scale as number) < 0 || (scale as number) > (precision as number)) {
      throw new Error('invalid decimal scale');
    }
    const type = underlyingName(attrs);
    if (type !== 'bytes' && type !== 'fixed') throw new Error('decimal must annotate bytes or fixed');
    this.#scale = scale as number;
  }
  protected override _fromValue(buf: Buffer): JsonNumberText {
    return new JsonNumberText(formatDecimal(bigintFromTwosComplement(buf), this.#scale));
  }
  protected override _toValue(): never {
    return decodeOnly();
  }
}

class DateType extends avro.types.LogicalType {
  constructor(schema: avro.Schema, opts?: unknown) {
    super(schema, opts);
    if (underlyingName(schema as unknown as SchemaAttributes) !== 'int')
      throw new Error('date must annotate int');
  }
  protected override _fromValue(days: number): string {
    return formatEpochDate(days);
  }
  protected override _toValue(): never {
    return decodeOnly();
  }
}

class TimeMillisType extends avro.types.LogicalType {
  constructor(schema: avro.Schema, opts?: unknown) {
    super(schema, opts);
    if (underlyingName(schema as unknown as SchemaAttributes) !== 'int')
      throw new Error('time-millis must annotate int');
  }
  protected override _fromValue(ms: number): string | number {
    return formatTimeOfDay(BigInt(ms), 'millis') ?? ms;
  }
  protected override _toValue(): never {
    return decodeOnly();
  }
}

class UuidType extends avro.types.LogicalType {
  constructor(schema: avro.Schema, opts?: unknown) {
    super(schema, opts);
    const attrs = schema as unknown as SchemaAttributes;
    const type = underlyingName(attrs);
    if (type !== 'string' && !(type === 'fixed' && attrs.size === 16)) {
      throw new Error('uuid must annotate string or fixed(16)');
    }
  }
  protected override _fromValue(value: string | Buffer): string {
    if (typeof value === 'string') return value;
    const hex = value.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
  protected override _toValue(): never {
    return decodeOnly();
  }
}

class DurationType extends avro.types.LogicalType {
  constructor(schema: avro.Schema, opts?: unknown) {
    super(schema, opts);
    const attrs = schema as unknown as SchemaAttributes;
    if (underlyingName(attrs) !== 'fixed' || attrs.size !== 12)
      throw new Error('duration must annotate fixed(12)');
  }
  protected override _fromValue(buf: Buffer): { months: number; days: number; milliseconds: number } {
    return { months: buf.readUInt32LE(0), days: buf.readUInt32LE(4), milliseconds: buf.readUInt32LE(8) };
  }
  protected override _toValue(): never {
    return decodeOnly();
  }
}

/** avsc's `logicalTypes` option for the non-long logical types. */
export const AVRO_LOGICAL_TYPES = {
  decimal: DecimalType,
  date: DateType,
  'time-millis': TimeMillisType,
  uuid: UuidType,
  duration: DurationType,
};
