/**
 * The aggregate's columns resolved against the route's record schema (the mapped rows' columns), and
 * the result table's schema: the group columns and `window_start` (its identifier fields, so the
 * table is an upsert table any Iceberg engine can read as keyed), `window_end`, one column per
 * aggregate (AVG kept as `<alias>_sum` + `<alias>_count` beside `<alias>`, so partial averages merge
 * exactly), and `window_closed`. Checked at start-up: a column the records do not have, or a type an
 * aggregate cannot take, is one clear error, not a dead letter per record.
 */
import { ValidationError } from '../errors.js';
import { decimalParams } from '../spec/conversions.js';
import type { PrimitiveType, Schema, StructField } from '../spec/types.js';
import type { AggregateColumn, AggregateQuery } from './parse-aggregate-sql.js';

/** How an aggregated column's values add up: integers as bigint, floats as number, decimals unscaled. */
export type Arithmetic = 'integer' | 'float' | 'decimal';

export interface ResolvedAggregate extends AggregateColumn {
  /** The source column's type (absent for COUNT(*)). */
  sourceType?: PrimitiveType;
  arithmetic?: Arithmetic;
  /** Decimal scale of the source column (sums keep it). */
  scale: number;
}

export interface AggregatePlan {
  query: AggregateQuery;
  /** The mapped record's schema the query reads. */
  sourceSchema: Schema;
  groupTypes: PrimitiveType[];
  aggregates: ResolvedAggregate[];
  /** The result table's schema (identifier fields: group columns + window_start). */
  resultSchema: Schema;
}

const ORDERED: readonly string[] = [
  'int',
  'long',
  'float',
  'double',
  'date',
  'time',
  'timestamp',
  'timestamptz',
  'string',
];

function arithmeticOf(type: PrimitiveType): Arithmetic | undefined {
  if (type === 'int' || type === 'long') return 'integer';
  if (type === 'float' || type === 'double') return 'float';
  return decimalParams(type) ? 'decimal' : undefined;
}

function sumType(a: ResolvedAggregate): PrimitiveType {
  if (a.arithmetic === 'integer') return 'long';
  if (a.arithmetic === 'float') return 'double';
  return `decimal(38, ${a.scale})`;
}

function primitiveColumn(schema: Schema, name: string, label: string, role: string): PrimitiveType {
  const field = schema.fields.find((f) => f.name === name);
  if (!field) {
    throw new ValidationError(
      `${label}: ${role} ${name} is not a column of the route's records (${schema.fields.map((f) => f.name).join(', ')})`,
    );
  }
  if (typeof field.type !== 'string')
    throw new ValidationError(`${label}: ${role} ${name} is a ${field.type.type}, not a value column`);
  return field.type;
}

function resolveAggregate(a: AggregateColumn, schema: Schema, label: string): ResolvedAggregate {
  if (a.column === undefined) return { ...a, scale: 0 };
  const name = a.fn.toUpperCase();
  const sourceType = primitiveColumn(schema, a.column, label, `${name}(${a.column}): column`);
  const arithmetic = arithmeticOf(sourceType);
  const scale = decimalParams(sourceType)?.scale ?? 0;
  if ((a.fn === 'sum' || a.fn === 'avg') && !arithmetic) {
    throw new ValidationError(
      `${label} SELECT: ${name}(${a.column}) needs a numeric column; ${a.column} is ${sourceType}`,
    );
  }
  if ((a.fn === 'min' || a.fn === 'max') && !arithmetic && !ORDERED.includes(sourceType)) {
    throw new ValidationError(
      `${label} SELECT: ${name}(${a.column}): ${sourceType} values have no order floe compares`,
    );
  }
  return { ...a, sourceType, arithmetic, scale };
}

/** The result columns an aggregate occupies, with their types. */
function aggregateFields(a: ResolvedAggregate): { name: string; type: PrimitiveType; required: boolean }[] {
  switch (a.fn) {
    case 'count':
      return [{ name: a.alias, type: 'long', required: true }];
    case 'sum':
      return [{ name: a.alias, type: sumType(a), required: false }];
    case 'min':
    case 'max':
      return [{ name: a.alias, type: a.sourceType ?? 'long', required: false }];
    case 'avg':
      return [
        { name: `${a.alias}_sum`, type: sumType(a), required: false },
        { name: `${a.alias}_count`, type: 'long', required: true },
        { name: a.alias, type: 'double', required: false },
      ];
  }
}

/**
 * Resolves a parsed query against the route's record schema.
 * @throws ValidationError for a column the records lack, a type an aggregate cannot take, a group
 *   column that cannot be a key (float, double, not a primitive), or two result columns of one name
 */
export function planAggregate(query: AggregateQuery, sourceSchema: Schema, label: string): AggregatePlan {
  const timeType = primitiveColumn(sourceSchema, query.window.column, label, 'TUMBLE column');
  if (timeType !== 'timestamptz' && timeType !== 'timestamp') {
    throw new ValidationError(
      `${label} GROUP BY: TUMBLE(${query.window.column}, ...) needs a timestamp column; it is ${timeType}`,
    );
  }
  const groupTypes = query.groupBy.map((c) => {
    const type = primitiveColumn(sourceSchema, c, label, 'GROUP BY column');
    if (type === 'float' || type === 'double') {
      throw new ValidationError(`${label} GROUP BY: ${c} is ${type}; a float cannot be part of a key`);
    }
    return type;
  });
  const aggregates = query.aggregates.map((a) => resolveAggregate(a, sourceSchema, label));
  const fields: StructField[] = [];
  const add = (name: string, type: PrimitiveType, required: boolean) => {
    if (fields.some((f) => f.name === name)) {
      throw new ValidationError(
        `${label} SELECT: the result column ${name} would exist twice (rename an alias)`,
      );
    }
    fields.push({ id: fields.length + 1, name, required, type });
  };
  for (const [i, c] of query.groupBy.entries()) add(c, groupTypes[i], true);
  add('window_start', 'timestamptz', true);
  add('window_end', 'timestamptz', true);
  for (const a of aggregates) for (const f of aggregateFields(a)) add(f.name, f.type, f.required);
  add('window_closed', 'boolean', true);
  const keyIds = [...query.groupBy, 'window_start'].map((n) => fields.find((f) => f.name === n)!.id);
  const resultSchema: Schema = { type: 'struct', 'schema-id': 0, fields, 'identifier-field-ids': keyIds };
  return { query, sourceSchema, groupTypes, aggregates, resultSchema };
}
