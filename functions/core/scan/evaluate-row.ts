/**
 * Evaluates a bound expression on one row with SQL's three-valued logic (see expression.ts):
 * a comparison involving null is unknown, and only a true filter keeps the row.
 */
import { compareValues } from '../spec/conversions.js';
import type { Row, Value } from '../spec/types.js';
import type { BoundExpression, BoundPredicate, BoundReference, ComparisonOp } from './expression.js';
import { readPath } from './read-columns.js';

/** Whether `row` satisfies `expr` (true, not unknown). Never throws for rows of the bound schema. */
export function evaluateRow(expr: BoundExpression, row: Row): boolean {
  return evaluate(expr, row) === true;
}

/** The value at a reference's path; null when any struct on the way is null or absent. */
export function readTerm(row: Row, term: BoundReference): Value {
  return readPath(row, term.path);
}

/** true / false / null (unknown). */
export function evaluate(expr: BoundExpression, row: Row): boolean | null {
  switch (expr.op) {
    case 'true':
      return true;
    case 'false':
      return false;
    case 'and': {
      const left = evaluate(expr.left, row);
      if (left === false) return false;
      const right = evaluate(expr.right, row);
      if (right === false) return false;
      return left === true && right === true ? true : null;
    }
    case 'or': {
      const left = evaluate(expr.left, row);
      if (left === true) return true;
      const right = evaluate(expr.right, row);
      if (right === true) return true;
      return left === false && right === false ? false : null;
    }
    case 'not': {
      const child = evaluate(expr.child, row);
      return child === null ? null : !child;
    }
    default:
      return evaluatePredicate(expr, readTerm(row, expr.term));
  }
}

/**
 * One predicate on the value of its term (null when absent): true / false / null (unknown). The one
 * place predicate semantics live, for rows here and for columns in evaluate-columns.ts.
 */
export function evaluatePredicate(pred: BoundPredicate, value: Value): boolean | null {
  switch (pred.op) {
    case 'is-null':
      return value === null;
    case 'not-null':
      return value !== null;
    case 'is-nan':
      return Number.isNaN(value);
    case 'not-nan':
      return !Number.isNaN(value);
    case 'in':
    case 'not-in': {
      if (value === null) return null;
      if (isNaNValue(value)) return pred.op === 'not-in';
      const found = pred.values.some((v) => compareValues(value, v) === 0);
      return pred.op === 'in' ? found : !found;
    }
    default: {
      if (value === null) return null;
      // IEEE: NaN is unordered, so every comparison but != is false.
      if (isNaNValue(value)) return pred.op === 'not-eq';
      return comparisonHolds(pred.op, compareValues(value, pred.value));
    }
  }
}

/** Whether a comparison holds given the order of value and literal (cmp < 0, = 0, > 0). Never throws. */
export function comparisonHolds(op: ComparisonOp, cmp: number): boolean {
  switch (op) {
    case 'eq':
      return cmp === 0;
    case 'not-eq':
      return cmp !== 0;
    case 'lt':
      return cmp < 0;
    case 'lt-eq':
      return cmp <= 0;
    case 'gt':
      return cmp > 0;
    case 'gt-eq':
      return cmp >= 0;
  }
}

function isNaNValue(value: Value): boolean {
  return typeof value === 'number' && Number.isNaN(value);
}
