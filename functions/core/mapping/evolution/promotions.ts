/**
 * The type changes Iceberg v2 allows on an existing column (spec, "Schema Evolution"): int → long,
 * float → double, decimal(P,S) → decimal(P',S) with P' > P. Nothing else: not long → int (narrowing),
 * not string ↔ number, not a scale change. And a promotion of a partition source column is refused when
 * the partition transform would give a different value after it.
 */
import { decimalParams } from '../../spec/conversions.js';
import type { PrimitiveType, Transform } from '../../spec/types.js';

/** Same primitive type (decimal(10,2) and decimal(10, 2) are the same). */
export function samePrimitive(a: PrimitiveType, b: PrimitiveType): boolean {
  if (a === b) return true;
  const da = decimalParams(a);
  const db = decimalParams(b);
  return da !== undefined && db !== undefined && da.precision === db.precision && da.scale === db.scale;
}

/** True when `from` may be promoted to `to` (a strict widening Iceberg v2 allows). */
export function canPromote(from: PrimitiveType, to: PrimitiveType): boolean {
  if (from === 'int' && to === 'long') return true;
  if (from === 'float' && to === 'double') return true;
  const df = decimalParams(from);
  const dt = decimalParams(to);
  return df !== undefined && dt !== undefined && df.scale === dt.scale && dt.precision > df.precision;
}

/** `decimal(P, S)` in the spelling the rest of floe writes. */
export function decimalType(precision: number, scale: number): PrimitiveType {
  return `decimal(${precision}, ${scale})`;
}

/**
 * Whether a partition transform gives the same value for a source value before and after promoting
 * its column. identity keeps the value (only its width grows); bucket hashes ints as longs and decimals
 * by their unscaled bytes (spec, Appendix B), so it is unchanged; truncate works on the integer or
 * unscaled value, unchanged too; void is always null. year/month/day/hour have no v2 promotion of their
 * source types, and transforms unknown here are never assumed safe.
 */
export function promotionKeepsPartitionValues(
  transform: Transform,
  from: PrimitiveType,
  to: PrimitiveType,
): boolean {
  if (!canPromote(from, to)) return false;
  if (transform === 'void' || transform === 'identity') return true;
  if (transform.startsWith('bucket[')) return from !== 'float';
  if (transform.startsWith('truncate[')) return from === 'int' || decimalParams(from) !== undefined;
  return false;
}
