/**
 * What each table format version allows, checked when metadata is read (as Iceberg Java's
 * Schema.checkCompatibility does): the v3 types and non-null default values only in v3 tables, and in
 * v3 the spec's rules for the new types (`unknown` optional; `unknown`, `variant`, `geometry`,
 * `geography` default to null only). Also the one place that says which versions floe writes.
 */
import { LakeError } from '../errors.js';
import { fail, joinPath } from './json-check.js';
import type { FormatVersion, IcebergType, StructType, TableMetadata } from './types.js';

/** The format version floe creates tables with unless asked for another (`format-version` 3). */
export const WRITTEN_FORMAT_VERSION = 2;

/** The format versions floe changes: v3 with row lineage kept on every commit (table/row-lineage.ts). */
export const WRITABLE_FORMAT_VERSIONS: readonly FormatVersion[] = [2, 3];

/**
 * Something valid in a table that floe does not do yet (writing a v3 table, reading a variant column). Not retryable: the table will not change its mind.
 */
export class UnsupportedFeatureError extends LakeError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: false });
  }
}

/**
 * Refuses to change a table floe cannot write right: a format version it does not write (v1, or a
 * version after 3), or a v3 table whose current schema has a v3-only type (timestamp_ns,
 * timestamptz_ns, unknown, variant, geometry, geography) — floe's Parquet writer and mappings write
 * none of them yet, and a commit that carries the schema on could not add rows to it.
 * @throws UnsupportedFeatureError naming the version, or the first such column
 */
export function refuseUnwritableVersion(md: TableMetadata, table: string): void {
  const version = md['format-version'];
  if (!WRITABLE_FORMAT_VERSIONS.includes(version)) {
    throw new UnsupportedFeatureError(
      `${table} is an Iceberg format-version ${version} table: writing format-version ${version} tables is not supported yet; reading is`,
    );
  }
  const schema = md.schemas.find((s) => s['schema-id'] === md['current-schema-id']);
  const column = schema && firstV3Column(schema, '');
  if (column !== undefined) {
    throw new UnsupportedFeatureError(
      `${table}: column '${column.path}' has type '${column.type}', which floe reads but does not write yet; the table is read only to floe`,
    );
  }
}

function firstV3Column(struct: StructType, prefix: string): { path: string; type: string } | undefined {
  for (const f of struct.fields) {
    const path = prefix ? `${prefix}.${f.name}` : f.name;
    const found = firstV3Type(f.type, path);
    if (found) return found;
  }
  return undefined;
}

function firstV3Type(type: IcebergType, path: string): { path: string; type: string } | undefined {
  if (typeof type === 'string') return isV3Type(type) ? { path, type } : undefined;
  if (type.type === 'struct') return firstV3Column(type, path);
  if (type.type === 'list') return firstV3Type(type.element, `${path}.element`);
  return firstV3Type(type.key, `${path}.key`) ?? firstV3Type(type.value, `${path}.value`);
}

/** True for a type that exists only in v3 tables. Never throws. */
export function isV3Type(type: IcebergType): boolean {
  return (
    typeof type === 'string' &&
    (type === 'timestamp_ns' ||
      type === 'timestamptz_ns' ||
      type === 'unknown' ||
      type === 'variant' ||
      type.startsWith('geometry') ||
      type.startsWith('geography'))
  );
}

/**
 * True for the v3 types floe cannot turn into values (a scan that projects one is refused).
 * Never throws.
 */
export function isUnreadableType(type: IcebergType): boolean {
  return (
    typeof type === 'string' &&
    (type === 'variant' || type.startsWith('geometry') || type.startsWith('geography'))
  );
}

const nullOnly = (type: IcebergType): boolean => type === 'unknown' || isUnreadableType(type);

function checkType(type: IcebergType, version: FormatVersion, path: string): void {
  if (version < 3 && isV3Type(type)) fail(path, `type '${String(type)}' needs format version 3`);
  if (typeof type === 'string') return;
  if (type.type === 'struct') {
    checkFields(type, version, path);
  } else if (type.type === 'list') {
    checkType(type.element, version, joinPath(path, 'element'));
  } else {
    if (type.key === 'unknown') fail(joinPath(path, 'key'), 'a map key cannot be unknown');
    checkType(type.key, version, joinPath(path, 'key'));
    checkType(type.value, version, joinPath(path, 'value'));
  }
}

function checkFields(struct: StructType, version: FormatVersion, path: string): void {
  struct.fields.forEach((f, i) => {
    const at = joinPath(path, `fields[${i}]`);
    for (const key of ['initial-default', 'write-default'] as const) {
      const value = f[key];
      if (value === undefined || value === null) continue;
      if (version < 3) fail(joinPath(at, key), 'a non-null default needs format version 3');
      if (nullOnly(f.type)) fail(joinPath(at, key), `a ${String(f.type)} column defaults to null only`);
    }
    if (f.type === 'unknown' && f.required) fail(at, `'${f.name}' is unknown, which must be optional`);
    checkType(f.type, version, joinPath(at, 'type'));
  });
}

/**
 * Checks every schema of `md` against its format version.
 * @throws ValidationError naming the JSON path of the first problem
 */
export function checkSchemasForVersion(md: TableMetadata): void {
  md.schemas.forEach((schema, i) => {
    checkType(schema, md['format-version'], `schemas[${i}]`);
  });
}
