import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import type { Expression } from '../../../functions/core/scan/expression.js';
import { formatExpression } from '../../../functions/core/scan/format-expression.js';
import { parseExpression } from '../../../functions/core/scan/parse-expression.js';

const num = (text: string) => ({ type: 'number', text }) as const;

function errorOf(text: string): ValidationError {
  try {
    parseExpression(text);
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error(`'${text}' parsed without error`);
}

describe('parseExpression', () => {
  it('parses the example from the CLI help with NOT > AND > OR precedence', () => {
    // Prepare
    const text =
      "order_ts >= '2024-05-01T00:00:00Z' and country in ('DE', 'FR') or not (amount < 10.5) and note is null";

    // Act
    const expr = parseExpression(text);

    // Assess
    expect(expr).toEqual({
      op: 'or',
      left: {
        op: 'and',
        left: { op: 'gt-eq', term: 'order_ts', value: '2024-05-01T00:00:00Z' },
        right: { op: 'in', term: 'country', values: ['DE', 'FR'] },
      },
      right: {
        op: 'and',
        left: { op: 'not', child: { op: 'lt', term: 'amount', value: num('10.5') } },
        right: { op: 'is-null', term: 'note' },
      },
    });
  });

  it('binds NOT tighter than AND: not a and b is (not a) and b', () => {
    const expr = parseExpression('not a = 1 and b = 2');
    expect(expr).toEqual({
      op: 'and',
      left: { op: 'not', child: { op: 'eq', term: 'a', value: num('1') } },
      right: { op: 'eq', term: 'b', value: num('2') },
    });
  });

  it('makes AND and OR left-associative and lets parentheses override', () => {
    const flat = parseExpression('a = 1 or b = 2 or c = 3');
    const grouped = parseExpression('a = 1 and (b = 2 or c = 3)');
    expect(flat).toEqual({
      op: 'or',
      left: {
        op: 'or',
        left: { op: 'eq', term: 'a', value: num('1') },
        right: { op: 'eq', term: 'b', value: num('2') },
      },
      right: { op: 'eq', term: 'c', value: num('3') },
    });
    expect(grouped.op).toBe('and');
    expect(grouped.op === 'and' && grouped.right.op).toBe('or');
  });

  it.each([
    ['id != 3', 'not-eq'],
    ['id <> 3', 'not-eq'],
    ['id = 3', 'eq'],
    ['id == 3', 'eq'],
    ['id < 3', 'lt'],
    ['id <= 3', 'lt-eq'],
    ['id > 3', 'gt'],
    ['id >= 3', 'gt-eq'],
  ])('reads %s as %s', (text, op) => {
    expect(parseExpression(text)).toEqual({ op, term: 'id', value: num('3') });
  });

  it('keeps number text exact, including signs, fractions and exponents', () => {
    const expr = parseExpression('x in (-3, 0.10, 12345678901234567890123, 1.5e-3, .5)');
    expect(expr).toEqual({
      op: 'in',
      term: 'x',
      values: [num('-3'), num('0.10'), num('12345678901234567890123'), num('1.5e-3'), num('.5')],
    });
  });

  it("unescapes '' inside strings and accepts case-insensitive keywords", () => {
    const expr = parseExpression("Name = 'O''Brien' AND flag IS NOT NULL Or ok = TRUE and v Is NaN");
    expect(expr).toEqual({
      op: 'or',
      left: {
        op: 'and',
        left: { op: 'eq', term: 'Name', value: "O'Brien" },
        right: { op: 'not-null', term: 'flag' },
      },
      right: { op: 'and', left: { op: 'eq', term: 'ok', value: true }, right: { op: 'is-nan', term: 'v' } },
    });
  });

  it('reads dotted and double-quoted column names', () => {
    expect(parseExpression("customer.address.city = 'Berlin'")).toEqual({
      op: 'eq',
      term: 'customer.address.city',
      value: 'Berlin',
    });
    expect(parseExpression('"order"."my col" is not nan')).toEqual({ op: 'not-nan', term: 'order.my col' });
  });

  it('reads not in, between and not between', () => {
    expect(parseExpression("c not in ('a')")).toEqual({ op: 'not-in', term: 'c', values: ['a'] });
    expect(parseExpression('x between 1 and 5 and y = 2')).toEqual({
      op: 'and',
      left: {
        op: 'and',
        left: { op: 'gt-eq', term: 'x', value: num('1') },
        right: { op: 'lt-eq', term: 'x', value: num('5') },
      },
      right: { op: 'eq', term: 'y', value: num('2') },
    });
    expect(parseExpression('x not between 1 and 5').op).toBe('not');
  });

  it('reads true and false as whole expressions', () => {
    expect(parseExpression('true')).toEqual({ op: 'true' });
    expect(parseExpression('FALSE or a is null')).toEqual({
      op: 'or',
      left: { op: 'false' },
      right: { op: 'is-null', term: 'a' },
    });
  });

  it.each([
    ['order_ts >= ', "--where: expected a value after '>=' at column 13"],
    ['a = 1 and', "--where: expected a column name after 'and', found end of input at column 10"],
    ['a = 1)', "--where: unexpected ')' (no matching '(') at column 6"],
    ['(a = 1', "--where: expected ')' to close the '(' at column 1, found end of input at column 7"],
    ["name = 'abc", '--where: unterminated string (a closing quote is missing) starting at column 8'],
    ['a # 1', "--where: unexpected character '#' at column 3"],
    ['a is 3', "--where: expected 'null' or 'nan' after 'is', found '3' at column 6"],
    ['a in 1, 2', "--where: expected '(' after 'in', found '1' at column 6"],
    ['a in (1 2)', "--where: expected ',' or ')' in the list opened at column 6, found '2' at column 9"],
    ['a = null', "--where: a comparison with null is never true; use 'is null' instead at column 5"],
    ['a != null', "--where: a comparison with null is never true; use 'is not null' instead at column 6"],
    ['x = 12abc', "--where: malformed number '12a' at column 5"],
    ['', '--where: the filter is empty'],
    [
      'and = 1',
      '--where: expected a column name, found keyword \'and\' (quote it as "and" if it is a column) at column 1',
    ],
  ])('rejects %j with a positioned message', (text, message) => {
    const error = errorOf(text);
    expect(error.message).toBe(message);
  });

  it('uses the label given for the source of the text', () => {
    expect(() => parseExpression('a =', { label: 'filter' })).toThrow(
      "filter: expected a value after '=' at column 4",
    );
  });

  it('round-trips through formatExpression', () => {
    // Prepare: random expressions over a few columns and literal kinds
    const term = fc.constantFrom('a', 'b.c', 'and', 'my col', 'x');
    const literal = fc.oneof(
      fc.string({ maxLength: 6 }),
      fc.boolean(),
      fc.integer({ min: -1000, max: 1000 }).map((n) => num(String(n))),
      fc.constantFrom(num('1.25'), num('-0.5'), num('1e3')),
    );
    const cmp = fc.constantFrom('eq', 'not-eq', 'lt', 'lt-eq', 'gt', 'gt-eq');
    const expr: fc.Arbitrary<Expression> = fc.letrec<{ e: Expression }>((tie) => ({
      e: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.record({ op: cmp, term, value: literal }) as fc.Arbitrary<Expression>,
        fc.record({
          op: fc.constantFrom('in', 'not-in'),
          term,
          values: fc.array(literal, { minLength: 1, maxLength: 3 }),
        }) as fc.Arbitrary<Expression>,
        fc.record({
          op: fc.constantFrom('is-null', 'not-null', 'is-nan', 'not-nan'),
          term,
        }) as fc.Arbitrary<Expression>,
        fc.record({
          op: fc.constantFrom('and', 'or'),
          left: tie('e'),
          right: tie('e'),
        }) as fc.Arbitrary<Expression>,
        fc.record({ op: fc.constant('not'), child: tie('e') }) as fc.Arbitrary<Expression>,
      ),
    })).e;

    // Act + Assess
    fc.assert(
      fc.property(expr, (e) => {
        expect(parseExpression(formatExpression(e))).toEqual(e);
      }),
    );
  });
});
