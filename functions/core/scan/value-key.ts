/**
 * A string key for a tuple of values, equal exactly when the values are equal the way Iceberg's
 * StructLikeSet compares them: null equals null, NaN equals NaN, -0.0 differs from 0.0, bytes by
 * content. Used to group partition tuples and to look up equality-delete rows.
 */
import type { Value } from '../spec/types.js';

/** Key of one primitive value. Never throws. */
export function valueKey(value: Value): string {
  if (value === null || value === undefined) return 'n';
  switch (typeof value) {
    case 'bigint':
      // Integers compare equal across int/long (a column promoted from int keeps its deletes).
      return `i${value}`;
    case 'number':
      if (Number.isInteger(value) && !Object.is(value, -0)) return `i${value}`;
      return `d${Object.is(value, -0) ? '-0' : String(value)}`;
    case 'boolean':
      return value ? 't' : 'f';
    case 'string':
      return `s${JSON.stringify(value)}`;
  }
  if (value instanceof Uint8Array) return `b${Buffer.from(value).toString('hex')}`;
  // Nested values never key partitions or equality deletes; keep the key total anyway.
  return `j${JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))}`;
}

/** Key of a tuple of values (order matters). Never throws. */
export function tupleKey(values: readonly Value[]): string {
  return values.map(valueKey).join('|');
}
