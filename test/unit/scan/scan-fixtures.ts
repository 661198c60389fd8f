/** Schemas and helpers shared by the scan tests. */
import { encodeValue } from '../../../functions/core/spec/conversions.js';
import type { BoundExpression } from '../../../functions/core/scan/expression.js';
import { bindExpression } from '../../../functions/core/scan/bind-expression.js';
import { parseExpression } from '../../../functions/core/scan/parse-expression.js';
import type { DataFile, IcebergType, Schema, Value } from '../../../functions/core/spec/types.js';

/** A table schema with one column of most primitive types and a nested struct. */
export const ORDERS_SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'qty', required: false, type: 'int' },
    { id: 3, name: 'country', required: false, type: 'string' },
    { id: 4, name: 'amount', required: false, type: 'decimal(10, 2)' },
    { id: 5, name: 'order_ts', required: false, type: 'timestamptz' },
    { id: 6, name: 'local_ts', required: false, type: 'timestamp' },
    { id: 7, name: 'day', required: false, type: 'date' },
    { id: 8, name: 'score', required: false, type: 'double' },
    { id: 9, name: 'ratio', required: false, type: 'float' },
    { id: 10, name: 'active', required: false, type: 'boolean' },
    { id: 11, name: 'ref', required: false, type: 'uuid' },
    {
      id: 12,
      name: 'customer',
      required: false,
      type: {
        type: 'struct',
        fields: [
          { id: 13, name: 'name', required: true, type: 'string' },
          {
            id: 14,
            name: 'address',
            required: false,
            type: { type: 'struct', fields: [{ id: 15, name: 'city', required: false, type: 'string' }] },
          },
        ],
      },
    },
    {
      id: 16,
      name: 'tags',
      required: false,
      type: { type: 'list', 'element-id': 17, element: 'string', 'element-required': false },
    },
    { id: 18, name: 'at', required: false, type: 'time' },
  ],
};

/** Parses and binds a filter against ORDERS_SCHEMA (or another schema). */
export function bound(text: string, schema: Schema = ORDERS_SCHEMA): BoundExpression {
  return bindExpression(parseExpression(text), schema);
}

/** A data file with the given metrics, bounds given as values of the column types. */
export function dataFile(options: {
  path?: string;
  records?: bigint;
  valueCounts?: Record<number, bigint>;
  nullCounts?: Record<number, bigint>;
  nanCounts?: Record<number, bigint>;
  lower?: Record<number, [IcebergType, Value]>;
  upper?: Record<number, [IcebergType, Value]>;
  partition?: Record<string, Value>;
}): DataFile {
  const counts = (o?: Record<number, bigint>) =>
    o === undefined ? undefined : new Map(Object.entries(o).map(([k, v]) => [Number(k), v]));
  const bounds = (o?: Record<number, [IcebergType, Value]>) =>
    o === undefined
      ? undefined
      : new Map(Object.entries(o).map(([k, [type, v]]) => [Number(k), encodeValue(type, v)]));
  return {
    content: 0,
    file_path: options.path ?? 's3://bucket/t/data/f.parquet',
    file_format: 'PARQUET',
    spec_id: 0,
    partition: options.partition ?? {},
    record_count: options.records ?? 10n,
    file_size_in_bytes: 1000n,
    value_counts: counts(options.valueCounts),
    null_value_counts: counts(options.nullCounts),
    nan_value_counts: counts(options.nanCounts),
    lower_bounds: bounds(options.lower),
    upper_bounds: bounds(options.upper),
  };
}
