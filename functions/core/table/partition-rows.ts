/**
 * Splits rows by the partition tuple a spec gives them. Source columns may be nested in structs
 * (`customer.id`); a missing struct on the path is a null source value.
 */
import { ValidationError } from '../errors.js';
import { schemaFieldPaths } from '../spec/schema.js';
import { findField } from '../spec/schema-index.js';
import { applyTransform } from '../spec/transforms.js';
import { type ReadPath, readPath } from './sort-rows.js';
import type {
  IcebergType,
  PartitionSpec,
  PartitionValues,
  Row,
  Schema,
  Transform,
  Value,
} from '../spec/types.js';

export interface PartitionGroup {
  partition: PartitionValues;
  rows: Row[];
}

/** Rows of one partition, by index. */
export interface IndexGroup {
  partition: PartitionValues;
  indices: number[];
}

interface Accessor {
  name: string;
  path: string[];
  type: IcebergType;
  transform: Transform;
}

function keyOf(values: Value[]): string {
  return values
    .map((v) =>
      v === null ? '\u0000' : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : String(v),
    )
    .join('\u0001');
}

/** @throws ValidationError when a partition source column is not in the schema */
export function partitionRows(rows: Row[], schema: Schema, spec: PartitionSpec): PartitionGroup[] {
  if (spec.fields.length === 0) return rows.length ? [{ partition: {}, rows }] : [];
  return partitionIndices(rows.length, (i, path) => readPath(rows[i], path), schema, spec).map((g) => ({
    partition: g.partition,
    rows: g.indices.map((i) => rows[i]),
  }));
}

/**
 * Row indices grouped by partition tuple, in first-seen order, reading values through `read` — for rows
 * held in any form (objects, gathered columns).
 * @throws ValidationError as partitionRows
 */
export function partitionIndices(
  count: number,
  read: ReadPath,
  schema: Schema,
  spec: PartitionSpec,
): IndexGroup[] {
  if (count === 0) return [];
  if (spec.fields.length === 0)
    return [{ partition: {}, indices: Array.from({ length: count }, (_, i) => i) }];
  const paths = schemaFieldPaths(schema);
  const accessors: Accessor[] = spec.fields.map((f) => {
    const source = findField(schema, f['source-id']);
    const path = paths.get(f['source-id']);
    if (!source || !path)
      throw new ValidationError(
        `partition field '${f.name}': source column ${f['source-id']} is not in the schema`,
      );
    return { name: f.name, path: path.split('.'), type: source.type, transform: f.transform };
  });
  const groups = new Map<string, IndexGroup>();
  const values: Value[] = new Array(accessors.length);
  for (let row = 0; row < count; row++) {
    for (let i = 0; i < accessors.length; i++) {
      const a = accessors[i];
      values[i] = applyTransform(a.transform, a.type, read(row, a.path));
    }
    const key = keyOf(values);
    let group = groups.get(key);
    if (!group) {
      const partition: PartitionValues = {};
      accessors.forEach((a, i) => {
        partition[a.name] = values[i];
      });
      group = { partition, indices: [] };
      groups.set(key, group);
    }
    group.indices.push(row);
  }
  return [...groups.values()];
}
