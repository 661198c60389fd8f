/**
 * Sorts rows by a table sort order (Iceberg spec, "Sorting"): each field's transform applied to its
 * source column, ascending or descending, nulls first or last; later fields break ties. The sort is
 * stable, so rows equal on every field keep their read order.
 */
import { ValidationError } from '../errors.js';
import { compareValues } from '../spec/conversions.js';
import { schemaFieldPaths } from '../spec/schema.js';
import { findField } from '../spec/schema-index.js';
import { applyTransform } from '../spec/transforms.js';
import type { Row, Schema, SortOrder, Value } from '../spec/types.js';

interface SortKey {
  path: string[];
  apply: (value: Value) => Value;
  descending: boolean;
  nullsFirst: boolean;
}

/** The value at a dotted path of structs in a row; null under a null (or missing) struct. */
export function readPath(row: Row, path: readonly string[]): Value {
  let value: Value = row;
  for (const part of path) value = value === null ? null : ((value as Row)[part] ?? null);
  return value;
}

/** Reads row `index`'s value at a dotted path of structs (null under a null struct). */
export type ReadPath = (index: number, path: readonly string[]) => Value;

function compareNullable(a: Value, b: Value, key: SortKey): number {
  if (a === null || b === null) {
    if (a === b) return 0;
    return (a === null) === key.nullsFirst ? -1 : 1;
  }
  const c = compareValues(a, b);
  return key.descending ? -c : c;
}

/**
 * Rows sorted by `order` (a new array; an unsorted order returns the rows as they are).
 * @throws ValidationError when a sort field's source column is not in the schema or its transform does
 *   not apply to it, or a value is not comparable
 */
export function sortRows(rows: Row[], order: SortOrder | undefined, schema: Schema): Row[] {
  if (!order || order.fields.length === 0) return rows;
  const indices = sortIndices(
    rows.map((_, i) => i),
    (i, path) => readPath(rows[i], path),
    order,
    schema,
  );
  return indices.map((i) => rows[i]);
}

/**
 * Row indices sorted by `order` (stable: equal rows keep the order of `indices`), reading values through
 * `read` — for rows held in any form (objects, gathered columns).
 * @throws ValidationError as sortRows
 */
export function sortIndices(
  indices: readonly number[],
  read: ReadPath,
  order: SortOrder | undefined,
  schema: Schema,
): number[] {
  if (!order || order.fields.length === 0) return [...indices];
  const paths = schemaFieldPaths(schema);
  const keys: SortKey[] = order.fields.map((f) => {
    const source = findField(schema, f['source-id']);
    const path = paths.get(f['source-id']);
    if (!source || !path) {
      throw new ValidationError(`sort field source column ${f['source-id']} is not in the schema`);
    }
    return {
      path: path.split('.'),
      apply: (v: Value) => applyTransform(f.transform, source.type, v),
      descending: f.direction === 'desc',
      nullsFirst: f['null-order'] === 'nulls-first',
    };
  });
  // Keys are computed once per row: transforms (bucket hashing, date math) are not free.
  const keyed = indices.map((row, index) => ({
    row,
    index,
    values: keys.map((k) => k.apply(read(row, k.path))),
  }));
  keyed.sort((a, b) => {
    for (let i = 0; i < keys.length; i++) {
      const c = compareNullable(a.values[i], b.values[i], keys[i]);
      if (c !== 0) return c;
    }
    return a.index - b.index;
  });
  return keyed.map((k) => k.row);
}
