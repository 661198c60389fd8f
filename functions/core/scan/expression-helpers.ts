/** Building and rewriting expressions (constant folding, pushing `not` down). */
import type { BoundExpression, Expression } from './expression.js';

export const ALWAYS_TRUE: { op: 'true' } = { op: 'true' };
export const ALWAYS_FALSE: { op: 'false' } = { op: 'false' };

const NEGATED = {
  eq: 'not-eq',
  'not-eq': 'eq',
  lt: 'gt-eq',
  'lt-eq': 'gt',
  gt: 'lt-eq',
  'gt-eq': 'lt',
  in: 'not-in',
  'not-in': 'in',
  'is-null': 'not-null',
  'not-null': 'is-null',
  'is-nan': 'not-nan',
  'not-nan': 'is-nan',
} as const;

/** `a and b`, folding constants. Never throws. */
export function makeAnd<E extends Expression | BoundExpression>(left: E, right: E): E {
  if (left.op === 'false' || right.op === 'false') return ALWAYS_FALSE as E;
  if (left.op === 'true') return right;
  if (right.op === 'true') return left;
  return { op: 'and', left, right } as E;
}

/** `a or b`, folding constants. Never throws. */
export function makeOr<E extends Expression | BoundExpression>(left: E, right: E): E {
  if (left.op === 'true' || right.op === 'true') return ALWAYS_TRUE as E;
  if (left.op === 'false') return right;
  if (right.op === 'false') return left;
  return { op: 'or', left, right } as E;
}

/** Every expression joined with `and`; `true` for none. Never throws. */
export function makeAndAll<E extends Expression | BoundExpression>(items: E[]): E {
  return items.reduce((acc, item) => makeAnd(acc, item), ALWAYS_TRUE as E);
}

/**
 * Pushes every `not` down to the predicates (`not (a < 1)` → `a >= 1`, De Morgan for and/or).
 * Under three-valued logic this keeps the meaning exactly (`not unknown` = unknown = the negated
 * comparison on a null), and it is what the inclusive evaluators need: "might match" cannot be negated.
 * Never throws.
 */
export function rewriteNot(expr: BoundExpression): BoundExpression {
  switch (expr.op) {
    case 'true':
    case 'false':
      return expr;
    case 'and':
      return makeAnd(rewriteNot(expr.left), rewriteNot(expr.right));
    case 'or':
      return makeOr(rewriteNot(expr.left), rewriteNot(expr.right));
    case 'not':
      return negate(expr.child);
    default:
      return expr;
  }
}

function negate(expr: BoundExpression): BoundExpression {
  switch (expr.op) {
    case 'true':
      return ALWAYS_FALSE;
    case 'false':
      return ALWAYS_TRUE;
    case 'and':
      return makeOr(negate(expr.left), negate(expr.right));
    case 'or':
      return makeAnd(negate(expr.left), negate(expr.right));
    case 'not':
      return rewriteNot(expr.child);
    default: {
      const negated = { ...expr, op: NEGATED[expr.op] } as BoundExpression;
      // NaN compares false with everything, so `not (x < v)` holds for a NaN but `x >= v` does not:
      // for floats a negated order comparison keeps the NaNs explicitly.
      const isFloat = expr.term.type === 'float' || expr.term.type === 'double';
      if (isFloat && (expr.op === 'lt' || expr.op === 'lt-eq' || expr.op === 'gt' || expr.op === 'gt-eq')) {
        return makeOr(negated, { op: 'is-nan', term: expr.term });
      }
      return negated;
    }
  }
}

/** Field ids every predicate of a bound expression refers to. Never throws. */
export function collectFieldIds(expr: BoundExpression, into: Set<number> = new Set()): Set<number> {
  switch (expr.op) {
    case 'true':
    case 'false':
      return into;
    case 'and':
    case 'or':
      collectFieldIds(expr.left, into);
      return collectFieldIds(expr.right, into);
    case 'not':
      return collectFieldIds(expr.child, into);
    default:
      into.add(expr.term.fieldId);
      return into;
  }
}
