import { describe, expect, it } from 'vitest';
import { fileMightMatch } from '../../../functions/core/scan/evaluate-metrics.js';
import { truncateStringLower, truncateStringUpper } from '../../../functions/core/spec/conversions.js';
import { bound, dataFile } from './scan-fixtures.js';

/** qty in [10, 20] with 2 nulls of 10; country bounds DE..FR; score [1.5, 9.5] with 1 NaN. */
const TYPICAL = dataFile({
  valueCounts: { 2: 10n, 3: 10n, 8: 10n },
  nullCounts: { 2: 2n, 3: 0n, 8: 0n },
  nanCounts: { 8: 1n },
  lower: { 2: ['int', 10], 3: ['string', 'DE'], 8: ['double', 1.5] },
  upper: { 2: ['int', 20], 3: ['string', 'FR'], 8: ['double', 9.5] },
});

const might = (filter: string, file = TYPICAL) => fileMightMatch(bound(filter), file);

describe('fileMightMatch', () => {
  it('prunes ranges by lower and upper bounds', () => {
    expect(might('qty < 10')).toBe(false);
    expect(might('qty < 11')).toBe(true);
    expect(might('qty <= 9')).toBe(false);
    expect(might('qty <= 10')).toBe(true);
    expect(might('qty > 20')).toBe(false);
    expect(might('qty > 19')).toBe(true);
    expect(might('qty >= 21')).toBe(false);
    expect(might('qty >= 20')).toBe(true);
    expect(might('qty = 9')).toBe(false);
    expect(might('qty = 15')).toBe(true);
    expect(might('qty = 21')).toBe(false);
    expect(might('qty in (1, 2, 30)')).toBe(false);
    expect(might('qty in (1, 12)')).toBe(true);
  });

  it('never prunes not-eq / not-in by ranges', () => {
    expect(might('qty != 15')).toBe(true);
    expect(might('qty != 10')).toBe(true);
    expect(might('qty not in (10, 20)')).toBe(true);
  });

  it('prunes not-eq when every value is the excluded one (lower = upper = v) or null', () => {
    const single = dataFile({
      valueCounts: { 2: 5n },
      nullCounts: { 2: 3n },
      lower: { 2: ['int', 7] },
      upper: { 2: ['int', 7] },
    });
    expect(might('qty != 7', single)).toBe(false);
    expect(might('qty not in (6, 7)', single)).toBe(false);
    expect(might('qty != 8', single)).toBe(true);
    expect(might('not (qty = 7)', single)).toBe(false);
  });

  it('keeps a single-value float file for != when it may hold NaN', () => {
    const withNaN = dataFile({
      valueCounts: { 8: 5n },
      nullCounts: { 8: 0n },
      nanCounts: { 8: 2n },
      lower: { 8: ['double', 1] },
      upper: { 8: ['double', 1] },
    });
    const noNanCount = dataFile({ lower: { 8: ['double', 1] }, upper: { 8: ['double', 1] } });
    const noNaN = dataFile({
      nanCounts: { 8: 0n },
      lower: { 8: ['double', 1] },
      upper: { 8: ['double', 1] },
    });
    expect(might('score != 1', withNaN)).toBe(true);
    expect(might('score != 1', noNanCount)).toBe(true);
    expect(might('score != 1', noNaN)).toBe(false);
  });

  it('keeps a file holding NaN for a negated order comparison (NaN < v is false, so not (NaN < v) holds)', () => {
    const nanAndLarge = dataFile({
      valueCounts: { 8: 5n },
      nullCounts: { 8: 0n },
      nanCounts: { 8: 1n },
      lower: { 8: ['double', 5] },
      upper: { 8: ['double', 9] },
    });
    const noNaN = dataFile({
      valueCounts: { 8: 5n },
      nullCounts: { 8: 0n },
      nanCounts: { 8: 0n },
      lower: { 8: ['double', 5] },
      upper: { 8: ['double', 9] },
    });
    expect(might('not (score > 2)', nanAndLarge)).toBe(true);
    expect(might('not (score >= 2)', nanAndLarge)).toBe(true);
    expect(might('not (score > 2)', noNaN)).toBe(false);
    expect(might('not (qty > 15)')).toBe(true);
    expect(might('not (qty >= 10)')).toBe(false);
  });

  it('prunes every comparison on an all-null column, and is null when there are no nulls', () => {
    const allNull = dataFile({ valueCounts: { 2: 10n }, nullCounts: { 2: 10n } });
    for (const filter of [
      'qty = 1',
      'qty != 1',
      'qty < 1',
      'qty > 1',
      'qty in (1, 2)',
      'qty not in (1, 2)',
      'qty is not null',
    ]) {
      expect(might(filter, allNull)).toBe(false);
    }
    expect(might('qty is null', allNull)).toBe(true);
    expect(might('country is null')).toBe(false);
    expect(might('qty is null')).toBe(true);
  });

  it('uses NaN counts for is nan / is not nan and all-NaN columns', () => {
    expect(might('score is nan')).toBe(true);
    expect(might('score is nan', dataFile({ nanCounts: { 8: 0n } }))).toBe(false);
    const allNaN = dataFile({ valueCounts: { 8: 4n }, nullCounts: { 8: 0n }, nanCounts: { 8: 4n } });
    expect(might('score is not nan', allNaN)).toBe(false);
    expect(might('score < 100', allNaN)).toBe(false);
    expect(might('score = 1', allNaN)).toBe(false);
    expect(might('score != 1', allNaN)).toBe(true);
    expect(might('score is nan', dataFile({ valueCounts: { 8: 4n }, nullCounts: { 8: 4n } }))).toBe(false);
  });

  it('ignores NaN bounds written by older writers', () => {
    const nanBounds = dataFile({
      lower: { 8: ['double', Number.NaN] },
      upper: { 8: ['double', Number.NaN] },
    });
    expect(might('score > 5', nanBounds)).toBe(true);
    expect(might('score < 5', nanBounds)).toBe(true);
    expect(might('score = 5', nanBounds)).toBe(true);
  });

  it('treats truncated string bounds as inclusive ranges', () => {
    // Prepare: values 'alphabet-soup' .. 'alphabet-zebra', bounds truncated to 5 code points.
    const lower = truncateStringLower('alphabet-soup', 5); // 'alpha'
    const upper = truncateStringUpper('alphabet-zebra', 5)!; // 'alphb'
    const file = dataFile({ lower: { 3: ['string', lower] }, upper: { 3: ['string', upper] } });

    // Act + Assess
    expect(might("country = 'alphabet-soup'", file)).toBe(true);
    expect(might("country = 'alphabet'", file)).toBe(true);
    expect(might("country = 'alph'", file)).toBe(false);
    expect(might("country = 'alphc'", file)).toBe(false);
    expect(might("country < 'alpha'", file)).toBe(false);
    expect(might("country <= 'alpha'", file)).toBe(true);
    expect(might("country > 'alphb'", file)).toBe(false);
    expect(might("country >= 'alphb'", file)).toBe(true);
    // Truncation makes the bounds differ, so != can never prune here.
    expect(might("country != 'alphabet-soup'", file)).toBe(true);
  });

  it('says "might" when metrics are missing, and prunes an empty file', () => {
    const bare = dataFile({});
    for (const filter of ['qty = 1', 'qty is null', 'qty is not null', 'score is nan', "country < 'A'"]) {
      expect(might(filter, bare)).toBe(true);
    }
    expect(might('true', dataFile({ records: 0n }))).toBe(false);
  });

  it('combines predicates with and/or', () => {
    expect(might("qty = 15 and country = 'AT'")).toBe(false);
    expect(might("qty = 15 or country = 'AT'")).toBe(true);
    expect(might("not (qty > 5 and country >= 'A')")).toBe(false);
  });

  it('compares timestamps and decimals in their bound encodings', () => {
    const file = dataFile({
      lower: { 5: ['timestamptz', 1_714_521_600_000_000n], 4: ['decimal(10, 2)', 1050n] },
      upper: { 5: ['timestamptz', 1_714_607_999_999_999n], 4: ['decimal(10, 2)', 99_999n] },
    });
    expect(might("order_ts >= '2024-05-02T00:00:00Z'", file)).toBe(false);
    expect(might("order_ts > '2024-05-01T23:59:59.999998Z'", file)).toBe(true);
    expect(might('amount < 10.50', file)).toBe(false);
    expect(might('amount <= 10.50', file)).toBe(true);
    expect(might('amount > 999.99', file)).toBe(false);
  });
});
