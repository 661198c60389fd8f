/** Filters of any shape over a predicate arbitrary: and / or / not nested to a small depth. */
import fc from 'fast-check';
import type { BoundExpression, Expression } from '../../../functions/core/scan/expression.js';

export function filterOf<E extends Expression | BoundExpression>(
  predicate: fc.Arbitrary<E>,
): fc.Arbitrary<E> {
  return fc.letrec<{ expr: E }>((tie) => ({
    expr: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      predicate,
      fc.record({
        op: fc.constant('and' as const),
        left: tie('expr'),
        right: tie('expr'),
      }) as unknown as fc.Arbitrary<E>,
      fc.record({
        op: fc.constant('or' as const),
        left: tie('expr'),
        right: tie('expr'),
      }) as unknown as fc.Arbitrary<E>,
      fc.record({ op: fc.constant('not' as const), child: tie('expr') }) as unknown as fc.Arbitrary<E>,
    ),
  })).expr;
}
