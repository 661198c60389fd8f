import { describe, expect, it } from 'vitest';
import { manifestMightMatch } from '../../../functions/core/scan/evaluate-manifest.js';
import { projectPartition } from '../../../functions/core/scan/project-partition.js';
import { encodeValue } from '../../../functions/core/spec/conversions.js';
import type {
  FieldSummary,
  ManifestFile,
  PartitionSpec,
  PrimitiveType,
  Value,
} from '../../../functions/core/spec/types.js';
import { bound } from './scan-fixtures.js';

const SPEC: PartitionSpec = {
  'spec-id': 3,
  fields: [
    { 'source-id': 3, 'field-id': 1000, name: 'country', transform: 'identity' },
    { 'source-id': 5, 'field-id': 1001, name: 'ts_day', transform: 'day' },
    { 'source-id': 8, 'field-id': 1002, name: 'score', transform: 'identity' },
    { 'source-id': 1, 'field-id': 1003, name: 'id_bucket', transform: 'bucket[16]' },
  ],
};

function summary(
  type: PrimitiveType,
  lower: Value,
  upper: Value,
  containsNull = false,
  containsNan: boolean | null = false,
): FieldSummary {
  return {
    contains_null: containsNull,
    contains_nan: containsNan,
    lower_bound: lower === null ? null : encodeValue(type, lower),
    upper_bound: upper === null ? null : encodeValue(type, upper),
  };
}

function manifest(partitions: FieldSummary[] | null): ManifestFile {
  return {
    manifest_path: 's3://b/t/metadata/m.avro',
    manifest_length: 100n,
    partition_spec_id: 3,
    content: 0,
    sequence_number: 1n,
    min_sequence_number: 1n,
    added_snapshot_id: 1n,
    added_files_count: 1,
    existing_files_count: 0,
    deleted_files_count: 0,
    added_rows_count: 1n,
    existing_rows_count: 0n,
    deleted_rows_count: 0n,
    partitions,
  };
}

const DAY = 19844; // 2024-05-01

/** Summaries with countries DE..FR, days [DAY, DAY + 2], scores [1, 5], buckets [2, 9]. */
function typical(overrides: Partial<Record<number, FieldSummary>> = {}): ManifestFile {
  return manifest([
    overrides[0] ?? summary('string', 'DE', 'FR'),
    overrides[1] ?? summary('date', DAY, DAY + 2),
    overrides[2] ?? summary('double', 1, 5),
    overrides[3] ?? summary('int', 2, 9),
  ]);
}

function mightMatch(filter: string, m: ManifestFile): boolean {
  return manifestMightMatch(projectPartition(bound(filter), SPEC), m, SPEC);
}

describe('manifestMightMatch', () => {
  it('prunes by identity bounds for every comparison', () => {
    const m = typical();
    expect(mightMatch("country = 'DE'", m)).toBe(true);
    expect(mightMatch("country = 'AT'", m)).toBe(false);
    expect(mightMatch("country = 'GB'", m)).toBe(false);
    expect(mightMatch("country < 'DE'", m)).toBe(false);
    expect(mightMatch("country <= 'DE'", m)).toBe(true);
    expect(mightMatch("country > 'FR'", m)).toBe(false);
    expect(mightMatch("country >= 'FR'", m)).toBe(true);
    expect(mightMatch("country in ('AT', 'GB')", m)).toBe(false);
    expect(mightMatch("country in ('AT', 'ES')", m)).toBe(true);
    expect(mightMatch("country != 'DE'", m)).toBe(true);
    expect(mightMatch("country not in ('DE', 'FR')", m)).toBe(true);
  });

  it('prunes by projected time bounds', () => {
    const m = typical();
    expect(mightMatch("order_ts >= '2024-05-04T00:00:00Z'", m)).toBe(false);
    expect(mightMatch("order_ts >= '2024-05-03T23:59:59Z'", m)).toBe(true);
    expect(mightMatch("order_ts < '2024-05-01T00:00:00Z'", m)).toBe(false);
    expect(mightMatch("order_ts < '2024-05-01T00:00:00.000001Z'", m)).toBe(true);
  });

  it('prunes by bucket for eq (bucket[16] of 34 is 3)', () => {
    expect(mightMatch('id = 34', typical())).toBe(true);
    expect(mightMatch('id = 34', typical({ 3: summary('int', 4, 9) }))).toBe(false);
    expect(mightMatch('id > 34', typical({ 3: summary('int', 4, 9) }))).toBe(true);
  });

  it('uses contains_null for is null / is not null', () => {
    expect(mightMatch('country is null', typical())).toBe(false);
    expect(mightMatch('country is null', typical({ 0: summary('string', 'DE', 'FR', true) }))).toBe(true);
    const allNull = typical({ 0: summary('string', null, null, true) });
    expect(mightMatch('country is not null', allNull)).toBe(false);
    expect(mightMatch("country = 'DE'", allNull)).toBe(false);
    expect(mightMatch("country != 'DE'", allNull)).toBe(true);
    expect(mightMatch('country is not null', typical())).toBe(true);
  });

  it('uses contains_nan for floating partition values', () => {
    expect(mightMatch('score is nan', typical())).toBe(false);
    expect(mightMatch('score is nan', typical({ 2: summary('double', 1, 5, false, true) }))).toBe(true);
    expect(mightMatch('score is nan', typical({ 2: summary('double', 1, 5, false, null) }))).toBe(true);
    const allNan = typical({ 2: summary('double', null, null, false, true) });
    expect(mightMatch('score is not nan', allNan)).toBe(false);
    expect(mightMatch('score = 1', allNan)).toBe(false);
    // null or NaN, no bounds: not-null may still match a NaN, not-nan a null.
    const nullAndNan = typical({ 2: summary('double', null, null, true, true) });
    expect(mightMatch('score is not null', nullAndNan)).toBe(true);
    expect(mightMatch('score is not nan', nullAndNan)).toBe(true);
    // contains_nan unknown: an all-null-looking summary may hide NaNs.
    expect(mightMatch('score is not null', typical({ 2: summary('double', null, null, true, null) }))).toBe(
      true,
    );
  });

  it('combines with and/or and pushes not down', () => {
    const m = typical();
    expect(mightMatch("country = 'AT' or country = 'DE'", m)).toBe(true);
    expect(mightMatch("country = 'DE' and country = 'AT'", m)).toBe(false);
    expect(mightMatch("not (country >= 'DE')", m)).toBe(false);
  });

  it('says "might" when summaries are missing or do not fit the spec', () => {
    expect(mightMatch("country = 'AT'", manifest(null))).toBe(true);
    expect(mightMatch("country = 'AT'", manifest([summary('string', 'DE', 'FR')]))).toBe(true);
  });
});
