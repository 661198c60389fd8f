/**
 * Partition field summaries for the manifest list (`field_summary`): per partition field, whether any
 * tuple is null or NaN and the bounds of the rest, serialised with Iceberg's single-value encoding.
 * Readers prune whole manifests with these, so they must cover every tuple they could be asked about.
 */
import { compareValues, encodeValue } from '../spec/conversions.js';
import type { FieldSummary, PartitionValues, Value } from '../spec/types.js';
import type { PartitionAvroField } from './partition-avro.js';

/** Orders values like compareValues, but -0.0 below +0.0 (spec: a -0.0 value must not get a +0.0 lower bound). */
function compareForBounds(a: Value, b: Value): number {
  if (a === 0 && b === 0) return (Object.is(a, -0) ? -1 : 0) - (Object.is(b, -0) ? -1 : 0);
  return compareValues(a, b);
}

/**
 * Summarises the given partition tuples, one FieldSummary per partition field in spec order.
 * `contains_nan` is false (not null) for non-floating fields, as Iceberg Java writes it.
 * @throws ValidationError when a value cannot be compared or serialised as its field's type
 */
export function summarizePartitions(
  fields: readonly PartitionAvroField[],
  tuples: readonly PartitionValues[],
): FieldSummary[] {
  return fields.map((field) => {
    let containsNull = false;
    let containsNan = false;
    let lower: Value = null;
    let upper: Value = null;
    for (const tuple of tuples) {
      const value = tuple[field.name] ?? null;
      if (value === null) {
        containsNull = true;
      } else if (typeof value === 'number' && Number.isNaN(value)) {
        containsNan = true;
      } else {
        if (lower === null || compareForBounds(value, lower) < 0) lower = value;
        if (upper === null || compareForBounds(value, upper) > 0) upper = value;
      }
    }
    return {
      contains_null: containsNull,
      contains_nan: containsNan,
      lower_bound: lower === null ? null : encodeValue(field.type, lower),
      upper_bound: upper === null ? null : encodeValue(field.type, upper),
    };
  });
}
