import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import { bindExpression } from '../../../functions/core/scan/bind-expression.js';
import { formatExpression } from '../../../functions/core/scan/format-expression.js';
import { parseExpression } from '../../../functions/core/scan/parse-expression.js';
import type { Literal } from '../../../functions/core/scan/expression.js';
import { ORDERS_SCHEMA, bound } from './scan-fixtures.js';

/** The bound literal of a single comparison `column = literal`. */
function bindValue(column: string, literal: Literal) {
  const expr = bindExpression({ op: 'eq', term: column, value: literal }, ORDERS_SCHEMA);
  if (expr.op !== 'eq') throw new Error(`expected eq, got ${expr.op}`);
  return expr.value;
}

const num = (text: string) => ({ type: 'number', text }) as const;

describe('bindExpression', () => {
  it('resolves columns to field id, type and row path', () => {
    const expr = bound("customer.address.city = 'Berlin'");
    expect(expr).toEqual({
      op: 'eq',
      term: {
        fieldId: 15,
        name: 'customer.address.city',
        path: ['customer', 'address', 'city'],
        type: 'string',
        required: false,
      },
      value: 'Berlin',
    });
  });

  it('finds a column case-insensitively when the exact name is absent', () => {
    const expr = bound('COUNTRY is null');
    expect(expr.op === 'is-null' && expr.term.name).toBe('country');
  });

  it.each([
    ['qty', num('42'), 42],
    ['qty', num('-2147483648'), -2147483648],
    ['id', num('9223372036854775807'), 9223372036854775807n],
    ['id', num('1e3'), 1000n],
    ['id', num('7.000'), 7n],
    ['amount', num('10.5'), 1050n],
    ['amount', num('-0.01'), -1n],
    ['amount', num('10.500'), 1050n],
    ['amount', num('12345678.99'), 1234567899n],
    ['amount', 3, 300n],
    ['score', num('10.5'), 10.5],
    ['score', num('-1e-3'), -0.001],
    ['ratio', num('0.1'), Math.fround(0.1)],
    ['active', true, true],
    ['country', 'DE', 'DE'],
    ['ref', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'],
    ['day', '2024-02-29', 19782],
    ['day', '1969-12-31', -1],
    ['at', '13:45:01.5', 49_501_500_000n],
    ['order_ts', '2024-05-01T00:00:00Z', 1_714_521_600_000_000n],
    ['order_ts', '2024-05-01T02:00:00+02:00', 1_714_521_600_000_000n],
    ['order_ts', '2024-05-01T00:00:00', 1_714_521_600_000_000n],
    ['order_ts', '2024-05-01', 1_714_521_600_000_000n],
    ['order_ts', '2024-05-01 00:00:00.000001Z', 1_714_521_600_000_001n],
    ['order_ts', '1969-12-31T23:59:59.999999Z', -1n],
    ['order_ts', '2024-05-01T05:30:00+0530', 1_714_521_600_000_000n],
    ['local_ts', '2024-05-01T12:30:00', 1_714_566_600_000_000n],
    ['local_ts', '2024-05-01', 1_714_521_600_000_000n],
    ['order_ts', 1_714_521_600_000_000n, 1_714_521_600_000_000n],
  ] as [string, Literal, unknown][])(
    'converts %s = %s to its column representation',
    (column, literal, expected) => {
      expect(bindValue(column, literal)).toEqual(expected);
    },
  );

  it('applies a negative zone offset by adding it back to reach UTC', () => {
    // 05:30 at UTC-05:30 is 11:00 UTC.
    const value = bindValue('order_ts', '2024-05-01T05:30:00-05:30');
    expect(value).toBe(1_714_521_600_000_000n + 11n * 3_600_000_000n);
  });

  it.each([
    ['qty', num('2147483648'), /out of its range/],
    ['qty', num('1.5'), /not a whole number/],
    ['id', 'abc', /column 'id' is long; 'abc' is not a long/],
    ['amount', num('1.234'), /more than 2 decimal places/],
    ['amount', num('123456789.00'), /more than 10 digits/],
    ['country', num('3'), /column 'country' is string; 3 is not a string/],
    ['active', 'yes', /use true or false/],
    ['day', '2024-02-30', /not a valid date/],
    ['day', '2024-05-01T00:00:00', /not a date/],
    ['local_ts', '2024-05-01T00:00:00Z', /has a time zone, but the column is a timestamp without zone/],
    ['order_ts', '2024-13-01T00:00:00Z', /not a valid date/],
    ['order_ts', '2024-05-01T00:00:00.0000001Z', /more precise than Iceberg's microseconds/],
    ['order_ts', 'yesterday', /not an ISO-8601 timestamp/],
    ['order_ts', num('5'), /write it as an ISO-8601 string/],
    ['ref', 'not-a-uuid', /is not a uuid/],
    ['score', Number.NaN, /is nan/],
  ] as [string, Literal, RegExp][])('rejects %s = %s', (column, literal, message) => {
    expect(() => bindValue(column, literal)).toThrow(ValidationError);
    expect(() => bindValue(column, literal)).toThrow(message);
  });

  it('lists the available columns for an unknown one', () => {
    expect(() => bound('nope = 1')).toThrow(
      "unknown column 'nope'; available columns: id, qty, country, amount, order_ts, local_ts, day, score, ratio, active, ref, customer.name, customer.address.city, at",
    );
  });

  it('refuses nested columns and is-nan on non-float columns', () => {
    expect(() => bound("customer = 'x'")).toThrow(
      /column 'customer' is a struct, which cannot be filtered on/,
    );
    expect(() => bound("tags = 'x'")).toThrow(/column 'tags' is a list/);
    expect(() => bound('qty is nan')).toThrow(/'is nan' needs a float or double column; 'qty' is int/);
  });

  it('folds null checks on required columns and small in-lists', () => {
    expect(bound('id is null')).toEqual({ op: 'false' });
    expect(bound('id is not null')).toEqual({ op: 'true' });
    // customer.name is required, but its struct is optional: it can still be null.
    expect(bound('customer.name is null').op).toBe('is-null');
    expect(bound('qty in (3, 3.0)').op).toBe('eq');
    expect(bound('qty not in (3)').op).toBe('not-eq');
    expect(bindExpression({ op: 'in', term: 'qty', values: [] }, ORDERS_SCHEMA)).toEqual({ op: 'false' });
  });

  it('prints bound literals so that they bind back to the same values', () => {
    // Prepare
    const text =
      "order_ts >= '2024-05-01T00:00:00.000001Z' and amount in (-0.01, 10.50) and day < '1969-12-31' and local_ts = '2024-05-01T12:30:00' and at > '13:45:01.5'";
    const first = bound(text);

    // Act
    const again = bindExpression(parseExpression(formatExpression(first)), ORDERS_SCHEMA);

    // Assess
    expect(again).toEqual(first);
  });
});
