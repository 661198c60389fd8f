/**
 * The one bound evaluator both pruning evaluators use, and the one place they differ: what an absent
 * lower bound means. In a manifest's partition summary the spec leaves it out exactly when every value
 * is null or NaN, so a comparison cannot match; in a data file's metrics it may simply not have been
 * collected, so a comparison might. A NaN bound (wrongly written) is unknown in both.
 */
import { describe, expect, it } from 'vitest';
import { boundsMightMatch } from '../../../functions/core/scan/evaluate-bounds.js';
import { manifestMightMatch } from '../../../functions/core/scan/evaluate-manifest.js';
import { fileMightMatch } from '../../../functions/core/scan/evaluate-metrics.js';
import type { BoundPredicate } from '../../../functions/core/scan/expression.js';
import { projectPartition } from '../../../functions/core/scan/project-partition.js';
import { encodeValue } from '../../../functions/core/spec/conversions.js';
import type { FieldSummary, ManifestFile, PartitionSpec } from '../../../functions/core/spec/types.js';
import { bound, dataFile } from './scan-fixtures.js';

/** Partitioned by `score` (double, field 8) as it is. */
const SPEC: PartitionSpec = {
  'spec-id': 0,
  fields: [{ 'source-id': 8, 'field-id': 1000, name: 'score', transform: 'identity' }],
};

function manifestWith(summary: FieldSummary): ManifestFile {
  return {
    manifest_path: 's3://b/t/metadata/m.avro',
    manifest_length: 100n,
    partition_spec_id: 0,
    content: 0,
    sequence_number: 1n,
    min_sequence_number: 1n,
    added_snapshot_id: 1n,
    added_files_count: 1,
    existing_files_count: 0,
    deleted_files_count: 0,
    added_rows_count: 10n,
    existing_rows_count: 0n,
    deleted_rows_count: 0n,
    partitions: [summary],
  };
}

const manifestMight = (filter: string, m: ManifestFile) =>
  manifestMightMatch(projectPartition(bound(filter), SPEC), m, SPEC);
const fileMight = (filter: string, file: ReturnType<typeof dataFile>) => fileMightMatch(bound(filter), file);
const predicate = (filter: string) => bound(filter) as BoundPredicate;

describe('boundsMightMatch', () => {
  it('decides each comparison from known bounds [10, 20]', () => {
    // Prepare
    const cases: [string, boolean][] = [
      ['qty < 10', false],
      ['qty < 11', true],
      ['qty <= 9', false],
      ['qty <= 10', true],
      ['qty > 20', false],
      ['qty > 19', true],
      ['qty >= 21', false],
      ['qty >= 20', true],
      ['qty = 9', false],
      ['qty = 15', true],
      ['qty = 21', false],
      ['qty in (1, 30)', false],
      ['qty in (1, 12)', true],
    ];

    // Act
    const answers = cases.map(([filter]) => boundsMightMatch(predicate(filter), 10, 20));

    // Assess
    expect(answers).toEqual(cases.map(([, expected]) => expected));
  });

  it('leaves the side of an unknown (null) bound open', () => {
    // Act + Assess
    expect(boundsMightMatch(predicate('qty < 5'), null, 20)).toBe(true);
    expect(boundsMightMatch(predicate('qty > 25'), null, 20)).toBe(false);
    expect(boundsMightMatch(predicate('qty > 25'), 10, null)).toBe(true);
    expect(boundsMightMatch(predicate('qty < 5'), 10, null)).toBe(false);
    expect(boundsMightMatch(predicate('qty = 5'), null, null)).toBe(true);
  });

  it('says "might" for what bounds cannot decide', () => {
    // Act + Assess
    expect(boundsMightMatch(predicate('qty != 10'), 10, 10)).toBe(true);
    expect(boundsMightMatch(predicate('qty is null'), 10, 20)).toBe(true);
  });
});

describe('an absent lower bound at the two call sites', () => {
  it('manifest summary: no lower bound means every value is null or NaN, so no comparison matches', () => {
    // Prepare
    const allNull: FieldSummary = {
      contains_null: true,
      contains_nan: false,
      lower_bound: null,
      upper_bound: null,
    };

    // Act + Assess
    expect(manifestMight('score < 3', manifestWith(allNull))).toBe(false);
    expect(manifestMight('score = 3', manifestWith(allNull))).toBe(false);
    expect(manifestMight('score is null', manifestWith(allNull))).toBe(true);
  });

  it('data file: no lower bound is a bound not collected, so a comparison might match', () => {
    // Prepare: ten values, none null, bounds not recorded for qty
    const unrecorded = dataFile({ valueCounts: { 2: 10n }, nullCounts: { 2: 0n } });

    // Act + Assess
    expect(fileMight('qty < 3', unrecorded)).toBe(true);
    expect(fileMight('qty = 3', unrecorded)).toBe(true);
  });

  it('data file: every value null (from the counts) prunes every comparison, bounds or not', () => {
    // Prepare
    const allNull = dataFile({ valueCounts: { 2: 10n }, nullCounts: { 2: 10n } });

    // Act + Assess
    expect(fileMight('qty < 3', allNull)).toBe(false);
  });

  it('a NaN lower bound (a writer that broke the spec) is unknown at both, never "no values"', () => {
    // Prepare: values up to 5, the lower bound written as NaN
    const nanLower: FieldSummary = {
      contains_null: false,
      contains_nan: false,
      lower_bound: encodeValue('double', Number.NaN),
      upper_bound: encodeValue('double', 5),
    };
    const file = dataFile({
      valueCounts: { 8: 10n },
      nullCounts: { 8: 0n },
      nanCounts: { 8: 0n },
      lower: { 8: ['double', Number.NaN] },
      upper: { 8: ['double', 5] },
    });

    // Act + Assess
    expect(manifestMight('score < 3', manifestWith(nanLower))).toBe(true);
    expect(manifestMight('score > 6', manifestWith(nanLower))).toBe(false);
    expect(manifestMight('score is not null', manifestWith(nanLower))).toBe(true);
    expect(fileMight('score < 3', file)).toBe(true);
    expect(fileMight('score > 6', file)).toBe(false);
  });
});
