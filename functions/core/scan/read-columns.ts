/**
 * Which columns a scan reads: the projection asked for, plus the columns the row filter and the
 * equality deletes need (dropped afterwards). Columns are found by field id in the current schema, or,
 * for an equality-delete column dropped since, in the newest older schema that has it (the spec
 * says a dropped delete column must still be used to apply the deletes).
 */
import { ValidationError } from '../errors.js';
import { isUnreadableType, UnsupportedFeatureError } from '../spec/format-version.js';
import type {
  IcebergType,
  Row,
  Schema,
  StructField,
  StructType,
  TableMetadata,
  Value,
} from '../spec/types.js';

/** A field id located in a struct: the row keys leading to it. */
export type FieldPaths = Map<number, string[]>;

/** Ids of every field under a type (itself excluded), through structs only. */
function nestedStructIds(type: IcebergType, into: Set<number>): Set<number> {
  if (typeof type !== 'string' && type.type === 'struct') {
    for (const f of type.fields) {
      into.add(f.id);
      nestedStructIds(f.type, into);
    }
  }
  return into;
}

/** The top-level field of `struct` that is or contains (through structs) field `id`. */
function topLevelOwner(struct: StructType, id: number): StructField | undefined {
  return struct.fields.find((f) => f.id === id || nestedStructIds(f.type, new Set()).has(id));
}

/** Row keys to every field of a struct, through nested structs. Never throws. */
export function indexPaths(
  struct: StructType,
  prefix: string[] = [],
  into: FieldPaths = new Map(),
): FieldPaths {
  for (const f of struct.fields) {
    const path = [...prefix, f.name];
    into.set(f.id, path);
    if (typeof f.type !== 'string' && f.type.type === 'struct') indexPaths(f.type, path, into);
  }
  return into;
}

/**
 * The struct to read data files with: `projection`'s top-level fields, then (in schema order) the
 * top-level fields holding `extraIds`.
 * @throws ValidationError when an extra id is in no schema of the table
 */
export function buildReadStruct(
  projection: StructType,
  extraIds: Iterable<number>,
  schema: Schema,
  metadata: TableMetadata,
): StructType {
  const fields = [...projection.fields];
  const have = new Set<number>();
  for (const f of fields) {
    have.add(f.id);
    nestedStructIds(f.type, have);
  }
  const olderFirstNewest = [...metadata.schemas].reverse();
  for (const id of extraIds) {
    if (have.has(id)) continue;
    const owner =
      topLevelOwner(schema, id) ??
      olderFirstNewest.map((s) => topLevelOwner(s, id)).find((f) => f !== undefined);
    if (!owner) throw new ValidationError(`field id ${id} is in no schema of the table`);
    if (fields.some((f) => f.id === owner.id)) {
      throw new ValidationError(`field id ${id} is not in the projected column '${owner.name}'`);
    }
    // A dropped column's name may have been reused; keep row keys unique.
    const name = fields.some((f) => f.name === owner.name) ? `${owner.name}#${owner.id}` : owner.name;
    fields.push({ ...owner, name, required: false });
    have.add(owner.id);
    nestedStructIds(owner.type, have);
  }
  return { type: 'struct', fields };
}

/**
 * `struct` without its `unknown` fields (v3: always null, never stored in data files, so there is
 * nothing to read), through nested structs, and the top-level names dropped (set to null in each row).
 * Never throws.
 */
export function withoutUnknownFields(struct: StructType): { struct: StructType; nullNames: string[] } {
  const nullNames: string[] = [];
  const strip = (s: StructType, top: boolean): StructType => {
    const fields: StructField[] = [];
    for (const f of s.fields) {
      if (f.type === 'unknown') {
        if (top) nullNames.push(f.name);
      } else if (typeof f.type !== 'string' && f.type.type === 'struct') {
        fields.push({ ...f, type: strip(f.type, false) });
      } else {
        fields.push(f);
      }
    }
    return { ...s, fields };
  };
  return { struct: strip(struct, true), nullNames };
}

/**
 * Refuses a read of a column floe cannot turn into values (v3 `variant`, `geometry`, `geography`),
 * anywhere in the struct read, naming it: a scan that leaves such columns out still works.
 * @throws UnsupportedFeatureError naming the first such column
 */
export function refuseUnreadableColumns(struct: StructType): void {
  const visit = (type: IcebergType, name: string): void => {
    if (isUnreadableType(type)) {
      throw new UnsupportedFeatureError(
        `column '${name}' has type ${String(type)}, which floe cannot read yet; select other columns`,
      );
    }
    if (typeof type === 'string') return;
    if (type.type === 'struct')
      for (const f of type.fields) visit(f.type, name ? `${name}.${f.name}` : f.name);
    else if (type.type === 'list') visit(type.element, `${name}.element`);
    else {
      visit(type.key, `${name}.key`);
      visit(type.value, `${name}.value`);
    }
  };
  visit(struct, '');
}

/**
 * Refuses a read of a data file that lacks a column with a non-null v3 `initial-default`: rows of
 * files written before the column was added must read as that default, which floe does not fill in
 * yet, and reading them as null would be wrong. Files that hold the column read as usual.
 * @throws UnsupportedFeatureError naming the column and the file
 */
export function refuseMissingDefaults(
  struct: StructType,
  fileFieldIds: ReadonlySet<number>,
  location: string,
): void {
  const visit = (s: StructType, prefix: string): void => {
    for (const f of s.fields) {
      const name = prefix ? `${prefix}.${f.name}` : f.name;
      const initial = f['initial-default'];
      if (!fileFieldIds.has(f.id) && initial !== undefined && initial !== null) {
        throw new UnsupportedFeatureError(
          `column '${name}' has an initial-default, and data file ${location} was written before the column existed: filling in defaults is not supported yet; select other columns`,
        );
      }
      if (typeof f.type !== 'string' && f.type.type === 'struct' && fileFieldIds.has(f.id))
        visit(f.type, name);
    }
  };
  visit(struct, '');
}

/** The value at a path of row keys; null when a struct on the way is null. Never throws. */
export function readPath(row: Row, path: readonly string[]): Value {
  let current: Value = row;
  for (const key of path) {
    if (current === null || typeof current !== 'object' || current instanceof Uint8Array) return null;
    if (Array.isArray(current) || current instanceof Map) return null;
    current = current[key] ?? null;
  }
  return current;
}

/** Keeps only `fields`' top-level keys of a row (the same object when nothing needs dropping). */
export function projectRow(row: Row, names: readonly string[], readWidth: number): Row {
  if (names.length === readWidth) return row;
  const out: Row = {};
  for (const name of names) out[name] = row[name] ?? null;
  return out;
}

/**
 * `struct` cut down to the fields in `ids` and the structs leading to them, every field optional
 * (a delete file holds only its key columns). Names are kept, so paths stay the same. Never throws.
 */
export function pruneStruct(struct: StructType, ids: ReadonlySet<number>): StructType {
  const fields: StructField[] = [];
  for (const f of struct.fields) {
    if (ids.has(f.id)) {
      fields.push({ ...f, required: false });
    } else if (typeof f.type !== 'string' && f.type.type === 'struct') {
      const inner = pruneStruct(f.type, ids);
      if (inner.fields.length > 0) fields.push({ ...f, required: false, type: inner });
    }
  }
  return { type: 'struct', fields };
}
