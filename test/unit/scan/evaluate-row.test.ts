import { describe, expect, it } from 'vitest';
import { evaluateRow } from '../../../functions/core/scan/evaluate-row.js';
import { rewriteNot } from '../../../functions/core/scan/expression-helpers.js';
import type { Row } from '../../../functions/core/spec/types.js';
import { bound } from './scan-fixtures.js';

const row = (values: Row): Row => ({
  id: 1n,
  qty: null,
  country: null,
  amount: null,
  order_ts: null,
  score: null,
  customer: null,
  ...values,
});

describe('evaluateRow', () => {
  it('compares values in their column representation', () => {
    const r = row({ qty: 5, amount: 1050n, order_ts: 1_714_521_600_000_000n, country: 'DE' });
    expect(evaluateRow(bound('qty > 4 and qty <= 5'), r)).toBe(true);
    expect(evaluateRow(bound('amount = 10.5'), r)).toBe(true);
    expect(evaluateRow(bound('amount < 10.49'), r)).toBe(false);
    expect(evaluateRow(bound("order_ts >= '2024-05-01T00:00:00Z'"), r)).toBe(true);
    expect(evaluateRow(bound("order_ts > '2024-05-01T00:00:00Z'"), r)).toBe(false);
    expect(evaluateRow(bound("country in ('FR', 'DE')"), r)).toBe(true);
    expect(evaluateRow(bound("country not in ('FR', 'DE')"), r)).toBe(false);
  });

  it('treats comparisons with null as unknown: neither x = v nor x != v holds', () => {
    const r = row({ qty: null });
    expect(evaluateRow(bound('qty = 3'), r)).toBe(false);
    expect(evaluateRow(bound('qty != 3'), r)).toBe(false);
    expect(evaluateRow(bound('qty not in (3, 4)'), r)).toBe(false);
    expect(evaluateRow(bound('not (qty < 3)'), r)).toBe(false);
    expect(evaluateRow(bound('qty is null'), r)).toBe(true);
  });

  it('uses three-valued AND/OR: unknown or true is true, unknown and false is false', () => {
    const r = row({ qty: null, country: 'DE' });
    expect(evaluateRow(bound("qty = 3 or country = 'DE'"), r)).toBe(true);
    expect(evaluateRow(bound("not (qty = 3 and country = 'FR')"), r)).toBe(true);
    expect(evaluateRow(bound("not (qty = 3 and country = 'DE')"), r)).toBe(false);
  });

  it('agrees with its not-free rewrite on every row', () => {
    // Prepare
    const filters = [
      "not (qty < 3 or country = 'DE')",
      "not (not (qty >= 3) and country not in ('FR'))",
      'not (score is nan or qty is null)',
      "not (customer.name = 'Ann')",
    ];
    const rows = [
      row({ qty: 2, country: 'DE' }),
      row({ qty: 5, country: 'FR', score: Number.NaN }),
      row({ qty: null, country: 'NL', score: 1.5 }),
      row({ qty: 3, country: null, customer: { name: 'Ann', address: null } }),
      row({ qty: 9, country: 'IT', customer: { name: 'Bob', address: null } }),
    ];

    for (const text of filters) {
      const expr = bound(text);
      const rewritten = rewriteNot(expr);
      // Act + Assess
      expect(JSON.stringify(rewritten, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(
        '"not"',
      );
      for (const r of rows) expect(evaluateRow(rewritten, r)).toBe(evaluateRow(expr, r));
    }
  });

  it('matches NaN only with is nan, != and not in', () => {
    const r = row({ score: Number.NaN });
    expect(evaluateRow(bound('score is nan'), r)).toBe(true);
    expect(evaluateRow(bound('score is not nan'), r)).toBe(false);
    expect(evaluateRow(bound('score != 1'), r)).toBe(true);
    expect(evaluateRow(bound('score not in (1, 2)'), r)).toBe(true);
    expect(evaluateRow(bound('score = 1 or score < 1 or score > 1 or score in (1, 2)'), r)).toBe(false);
    expect(evaluateRow(bound('score is not nan'), row({ score: null }))).toBe(true);
  });

  it('reads nested columns and treats a null parent struct as a null column', () => {
    const withCity = row({ customer: { name: 'Ann', address: { city: 'Berlin' } } });
    const noAddress = row({ customer: { name: 'Bob', address: null } });
    expect(evaluateRow(bound("customer.address.city = 'Berlin'"), withCity)).toBe(true);
    expect(evaluateRow(bound('customer.address.city is null'), noAddress)).toBe(true);
    expect(evaluateRow(bound('customer.name is null'), row({ customer: null }))).toBe(true);
  });
});
