import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import {
  formatPartitionSpec,
  formatSortOrder,
  parsePartitionExpression,
  parseSortOrder,
} from '../../../functions/core/spec/partition-spec.js';
import type { Schema } from '../../../functions/core/spec/types.js';

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'order_ts', required: true, type: 'timestamptz' },
    { id: 2, name: 'customer_id', required: true, type: 'long' },
    { id: 3, name: 'name', required: false, type: 'string' },
    { id: 4, name: 'country', required: false, type: 'string' },
    { id: 5, name: 'ts', required: false, type: 'timestamp' },
    { id: 6, name: 'x', required: false, type: 'int' },
    {
      id: 7,
      name: 'address',
      required: false,
      type: {
        type: 'struct',
        fields: [
          { id: 8, name: 'city', required: false, type: 'string' },
          { id: 9, name: 'odd.name', required: false, type: 'string' },
        ],
      },
    },
    {
      id: 10,
      name: 'tags',
      required: false,
      type: { type: 'list', 'element-id': 11, element: 'string', 'element-required': false },
    },
    { id: 12, name: 'd', required: false, type: 'date' },
  ],
};

describe('parsePartitionExpression', () => {
  it('reads every transform with Iceberg Java names and ids from 1000', () => {
    // Act
    const spec = parsePartitionExpression(
      'day(order_ts), bucket(16, customer_id), truncate(4, name), identity(country), year(ts), void(x), month(d)',
      schema,
    );

    // Assess
    expect(spec).toEqual({
      'spec-id': 0,
      fields: [
        { 'source-id': 1, 'field-id': 1000, name: 'order_ts_day', transform: 'day' },
        { 'source-id': 2, 'field-id': 1001, name: 'customer_id_bucket', transform: 'bucket[16]' },
        { 'source-id': 3, 'field-id': 1002, name: 'name_trunc', transform: 'truncate[4]' },
        { 'source-id': 4, 'field-id': 1003, name: 'country', transform: 'identity' },
        { 'source-id': 5, 'field-id': 1004, name: 'ts_year', transform: 'year' },
        { 'source-id': 6, 'field-id': 1005, name: 'x_null', transform: 'void' },
        { 'source-id': 12, 'field-id': 1006, name: 'd_month', transform: 'month' },
      ],
    });
  });

  it('takes bare columns as identity, nested columns by dotted name, Spark plurals, aliases and ids', () => {
    // Act
    const spec = parsePartitionExpression(
      'country, address.city, hours(ts), bucket(customer_id, 8) as cust, address.`odd.name`',
      schema,
      3,
      1010,
    );

    // Assess
    expect(spec['spec-id']).toBe(3);
    expect(spec.fields.map((f) => [f.name, f.transform, f['source-id'], f['field-id']])).toEqual([
      ['country', 'identity', 4, 1010],
      ['address.city', 'identity', 8, 1011],
      ['ts_hour', 'hour', 5, 1012],
      ['cust', 'bucket[8]', 2, 1013],
      ['address.odd.name', 'identity', 9, 1014],
    ]);
  });

  it('gives the unpartitioned spec for empty text', () => {
    expect(parsePartitionExpression('  ', schema)).toEqual({ 'spec-id': 0, fields: [] });
  });

  it.each([
    ['day(order_tss)', /unknown column 'order_tss'/],
    ['day(name)', /day cannot be applied to 'name', a string column/],
    ['hour(d)', /hour cannot be applied to 'd', a date column/],
    [
      'identity(address)',
      /identity cannot be applied to 'address', a struct<city: string, odd.name: string> column/,
    ],
    ['tags.element', /unknown column 'tags.element'/],
    ['country, identity(country)', /partition name 'country' is used more than once/],
    ['day(order_ts), hour(order_ts)', /'hour\(order_ts\)' is redundant with 'day\(order_ts\)'/],
    ['bucket(16, customer_id), bucket(16, customer_id) as c2', /redundant/],
    ['day(ts) as name', /'name' is already a column of the schema/],
    ['bucket(16, customer_id) as country', /already a column/],
    ['bucket(customer_id)', /needs a width and one column, e.g. bucket\(16, id\)/],
    ['day(1, ts)', /needs exactly one column/],
    ['bucket(0, customer_id)', /bucket width must be a positive int/],
    ['days(ts', /expected '\)' but found the end/],
    ['day(ts),', /expected a column name but found the end/],
    ['day(ts) day(d)', /expected ',' but found 'day' at position 9/],
    ['sqrt(x)', /unknown transform 'sqrt'/],
    ['ts desc', /sort directions belong in a sort order/],
    ['day(ts) + 1', /unexpected '\+' at position 9/],
  ])('rejects %j', (text, message) => {
    // Act / Assess
    expect(() => parsePartitionExpression(text, schema)).toThrow(ValidationError);
    expect(() => parsePartitionExpression(text, schema)).toThrow(message);
  });

  it('allows bucket widths that differ on one column, and two names for them', () => {
    const spec = parsePartitionExpression('bucket(16, customer_id), bucket(4, customer_id) as cb4', schema);
    expect(spec.fields.map((f) => f.name)).toEqual(['customer_id_bucket', 'cb4']);
  });
});

describe('formatPartitionSpec', () => {
  it('writes an expression that reads back to the same spec', () => {
    // Prepare
    const text =
      'day(order_ts), bucket(16, customer_id) as cust, truncate(4, name), country, address.`odd.name`, void(x)';
    const spec = parsePartitionExpression(text, schema);

    // Act
    const formatted = formatPartitionSpec(spec, schema);

    // Assess
    expect(formatted).toBe(
      'day(order_ts), bucket(16, customer_id) as cust, truncate(4, name), country, address.`odd.name`, void(x)',
    );
    expect(parsePartitionExpression(formatted, schema)).toEqual(spec);
  });

  it('refuses a source id the schema lacks', () => {
    const spec = {
      'spec-id': 0,
      fields: [{ 'source-id': 99, 'field-id': 1000, name: 'a', transform: 'identity' as const }],
    };
    expect(() => formatPartitionSpec(spec, schema)).toThrow(/source-id 99/);
  });
});

describe('parseSortOrder', () => {
  it('defaults to asc nulls-first, and desc to nulls-last, as Iceberg does', () => {
    // Act
    const order = parseSortOrder(
      'order_ts desc, customer_id, name asc nulls last, bucket(16, x) DESC NULLS FIRST',
      schema,
    );

    // Assess
    expect(order).toEqual({
      'order-id': 1,
      fields: [
        { transform: 'identity', 'source-id': 1, direction: 'desc', 'null-order': 'nulls-last' },
        { transform: 'identity', 'source-id': 2, direction: 'asc', 'null-order': 'nulls-first' },
        { transform: 'identity', 'source-id': 3, direction: 'asc', 'null-order': 'nulls-last' },
        { transform: 'bucket[16]', 'source-id': 6, direction: 'desc', 'null-order': 'nulls-first' },
      ],
    });
    expect(parseSortOrder(formatSortOrder(order, schema), schema)).toEqual(order);
  });

  it('gives the unsorted order (id 0) for empty text', () => {
    expect(parseSortOrder('', schema, 5)).toEqual({ 'order-id': 0, fields: [] });
  });

  it.each([
    ['nope', /unknown column 'nope'/],
    ['name nulls middle', /expected 'first' or 'last' after 'nulls'/],
    ['day(name)', /cannot be applied/],
    ['name as n', /sort fields take no name/],
  ])('rejects %j', (text, message) => {
    expect(() => parseSortOrder(text, schema)).toThrow(message);
  });
});
