/**
 * Partition specs and sort orders from short text expressions (what a user writes in config or on the
 * CLI), checked against a schema, with the names and ids Iceberg Java would give them, and back to text.
 *
 *   day(order_ts), bucket(16, customer_id), truncate(4, name), country, void(x), hour(ts) as h
 *   order_ts desc nulls last, bucket(16, id)
 */
import { ValidationError } from '../errors.js';
import { schemaFieldPaths, typeToString } from './schema.js';
import { formatColumn, parseTerms, type TransformTerm } from './transform-terms.js';
import { canTransform, parseTransform, transformParameter } from './transforms.js';
import type {
  PartitionField,
  PartitionSpec,
  Schema,
  SortField,
  SortOrder,
  StructField,
  StructType,
  Transform,
} from './types.js';

/** Function names accepted in expressions → the transform's base name (Spark's plural forms too). */
const FUNCTION_NAMES: Record<string, string> = {
  identity: 'identity',
  year: 'year',
  years: 'year',
  month: 'month',
  months: 'month',
  day: 'day',
  days: 'day',
  hour: 'hour',
  hours: 'hour',
  bucket: 'bucket',
  truncate: 'truncate',
  void: 'void',
};

/** Iceberg Java's default partition field name suffix per transform (`PartitionSpec.Builder`). */
const NAME_SUFFIX: Record<string, string> = {
  year: '_year',
  month: '_month',
  day: '_day',
  hour: '_hour',
  bucket: '_bucket',
  truncate: '_trunc',
  void: '_null',
};

const TIME_TRANSFORMS = new Set(['year', 'month', 'day', 'hour']);

interface BoundTerm {
  transform: Transform;
  field: StructField;
  /** Full dotted name of the source column. */
  sourceName: string;
}

/** Finds a column by its name parts, through structs only. */
function resolveColumn(schema: StructType, parts: string[]): StructField | undefined {
  let struct: StructType = schema;
  for (let i = 0; i < parts.length; i++) {
    const field = struct.fields.find((f) => f.name === parts[i]);
    if (!field || i === parts.length - 1) return field;
    if (typeof field.type === 'string' || field.type.type !== 'struct') return undefined;
    struct = field.type;
  }
  return undefined;
}

function baseName(transform: Transform): string {
  return transform.replace(/\[\d+\]$/, '');
}

function bindTerm(term: TransformTerm, schema: Schema, what: string): BoundTerm {
  const fail = (message: string): never => {
    throw new ValidationError(`${what}: ${message}`);
  };
  const fn = term.fn === undefined ? 'identity' : FUNCTION_NAMES[term.fn];
  if (fn === undefined) fail(`unknown transform '${term.fn}' in '${term.text}'`);
  const wantsNumber = fn === 'bucket' || fn === 'truncate';
  if (term.columns.length !== 1 || term.numbers.length !== (wantsNumber ? 1 : 0)) {
    fail(
      wantsNumber
        ? `'${term.text}' needs a width and one column, e.g. ${fn}(16, id)`
        : `'${term.text}' needs exactly one column, e.g. ${fn}(ts)`,
    );
  }
  let transform: Transform;
  try {
    transform = parseTransform(wantsNumber ? `${fn}[${term.numbers[0]}]` : fn);
  } catch (error) {
    return fail(`'${term.text}': ${(error as Error).message}`);
  }
  const sourceName = term.columns[0].join('.');
  const field = resolveColumn(schema, term.columns[0]);
  if (!field) {
    const known = schema.fields.map((f) => f.name).join(', ');
    return fail(`unknown column '${sourceName}' in '${term.text}' (columns: ${known})`);
  }
  if (!canTransform(transform, field.type) || typeof field.type !== 'string') {
    fail(`${fn} cannot be applied to '${sourceName}', a ${typeToString(field.type)} column`);
  }
  return { transform, field, sourceName };
}

/**
 * Reads a partition expression into a spec for `schema`: `day(order_ts), bucket(16, customer_id),
 * truncate(4, name), identity(country), country, year(ts), month(ts), hour(ts), void(x)`, each term
 * optionally `as <name>`. Names follow Iceberg Java (`order_ts_day`, `customer_id_bucket`, `name_trunc`,
 * identity → the column's dotted name, void → `x_null`); field ids count up from `firstFieldId`.
 * Empty text gives the unpartitioned spec.
 * @throws ValidationError on a syntax error, an unknown column, a transform that does not apply to its
 *   column's type, a duplicate or schema-clashing name, or a redundant field (two time transforms of one column)
 */
export function parsePartitionExpression(
  text: string,
  schema: Schema,
  specId = 0,
  firstFieldId = 1000,
): PartitionSpec {
  const what = `partition expression '${text}'`;
  const fail = (message: string): never => {
    throw new ValidationError(`${what}: ${message}`);
  };
  const columnIds = new Map<string, number>();
  for (const [id, path] of schemaFieldPaths(schema)) columnIds.set(path, id);
  const names = new Set<string>();
  const dedup = new Map<string, string>();
  const fields = parseTerms(text, 'partition expression').map((term, i): PartitionField => {
    if (term.direction || term.nullOrder) fail(`'${term.text}': sort directions belong in a sort order`);
    const { transform, field, sourceName } = bindTerm(term, schema, what);
    const base = baseName(transform);
    const name = term.alias ?? (base === 'identity' ? sourceName : `${sourceName}${NAME_SUFFIX[base]}`);
    if (names.has(name)) fail(`partition name '${name}' is used more than once`);
    const clash = columnIds.get(name);
    if (clash !== undefined && !(base === 'identity' && clash === field.id)) {
      fail(`partition name '${name}' is already a column of the schema; choose another with 'as'`);
    }
    // As Iceberg Java: one time transform per column (day and hour of one column are redundant).
    const dedupKey = `${field.id}/${TIME_TRANSFORMS.has(base) ? 'time' : transform}`;
    const earlier = dedup.get(dedupKey);
    if (earlier !== undefined) fail(`'${term.text}' is redundant with '${earlier}'`);
    names.add(name);
    dedup.set(dedupKey, term.text);
    return { 'source-id': field.id, 'field-id': firstFieldId + i, name, transform };
  });
  return { 'spec-id': specId, fields };
}

function formatTerm(transform: Transform, column: string): string {
  const base = baseName(transform);
  if (base === 'identity') return column;
  const parameter = transformParameter(transform);
  return parameter === undefined ? `${base}(${column})` : `${base}(${parameter}, ${column})`;
}

/** The name parts of column `sourceId`, reachable through structs (as partition and sort sources are). */
function sourceColumn(schema: Schema, sourceId: number): string[] {
  const walk = (struct: StructType): string[] | undefined => {
    for (const f of struct.fields) {
      if (f.id === sourceId) return [f.name];
      if (typeof f.type !== 'string' && f.type.type === 'struct') {
        const rest = walk(f.type);
        if (rest) return [f.name, ...rest];
      }
    }
    return undefined;
  };
  const parts = walk(schema);
  if (!parts)
    throw new ValidationError(`source-id ${sourceId} is not a column of schema ${schema['schema-id']}`);
  return parts;
}

/**
 * Writes a spec back as an expression that parsePartitionExpression reads to the same fields
 * (`as <name>` only where the name is not Iceberg Java's default). The unpartitioned spec gives ''.
 * @throws ValidationError when a source id is not in `schema`
 */
export function formatPartitionSpec(spec: PartitionSpec, schema: Schema): string {
  return spec.fields
    .map((f) => {
      const parts = sourceColumn(schema, f['source-id']);
      const path = parts.join('.');
      const base = baseName(f.transform);
      const defaultName = base === 'identity' ? path : `${path}${NAME_SUFFIX[base]}`;
      const term = formatTerm(f.transform, formatColumn(parts));
      return f.name === defaultName ? term : `${term} as ${formatColumn([f.name])}`;
    })
    .join(', ');
}

/**
 * Reads a sort order: `col [asc|desc] [nulls first|nulls last], ...`, where a term may also be a
 * transform (`bucket(16, id) desc`). Direction defaults to asc; null order to nulls-first for asc and
 * nulls-last for desc (Iceberg's defaults). Empty text gives the unsorted order, whose id is always 0.
 * @throws ValidationError on a syntax error, an unknown column or a transform that does not apply
 */
export function parseSortOrder(text: string, schema: Schema, orderId = 1): SortOrder {
  const what = `sort order '${text}'`;
  const fields = parseTerms(text, 'sort order').map((term): SortField => {
    if (term.alias !== undefined)
      throw new ValidationError(`${what}: '${term.text}': sort fields take no name`);
    const { transform, field } = bindTerm(term, schema, what);
    const direction = term.direction ?? 'asc';
    const nullOrder = term.nullOrder ?? (direction === 'asc' ? 'nulls-first' : 'nulls-last');
    return { transform, 'source-id': field.id, direction, 'null-order': nullOrder };
  });
  return { 'order-id': fields.length === 0 ? 0 : orderId, fields };
}

/**
 * Writes a sort order back as text parseSortOrder reads to the same fields (null order always spelled out).
 * @throws ValidationError when a source id is not in `schema`
 */
export function formatSortOrder(order: SortOrder, schema: Schema): string {
  return order.fields
    .map((f) => {
      const column = formatColumn(sourceColumn(schema, f['source-id']));
      const nulls = f['null-order'] === 'nulls-first' ? 'nulls first' : 'nulls last';
      return `${formatTerm(f.transform, column)} ${f.direction} ${nulls}`;
    })
    .join(', ');
}
