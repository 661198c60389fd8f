/**
 * Can a data file hold rows matching a filter, judging by its column metrics (value, null and NaN
 * counts, lower/upper bounds)? Iceberg's `InclusiveMetricsEvaluator`: "true" means "might", and any
 * missing metric means "might".
 *
 * Bounds may be truncated (strings and binary, by default to 16 characters/bytes): a lower bound is
 * ≤ every value and an upper bound ≥ every value, but neither need be a value. So `eq` is checked as
 * lower ≤ v ≤ upper, and `not-eq` can prune only a file whose values are all null (a comparison with
 * null is never true here) or all one value — lower = upper = v, which truncation cannot produce
 * unless every value is v — with no NaN among them.
 *
 * The comparisons are evaluate-bounds.ts's, shared with the manifest summaries. A bound absent here is
 * unknown (the writer may not collect bounds for the column): unlike a manifest summary's, it does not
 * say that every value is null; the null and value counts say that.
 */
import { compareValues, decodeValue } from '../spec/conversions.js';
import type { DataFile, Value } from '../spec/types.js';
import { boundsMightMatch } from './evaluate-bounds.js';
import type { BoundExpression, BoundPredicate, BoundReference } from './expression.js';
import { rewriteNot } from './expression-helpers.js';

/**
 * Whether `file` might contain rows satisfying `expr` (bound to the table schema).
 * Never throws: metrics that cannot be decoded are ignored.
 */
export function fileMightMatch(expr: BoundExpression, file: DataFile): boolean {
  // An empty file has no rows to match. (A negative count marks unknown in old v1 Avro files.)
  if (file.record_count === 0n) return false;
  return evaluate(rewriteNot(expr), new FileMetrics(file));
}

class FileMetrics {
  constructor(private readonly file: DataFile) {}

  valueCount(id: number): bigint | undefined {
    return this.file.value_counts?.get(id);
  }

  nullCount(id: number): bigint | undefined {
    return this.file.null_value_counts?.get(id);
  }

  nanCount(id: number): bigint | undefined {
    return this.file.nan_value_counts?.get(id);
  }

  /** Every value of the column is null (counts known and equal). */
  nullsOnly(id: number): boolean {
    const values = this.valueCount(id);
    const nulls = this.nullCount(id);
    return values !== undefined && nulls !== undefined && values === nulls;
  }

  /** Every value of the column is NaN. */
  nansOnly(id: number): boolean {
    const values = this.valueCount(id);
    const nans = this.nanCount(id);
    return values !== undefined && nans !== undefined && values === nans;
  }

  lower(term: BoundReference): Value {
    return this.bound(this.file.lower_bounds, term);
  }

  upper(term: BoundReference): Value {
    return this.bound(this.file.upper_bounds, term);
  }

  private bound(bounds: Map<number, Uint8Array> | undefined, term: BoundReference): Value {
    const bytes = bounds?.get(term.fieldId);
    if (!bytes) return null;
    try {
      const value = decodeValue(term.type, bytes);
      // Older writers could put NaN in bounds; such a bound says nothing about order.
      return typeof value === 'number' && Number.isNaN(value) ? null : value;
    } catch {
      return null;
    }
  }
}

function evaluate(expr: BoundExpression, m: FileMetrics): boolean {
  switch (expr.op) {
    case 'true':
      return true;
    case 'false':
      return false;
    case 'and':
      return evaluate(expr.left, m) && evaluate(expr.right, m);
    case 'or':
      return evaluate(expr.left, m) || evaluate(expr.right, m);
    case 'not':
      return true; // rewriteNot removed these; "might" is the only safe answer
    default:
      return evaluatePredicate(expr, m);
  }
}

function evaluatePredicate(pred: BoundPredicate, m: FileMetrics): boolean {
  const id = pred.term.fieldId;
  const isFloat = pred.term.type === 'float' || pred.term.type === 'double';
  switch (pred.op) {
    case 'is-null': {
      const nulls = m.nullCount(id);
      return nulls === undefined || nulls > 0n;
    }
    case 'not-null':
      return !m.nullsOnly(id);
    case 'is-nan': {
      const nans = m.nanCount(id);
      if (nans !== undefined && nans === 0n) return false;
      return !m.nullsOnly(id);
    }
    case 'not-nan':
      return !m.nansOnly(id);
  }
  // No comparison is true for a null; none but != / not in is true for a NaN.
  if (m.nullsOnly(id)) return false;
  const lower = m.lower(pred.term);
  const upper = m.upper(pred.term);
  switch (pred.op) {
    case 'not-eq':
    case 'not-in': {
      const values = 'values' in pred ? pred.values : [pred.value];
      const allOneExcludedValue =
        isSingleValue(lower, upper) &&
        values.some((v) => compareValues(lower, v) === 0) &&
        noNaN(m, id, isFloat);
      return !allOneExcludedValue;
    }
  }
  if (m.nansOnly(id)) return false;
  return boundsMightMatch(pred, lower, upper);
}

function isSingleValue(lower: Value, upper: Value): boolean {
  return lower !== null && upper !== null && compareValues(lower, upper) === 0;
}

/** No NaN in the column (NaN != v holds, so a NaN keeps a not-eq file alive). */
function noNaN(m: FileMetrics, id: number, isFloat: boolean): boolean {
  if (!isFloat) return true;
  const nans = m.nanCount(id);
  return nans !== undefined && nans === 0n;
}
