/**
 * Per-column statistics gathered while the Arrow columns are built, and their Iceberg encoding.
 * Bounds are computed from the values themselves rather than read back from the Parquet footer:
 * the values are exact (a footer decimal or int64 decoded by a JS reader may not be), NaN is kept
 * out, and the ordering is Iceberg's (code points, unsigned bytes, -0 < +0).
 */
import {
  encodeValue,
  truncateBinaryLower,
  truncateBinaryUpper,
  truncateStringLower,
  truncateStringUpper,
} from '../../spec/conversions.js';
import type { PrimitiveType, Value } from '../../spec/types.js';

/** What one leaf column's values showed; min/max stay undefined when bounds are not kept. */
export interface LeafStats {
  type: PrimitiveType;
  nanCount: number;
  min: Value | undefined;
  max: Value | undefined;
}

/** Leaf field id → its stats, filled by the column builders. */
export type StatsSink = Map<number, LeafStats>;

export interface EncodedBounds {
  lower: Map<number, Uint8Array>;
  upper: Map<number, Uint8Array>;
  nanCounts: Map<number, bigint>;
}

/**
 * Iceberg single-value bounds of every leaf that has them, strings and binary truncated to
 * `truncateLength` (Iceberg's `truncate(16)` metrics mode). An upper bound that cannot be rounded up
 * after truncation is left out, as Iceberg Java does. NaN counts for float/double columns.
 */
export function encodeBounds(stats: StatsSink, truncateLength: number): EncodedBounds {
  const lower = new Map<number, Uint8Array>();
  const upper = new Map<number, Uint8Array>();
  const nanCounts = new Map<number, bigint>();
  for (const [id, s] of stats) {
    if (s.type === 'float' || s.type === 'double') nanCounts.set(id, BigInt(s.nanCount));
    if (s.min === undefined || s.max === undefined || s.min === null || s.max === null) continue;
    const low = truncateLowerBound(s.type, s.min, truncateLength);
    const high = truncateUpperBound(s.type, s.max, truncateLength);
    lower.set(id, encodeValue(s.type, low));
    if (high !== undefined) upper.set(id, encodeValue(s.type, high));
  }
  return { lower, upper, nanCounts };
}

function truncateLowerBound(type: PrimitiveType, value: Value, length: number): Value {
  if (type === 'string') return truncateStringLower(value as string, length);
  if (type === 'binary') return truncateBinaryLower(value as Uint8Array, length);
  return value;
}

function truncateUpperBound(type: PrimitiveType, value: Value, length: number): Value | undefined {
  if (type === 'string') return truncateStringUpper(value as string, length);
  if (type === 'binary') return truncateBinaryUpper(value as Uint8Array, length);
  return value;
}
