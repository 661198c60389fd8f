/**
 * The order a compaction group's rows are written in, as a permutation: the sort order's source
 * columns are read once from the group's Arrow columns (only those columns become values), and the
 * rows are ordered by table/sort-rows.ts's `sortIndices` — the very comparison the row path sorts
 * with (transforms, asc/desc, nulls first/last, stable).
 */
import type * as arrow from 'apache-arrow';
import { readColumnValues } from '../data/arrow/arrow-to-values.js';
import { schemaFieldPaths } from '../spec/schema.js';
import type { IcebergType, Schema, SortOrder, StructType, Value } from '../spec/types.js';
import { sortIndices } from '../table/sort-rows.js';

/** Rows of a group: `parts[j][p]` is part p's Data of top-level column j; row k is `(part[k], row[k])`. */
export interface GroupRows {
  parts: arrow.Data[][];
  part: Int32Array;
  row: Int32Array;
}

/**
 * The group's rows reordered by `order` (the same arrays when the order sorts nothing).
 * @throws ValidationError as sortRows (a source column not in the schema, a transform that does not
 *   apply, values that do not compare)
 */
export function sortGroupRows(rows: GroupRows, order: SortOrder | undefined, schema: Schema): GroupRows {
  if (!order || order.fields.length === 0 || rows.row.length < 2) return rows;
  const paths = schemaFieldPaths(schema);
  const columns = new Map<string, Value[]>();
  for (const f of order.fields) {
    const path = paths.get(f['source-id']);
    if (path !== undefined && !columns.has(path)) columns.set(path, keyValues(rows, schema, path.split('.')));
  }
  const n = rows.row.length;
  const identity = Array.from({ length: n }, (_, i) => i);
  const order_ = sortIndices(identity, (i, path) => columns.get(path.join('.'))?.[i] ?? null, order, schema);
  const part = new Int32Array(n);
  const row = new Int32Array(n);
  for (let k = 0; k < n; k++) {
    part[k] = rows.part[order_[k]];
    row[k] = rows.row[order_[k]];
  }
  return { parts: rows.parts, part, row };
}

/**
 * Values at a dotted path of struct fields for every row of the group, null under a null struct —
 * readPath's answer on the row path's rows (a path into a list or map reads null there too).
 */
function keyValues(rows: GroupRows, schema: StructType, path: readonly string[]): Value[] {
  const n = rows.row.length;
  const out: Value[] = new Array(n).fill(null);
  let struct: StructType | undefined = schema;
  const steps: number[] = [];
  let type: IcebergType | undefined;
  for (const name of path) {
    const j: number = struct ? struct.fields.findIndex((f) => f.name === name) : -1;
    if (!struct || j < 0) return out;
    steps.push(j);
    type = struct.fields[j].type;
    struct = typeof type !== 'string' && type.type === 'struct' ? type : undefined;
  }
  if (type === undefined) return out;
  const perPart = rows.parts[steps[0]].map((top) => {
    let data = top;
    const parents: arrow.Data[] = [];
    for (let s = 1; s < steps.length; s++) {
      parents.push(data);
      data = data.children[steps[s]];
    }
    const values = readColumnValues(type, data, path.join('.'));
    return parents.length === 0
      ? values
      : values.map((v, i) => (parents.every((p) => p.getValid(i)) ? v : null));
  });
  for (let k = 0; k < n; k++) out[k] = perPart[rows.part[k]][rows.row[k]];
  return out;
}
