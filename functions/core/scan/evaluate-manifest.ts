/**
 * Can a manifest hold files matching a partition projection? Decided from the manifest list's
 * per-partition-field summaries (contains_null, contains_nan, lower/upper bound of the non-null,
 * non-NaN values), like Iceberg's `ManifestEvaluator`. Inclusive: "true" means "might". The
 * comparisons are evaluate-bounds.ts's, shared with the file metrics; what is this file's own is that a
 * summary without a lower bound has no non-null, non-NaN value at all.
 */
import { decodeValue } from '../spec/conversions.js';
import type { FieldSummary, ManifestFile, PartitionSpec, PrimitiveType, Value } from '../spec/types.js';
import { boundsMightMatch } from './evaluate-bounds.js';
import type { BoundExpression, BoundPredicate } from './expression.js';

interface DecodedSummary {
  containsNull: boolean;
  /** undefined when the writer did not say. */
  containsNaN: boolean | undefined;
  /**
   * Every value is null or NaN: the summary has no lower bound, which the spec writes exactly then
   * (a NaN bound a writer wrongly put there is present: unknown, not "no values").
   */
  noValues: boolean;
  /** null when unknown (absent, or NaN). */
  lower: Value;
  upper: Value;
}

/**
 * Whether `manifest` might contain files whose partition satisfies `projected` (a projection by
 * projectPartition onto `spec`, the manifest's spec). Missing or malformed summaries mean "might".
 * Never throws.
 */
export function manifestMightMatch(
  projected: BoundExpression,
  manifest: ManifestFile,
  spec: PartitionSpec,
): boolean {
  const summaries = manifest.partitions;
  if (!summaries || summaries.length !== spec.fields.length) return true;
  const cache = new Map<number, DecodedSummary | undefined>();
  const summaryOf = (pred: BoundPredicate): DecodedSummary | undefined => {
    const fieldId = pred.term.fieldId;
    if (!cache.has(fieldId)) {
      const index = spec.fields.findIndex((f) => f['field-id'] === fieldId);
      cache.set(fieldId, index < 0 ? undefined : decodeSummary(summaries[index], pred.term.type));
    }
    return cache.get(fieldId);
  };
  return evaluate(projected, summaryOf);
}

function decodeSummary(summary: FieldSummary, type: PrimitiveType): DecodedSummary | undefined {
  try {
    const decode = (bytes: Uint8Array | null): Value => {
      if (bytes === null) return null;
      const value = decodeValue(type, bytes);
      // The spec keeps NaN out of bounds; a writer that did not is treated as giving no bound.
      return typeof value === 'number' && Number.isNaN(value) ? null : value;
    };
    return {
      containsNull: summary.contains_null,
      containsNaN: summary.contains_nan ?? undefined,
      noValues: summary.lower_bound === null,
      lower: decode(summary.lower_bound),
      upper: decode(summary.upper_bound),
    };
  } catch {
    return undefined; // undecodable bounds prune nothing
  }
}

function evaluate(
  expr: BoundExpression,
  summaryOf: (pred: BoundPredicate) => DecodedSummary | undefined,
): boolean {
  switch (expr.op) {
    case 'true':
      return true;
    case 'false':
      return false;
    case 'and':
      return evaluate(expr.left, summaryOf) && evaluate(expr.right, summaryOf);
    case 'or':
      return evaluate(expr.left, summaryOf) || evaluate(expr.right, summaryOf);
    case 'not':
      return true; // projections carry no `not`; "might" is the only safe answer
  }
  const s = summaryOf(expr);
  if (!s) return true;
  const isFloat = expr.term.type === 'float' || expr.term.type === 'double';
  const noValues = s.noValues;
  switch (expr.op) {
    case 'is-null':
      return s.containsNull;
    case 'not-null':
      // All null: contains_null and no bounds — unless (for floats) NaNs may hide behind the bounds.
      return !(s.containsNull && noValues && (!isFloat || s.containsNaN === false));
    case 'is-nan':
      return s.containsNaN !== false;
    case 'not-nan':
      // not-nan holds for null, so only an all-NaN manifest is excluded.
      return !(s.containsNaN === true && !s.containsNull && noValues);
    case 'not-eq':
    case 'not-in':
      return true;
  }
  if (noValues) return false; // every value is null or NaN; none satisfies a comparison
  return boundsMightMatch(expr, s.lower, s.upper);
}
