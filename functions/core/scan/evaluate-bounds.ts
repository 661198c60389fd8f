/**
 * Whether a comparison might hold for some value between a lower and an upper bound: the one rule of
 * both pruning evaluators, a manifest's partition summaries (evaluate-manifest.ts) and a data file's
 * column metrics (evaluate-metrics.ts). Bounds are inclusive and may be truncated (a lower bound is ≤
 * every value and an upper bound ≥ every value, but neither need be a value), so "true" means "might".
 *
 * A null bound here is an unknown bound: that side is open. What a bound *absent from the metadata*
 * means is the caller's to decide before asking, because the two sources define it differently. A
 * manifest's field summary leaves out its lower bound exactly when every value is null or NaN (the
 * spec's `field_summary`), so there nothing satisfies a comparison; a data file's bounds may simply not
 * have been collected (metrics mode `none` or `counts`), so there anything might. A bound that is
 * present but NaN (writers the spec now forbids wrote them) says nothing about order: unknown at both.
 */
import { compareValues } from '../spec/conversions.js';
import type { Value } from '../spec/types.js';
import type { BoundPredicate } from './expression.js';

/**
 * Whether some value in [lower, upper] (null: that side unknown) might satisfy `pred`. Bounds decide
 * lt, lt-eq, gt, gt-eq, eq and in; for the other predicates (null and NaN tests, not-eq, not-in, which
 * need the counts) they say nothing, and the answer is "might". Never throws.
 */
export function boundsMightMatch(pred: BoundPredicate, lower: Value, upper: Value): boolean {
  switch (pred.op) {
    case 'lt':
      return lower === null || compareValues(lower, pred.value) < 0;
    case 'lt-eq':
      return lower === null || compareValues(lower, pred.value) <= 0;
    case 'gt':
      return upper === null || compareValues(upper, pred.value) > 0;
    case 'gt-eq':
      return upper === null || compareValues(upper, pred.value) >= 0;
    case 'eq':
      return mightContain(pred.value, lower, upper);
    case 'in':
      return pred.values.some((v) => mightContain(v, lower, upper));
    default:
      return true;
  }
}

function mightContain(value: Value, lower: Value, upper: Value): boolean {
  if (lower !== null && compareValues(lower, value) > 0) return false;
  return upper === null || compareValues(upper, value) >= 0;
}
