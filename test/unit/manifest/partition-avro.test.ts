import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import { createAvroType } from '../../../functions/core/manifest/avro-type.js';
import {
  decimalRequiredBytes,
  describePartitionFields,
  fromAvroPartition,
  partitionAvroSchema,
  sanitizeAvroName,
  toAvroPartition,
} from '../../../functions/core/manifest/partition-avro.js';
import { summarizePartitions } from '../../../functions/core/manifest/partition-summary.js';
import { decodeValue } from '../../../functions/core/spec/conversions.js';
import { partitionType } from '../../../functions/core/spec/partition-type.js';
import type { PartitionValues } from '../../../functions/core/spec/types.js';
import { allTypesPartition, allTypesSchema, allTypesSpec } from './manifest-fixtures.js';

describe('partition values through Avro', () => {
  const fields = describePartitionFields(partitionType(allTypesSpec, allTypesSchema));
  const type = createAvroType(partitionAvroSchema(fields));

  it('round-trips every partition type through avsc bytes', () => {
    for (const i of [0, 1, 7, 255]) {
      // Prepare
      const values = allTypesPartition(i);
      // Act
      const bytes = type.toBuffer(toAvroPartition(fields, values));
      const back = fromAvroPartition(fields, type.fromBuffer(bytes) as Record<string, unknown>);
      // Assess
      expect(back).toEqual(values);
    }
  });

  it('round-trips an all-null tuple', () => {
    const nulls: PartitionValues = Object.fromEntries(allTypesSpec.fields.map((f) => [f.name, null]));
    const back = fromAvroPartition(fields, type.fromBuffer(type.toBuffer(toAvroPartition(fields, nulls))));
    expect(back).toEqual(nulls);
  });

  it('stores decimals as sign-extended big-endian fixed of the minimal size for the precision', () => {
    const amount = fields.find((f) => f.name === 'amount');
    const record = toAvroPartition(amount ? [amount] : [], { amount: -2n }) as { amount: Buffer };
    expect([...record.amount]).toEqual([0xff, 0xff, 0xff, 0xff, 0xfe]);
    expect(fromAvroPartition(amount ? [amount] : [], record)).toEqual({ amount: -2n });
  });

  it('accepts safe-integer numbers for long partition values and returns bigints', () => {
    const id = fields.find((f) => f.name === 'id');
    const record = toAvroPartition(id ? [id] : [], { id: 42 });
    expect(fromAvroPartition(id ? [id] : [], record)).toEqual({ id: 42n });
  });

  it('rejects an int partition value outside int32', () => {
    const bucket = fields.find((f) => f.name === 'id_bucket');
    expect(() => toAvroPartition(bucket ? [bucket] : [], { id_bucket: 2 ** 31 })).toThrow(ValidationError);
  });
});

describe('decimalRequiredBytes', () => {
  it('matches Iceberg Java TypeUtil for the boundary precisions', () => {
    // The largest precision each length holds is floor(log10(2^(8L-1) - 1)).
    const expected: [number, number][] = [
      [1, 1],
      [2, 1],
      [3, 2],
      [4, 2],
      [5, 3],
      [9, 4],
      [10, 5],
      [18, 8],
      [19, 9],
      [38, 16],
    ];
    for (const [precision, bytes] of expected)
      expect([precision, decimalRequiredBytes(precision)]).toEqual([precision, bytes]);
  });
});

describe('sanitizeAvroName', () => {
  it('keeps valid names and escapes the rest as Iceberg Java does', () => {
    expect(sanitizeAvroName('ts_day')).toBe('ts_day');
    expect(sanitizeAvroName('ts-hour')).toBe('ts_x2Dhour');
    expect(sanitizeAvroName('1st')).toBe('_1st');
    expect(sanitizeAvroName('a.b c')).toBe('a_x2Eb_x20c');
  });
});

describe('summarizePartitions', () => {
  const fields = describePartitionFields(partitionType(allTypesSpec, allTypesSchema));
  const score = fields.filter((f) => f.name === 'score');

  it('keeps -0.0 as the lower bound and +0.0 as the upper bound when both occur', () => {
    const [summary] = summarizePartitions(score, [{ score: 0 }, { score: -0 }, { score: 0 }]);
    expect(Object.is(decodeValue('double', summary.lower_bound as Uint8Array), -0)).toBe(true);
    expect(Object.is(decodeValue('double', summary.upper_bound as Uint8Array), 0)).toBe(true);
  });

  it('gives no bounds when every value is null or NaN', () => {
    const [summary] = summarizePartitions(score, [{ score: null }, { score: Number.NaN }]);
    expect(summary).toEqual({
      contains_null: true,
      contains_nan: true,
      lower_bound: null,
      upper_bound: null,
    });
  });

  it('orders strings by code point, not UTF-16 unit', () => {
    const name = fields.filter((f) => f.name === 'name_trunc');
    const [summary] = summarizePartitions(name, [{ name_trunc: '\u{1F600}' }, { name_trunc: '\uFFFF' }]);
    expect(decodeValue('string', summary.lower_bound as Uint8Array)).toBe('\uFFFF');
    expect(decodeValue('string', summary.upper_bound as Uint8Array)).toBe('\u{1F600}');
  });
});
