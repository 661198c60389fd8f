/**
 * Splits rows by the partition tuple a spec gives them. Source columns may be nested in structs
 * (`customer.id`); a missing struct on the path is a null source value.
 */
import { ValidationError } from '../errors.js';
import { schemaFieldPaths } from '../spec/schema.js';
import { findField } from '../spec/schema-index.js';
import { applyTransform } from '../spec/transforms.js';
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
  const groups = new Map<string, PartitionGroup>();
  const values: Value[] = new Array(accessors.length);
  for (const row of rows) {
    for (let i = 0; i < accessors.length; i++) {
      const a = accessors[i];
      let v: Value = row;
      for (const p of a.path) v = v === null ? null : ((v as Row)[p] ?? null);
      values[i] = applyTransform(a.transform, a.type, v);
    }
    const key = keyOf(values);
    let group = groups.get(key);
    if (!group) {
      const partition: PartitionValues = {};
      accessors.forEach((a, i) => {
        partition[a.name] = values[i];
      });
      group = { partition, rows: [] };
      groups.set(key, group);
    }
    group.rows.push(row);
  }
  return [...groups.values()];
}
