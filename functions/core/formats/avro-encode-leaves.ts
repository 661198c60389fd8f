/**
 * The leaves of avro-encoder.ts: Avro logical types kept as markers (identity LogicalTypes that
 * remember their attributes, checked as avro-logical-types.ts checks them: an invalid one was decoded
 * as its underlying type, so it encodes so), longs as exact 64-bit bigints tagged with their logical
 * type, and the converters of those leaves from the columns they may have landed in.
 */
import avro from 'avsc';
import { decimalParams, fixedLength } from '../spec/conversions.js';
import type { IcebergType, Value } from '../spec/types.js';
import {
  type Convert,
  toEpoch,
  toEpochDays,
  toInt32,
  toInt64,
  toTimeOfDay,
  toUnscaled,
  toUuidBytes,
  toUuidText,
  ShapeMismatch,
  twosComplement,
  UNFIT,
  type Unfit,
} from './encode-values.js';

/** Logical types kept as markers: the value written is the underlying one, which this file makes. */
export class LogicalMarker extends avro.types.LogicalType {
  readonly attrs: Record<string, unknown>;
  constructor(schema: avro.Schema, opts?: unknown) {
    super(schema, opts);
    this.attrs = schema as unknown as Record<string, unknown>;
    if (!validLogical(this.attrs)) throw new Error('invalid logical type: the underlying type is used');
  }
  protected override _fromValue(v: unknown): unknown {
    return v;
  }
  protected override _toValue(v: unknown): unknown {
    return v;
  }
}

/** avro-logical-types.ts's checks: an invalid logical type decoded as its underlying type, so it encodes so. */
function validLogical(a: Record<string, unknown>): boolean {
  switch (a.logicalType) {
    case 'decimal': {
      const p = a.precision;
      const s = a.scale ?? 0;
      return (
        Number.isInteger(p) &&
        (p as number) >= 1 &&
        Number.isInteger(s) &&
        (s as number) >= 0 &&
        (s as number) <= (p as number) &&
        (a.type === 'bytes' || a.type === 'fixed')
      );
    }
    case 'date':
    case 'time-millis':
      return a.type === 'int';
    case 'uuid':
      return a.type === 'string' || (a.type === 'fixed' && a.size === 16);
    default:
      return false;
  }
}

export const LOGICAL = {
  decimal: LogicalMarker,
  date: LogicalMarker,
  'time-millis': LogicalMarker,
  uuid: LogicalMarker,
};
const LONG_LOGICAL = new Set([
  'time-micros',
  'timestamp-millis',
  'timestamp-micros',
  'timestamp-nanos',
  'local-timestamp-millis',
  'local-timestamp-micros',
  'local-timestamp-nanos',
]);

/** An exact 64-bit long (avsc's own is a JS number), tagged with its logical type when it has one. */
function bigintLong(): avro.types.LongType {
  return avro.types.LongType.__with({
    fromBuffer: (buf: Buffer) => buf.readBigInt64LE(0),
    toBuffer: (n: bigint) => {
      const buf = Buffer.alloc(8);
      buf.writeBigInt64LE(n);
      return buf;
    },
    fromJSON: (json: unknown) => BigInt(json as number | string),
    toJSON: (n: bigint) => Number(n),
    isValid: (n: unknown) => typeof n === 'bigint',
    compare: (a: bigint, b: bigint) => (a === b ? 0 : a < b ? -1 : 1),
  });
}

const longLogical = new WeakMap<avro.Type, string>();

export function longHook(schema: unknown): avro.Type | undefined {
  if (schema === 'long') return bigintLong();
  if (typeof schema !== 'object' || schema === null || (schema as { type?: unknown }).type !== 'long')
    return undefined;
  const type = bigintLong();
  const logical = (schema as { logicalType?: unknown }).logicalType;
  if (typeof logical === 'string' && LONG_LOGICAL.has(logical)) longLogical.set(type, logical);
  return type;
}

export function mismatch(path: string, what: string): ShapeMismatch {
  return new ShapeMismatch(`${path || 'the value'}: ${what}`);
}

export const nonNull =
  <T>(convert: (v: Value) => T | Unfit): Convert =>
  (v) =>
    v === null || v === undefined ? UNFIT : convert(v);

export function primitiveOf(column: IcebergType): string | undefined {
  return typeof column === 'string' ? column : undefined;
}

export function logicalConverter(
  type: LogicalMarker,
  column: IcebergType,
  path: string,
): Convert | ShapeMismatch {
  const a = type.attrs;
  const c = primitiveOf(column);
  if (c === undefined)
    return mismatch(path, `a ${String(a.logicalType)} cannot come from a ${describe(column)}`);
  switch (a.logicalType) {
    case 'decimal': {
      const scale = (a.scale as number | undefined) ?? 0;
      const size = a.type === 'fixed' ? (a.size as number) : undefined;
      if (!decimalParams(column) && !['int', 'long', 'double', 'float', 'string'].includes(c))
        return mismatch(path, `a decimal cannot come from a ${c} column`);
      return nonNull((v) => {
        const unscaled = toUnscaled(v, column, scale);
        if (unscaled === UNFIT) return UNFIT;
        const bytes = twosComplement(unscaled, size);
        return bytes === UNFIT ? UNFIT : Buffer.from(bytes);
      });
    }
    case 'date':
      return c === 'date' || c === 'string'
        ? nonNull((v) => toEpochDays(v, column))
        : mismatch(path, `a date cannot come from a ${c} column`);
    case 'time-millis':
      return c === 'time' || c === 'string' || c === 'int' || c === 'long'
        ? nonNull((v) => {
            const t = toTimeOfDay(v, column, 'millis');
            return t === UNFIT ? UNFIT : toInt32(t);
          })
        : mismatch(path, `a time-millis cannot come from a ${c} column`);
    default: // uuid
      if (
        c !== 'uuid' &&
        c !== 'string' &&
        !(a.type === 'fixed' && (c === 'binary' || fixedLength(column) === 16))
      )
        return mismatch(path, `a uuid cannot come from a ${c} column`);
      return a.type === 'fixed'
        ? nonNull((v) => {
            const bytes = toUuidBytes(v);
            return bytes === UNFIT ? UNFIT : Buffer.from(bytes);
          })
        : nonNull(toUuidText);
  }
}

export function describe(column: IcebergType): string {
  return typeof column === 'string' ? `${column} column` : `${column.type} column`;
}

export function longConverter(type: avro.Type, column: IcebergType, path: string): Convert | ShapeMismatch {
  const c = primitiveOf(column);
  const logical = longLogical.get(type);
  if (c === undefined) return mismatch(path, `a long cannot come from a ${describe(column)}`);
  if (logical === 'time-micros')
    return c === 'time' || c === 'string' || c === 'long'
      ? nonNull((v) => toTimeOfDay(v, column, 'micros'))
      : mismatch(path, `a time-micros cannot come from a ${c} column`);
  if (logical) {
    const utc = !logical.startsWith('local-');
    if (
      c !== 'string' &&
      c !== (utc ? 'timestamptz' : 'timestamp') &&
      c !== (utc ? 'timestamptz_ns' : 'timestamp_ns')
    )
      return mismatch(path, `a ${logical} cannot come from a ${c} column`);
    const unit = logical.slice(logical.lastIndexOf('-') + 1) as 'millis' | 'micros' | 'nanos';
    return nonNull((v) => toEpoch(v, column, unit, utc));
  }
  if (c !== 'int' && c !== 'long' && !decimalParams(column))
    return mismatch(path, `a long cannot come from a ${c} column`);
  return nonNull((v) => toInt64(v, column));
}
