/**
 * Inclusive projection of a row filter onto a partition spec (Iceberg's `InclusiveProjection` and
 * `ProjectionUtil`): if a row matches the filter, its partition tuple matches the projection. Rows
 * outside the filter may still pass it, so it only ever prunes files that cannot match.
 *
 * The projection is itself a BoundExpression whose references are partition fields (field id =
 * the partition field id, path = [partition field name], type = the transform's result type), so a
 * partition tuple (PartitionValues) is evaluated like a row.
 *
 * Transforms are assumed to floor for values before 1970, as the spec defines them (files written
 * by Iceberg Java before 0.12 truncated toward zero; Java widens its time projections for those,
 * floe does not).
 */
import { canTransform, applyTransform } from '../spec/transforms.js';
import { transformResultType } from '../spec/partition-type.js';
import { compareValues } from '../spec/conversions.js';
import type { PartitionField, PartitionSpec, PartitionValues, PrimitiveType, Value } from '../spec/types.js';
import type { BoundExpression, BoundPredicate, BoundReference } from './expression.js';
import { ALWAYS_TRUE, makeAnd, makeOr, rewriteNot } from './expression-helpers.js';
import { evaluateRow } from './evaluate-row.js';

/**
 * Projects a filter bound to the table schema onto `spec`. Partition fields whose source is not
 * filtered on (or whose transform does not apply to the source type) contribute nothing (true).
 * @throws ValidationError only when a transform rejects a literal of its source type (a binding bug)
 */
export function projectPartition(expr: BoundExpression, spec: PartitionSpec): BoundExpression {
  return project(rewriteNot(expr), spec);
}

/** Whether a partition tuple can hold rows of the filter whose projection is `projected`. Never throws. */
export function evaluatePartition(projected: BoundExpression, partition: PartitionValues): boolean {
  return evaluateRow(projected, partition);
}

function project(expr: BoundExpression, spec: PartitionSpec): BoundExpression {
  switch (expr.op) {
    case 'true':
    case 'false':
      return expr;
    case 'and':
      return makeAnd(project(expr.left, spec), project(expr.right, spec));
    case 'or':
      return makeOr(project(expr.left, spec), project(expr.right, spec));
    case 'not':
      // rewriteNot removed every `not`; keep the projection inclusive if one slips through.
      return ALWAYS_TRUE;
    default: {
      // Every partition field fed by this column constrains the tuple; each projection is implied
      // by the row predicate, so their conjunction is too.
      let result: BoundExpression = ALWAYS_TRUE;
      for (const field of spec.fields) {
        if (field['source-id'] !== expr.term.fieldId) continue;
        if (!canTransform(field.transform, expr.term.type)) continue;
        result = makeAnd(result, projectPredicate(expr, field));
      }
      return result;
    }
  }
}

/** The partition-field reference a projection of `field` compares against. */
export function partitionReference(field: PartitionField, sourceType: PrimitiveType): BoundReference {
  return {
    fieldId: field['field-id'],
    name: field.name,
    path: [field.name],
    type: transformResultType(field.transform, sourceType) as PrimitiveType,
    required: false,
  };
}

function projectPredicate(pred: BoundPredicate, field: PartitionField): BoundExpression {
  const transform = field.transform;
  const sourceType = pred.term.type;
  if (transform === 'void') return ALWAYS_TRUE;
  const term = partitionReference(field, sourceType);
  const apply = (v: Value) => applyTransform(transform, sourceType, v);
  switch (pred.op) {
    case 'is-null':
    case 'not-null':
      // Every transform but void maps null to null and non-null to non-null.
      return { op: pred.op, term };
    case 'is-nan':
    case 'not-nan':
      return transform === 'identity' ? { op: pred.op, term } : ALWAYS_TRUE;
  }
  if (transform === 'identity') return { ...pred, term } as BoundExpression;
  if (pred.op === 'in') return { op: 'in', term, values: uniqueValues(pred.values.map(apply)) };
  if (pred.op === 'eq') return { op: 'eq', term, value: apply(pred.value) };
  // Bucketing does not preserve order, and no transform but identity can prune not-eq / not-in
  // (another value may share the partition).
  if (transform.startsWith('bucket[') || !('value' in pred) || pred.op === 'not-eq') return ALWAYS_TRUE;

  const v = pred.value;
  if (sourceType === 'string' || sourceType === 'binary') {
    // truncate on strings/binary: the truncated literal bounds every value on its side, inclusively
    // (`s < 'abc'` with width 2 → `p <= 'ab'`).
    const op = pred.op === 'lt' || pred.op === 'lt-eq' ? 'lt-eq' : 'gt-eq';
    return { op, term, value: apply(v) };
  }
  // Integer-like sources (int, long, decimal unscaled, date days, timestamp µs) under a monotonic
  // transform (truncate, year/month/day/hour): `x < v` is `x <= v - 1`, then `t(x) <= t(v - 1)`.
  switch (pred.op) {
    case 'lt':
      return { op: 'lt-eq', term, value: apply(step(v, -1)) };
    case 'lt-eq':
      return { op: 'lt-eq', term, value: apply(v) };
    case 'gt':
      return { op: 'gt-eq', term, value: apply(step(v, 1)) };
    case 'gt-eq':
      return { op: 'gt-eq', term, value: apply(v) };
  }
  return ALWAYS_TRUE;
}

/** v ± 1 in the value's own representation (number or bigint). */
function step(v: Value, by: 1 | -1): Value {
  if (typeof v === 'bigint') return v + BigInt(by);
  return (v as number) + by;
}

function uniqueValues(values: Value[]): Value[] {
  const out: Value[] = [];
  for (const v of values) if (!out.some((o) => compareValues(o, v) === 0)) out.push(v);
  return out;
}
