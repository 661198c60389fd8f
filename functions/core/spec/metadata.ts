/**
 * Table metadata (metadata.json, format v2 or v3): creating it for a new table, writing it, and looking
 * things up in it. Reading lives in metadata-parser.ts and is re-exported here.
 */
import { randomUUID } from 'node:crypto';
import { ValidationError } from '../errors.js';
import { partitionType } from './partition-type.js';
import { parseSchema } from './schema.js';
import { findField, maxFieldId } from './schema-index.js';
import { canTransform } from './transforms.js';
import { WRITABLE_FORMAT_VERSIONS, WRITTEN_FORMAT_VERSION } from './format-version.js';
import { stringifyJson } from './json-codec.js';
import type {
  FormatVersion,
  PartitionSpec,
  Schema,
  Snapshot,
  SnapshotId,
  SortOrder,
  TableMetadata,
} from './types.js';

export { parseTableMetadata } from './metadata-parser.js';

export interface NewTableMetadataOptions {
  /** The table's base location (`s3://bucket/warehouse/db/table`); a trailing '/' is dropped, as Java does. */
  location: string;
  /** Field ids are taken as they are (not reassigned). */
  schema: Schema;
  /** @default the unpartitioned spec, id 0 */
  spec?: PartitionSpec;
  /** @default the unsorted order, id 0 */
  sortOrder?: SortOrder;
  /**
   * The table's properties. `format-version` ('2' or '3') is not kept: it says which format version to
   * create, as it does for Iceberg Java's catalogs and REST servers. @default {}
   */
  properties?: Record<string, string>;
  /** @default a random uuid */
  uuid?: string;
  /** last-updated-ms. @default Date.now() */
  nowMs?: number;
}

function checkSpec(spec: PartitionSpec, schema: Schema): void {
  partitionType(spec, schema); // throws on a source id missing from the schema
  const names = new Set<string>();
  for (const f of spec.fields) {
    const source = findField(schema, f['source-id'])!;
    if (!canTransform(f.transform, source.type)) {
      throw new ValidationError(
        `partition field '${f.name}': ${f.transform} does not apply to '${source.name}'`,
      );
    }
    if (names.has(f.name)) throw new ValidationError(`partition field name '${f.name}' is used twice`);
    names.add(f.name);
  }
}

function checkSortOrder(order: SortOrder, schema: Schema): void {
  if (order.fields.length > 0 && order['order-id'] === 0) {
    throw new ValidationError('sort order id 0 is reserved for the unsorted order');
  }
  for (const f of order.fields) {
    const source = findField(schema, f['source-id']);
    if (!source) throw new ValidationError(`sort field source-id ${f['source-id']} is not in the schema`);
    if (!canTransform(f.transform, source.type)) {
      throw new ValidationError(`sort field: ${f.transform} does not apply to '${source.name}'`);
    }
  }
}

/** The reserved creation property naming the table's format version (Iceberg's `format-version`). */
export const FORMAT_VERSION_PROPERTY = 'format-version';

/**
 * The format version a creation's properties ask for, and the properties without it.
 * @throws ValidationError for a version floe does not write
 */
export function creationFormatVersion(properties: Record<string, string> = {}): {
  version: FormatVersion;
  properties: Record<string, string>;
} {
  const { [FORMAT_VERSION_PROPERTY]: asked, ...rest } = properties;
  if (asked === undefined) return { version: WRITTEN_FORMAT_VERSION, properties: rest };
  const version = WRITABLE_FORMAT_VERSIONS.find((v) => String(v) === asked.trim());
  if (version === undefined) {
    throw new ValidationError(
      `${FORMAT_VERSION_PROPERTY} '${asked}': floe creates format-version ${WRITABLE_FORMAT_VERSIONS.join(' or ')} tables`,
    );
  }
  return { version, properties: rest };
}

/**
 * Metadata for a new table with no snapshots: format version 2, or 3 when the properties say
 * `format-version: '3'` (then `next-row-id` 0: row lineage starts with the first commit);
 * last-sequence-number 0, last-column-id the schema's
 * highest field id, last-partition-id the spec's highest field id (999 when unpartitioned),
 * `current-snapshot-id: -1` (what Iceberg Java writes for "none"; parseTableMetadata also accepts null
 * or absence), empty refs and logs. Keys are in the order Java writes them.
 * @throws ValidationError when the schema is invalid, the spec or sort order does not fit it, or
 *   `format-version` is not 2 or 3
 */
export function newTableMetadata(opts: NewTableMetadataOptions): TableMetadata {
  if (opts.location.length === 0) throw new ValidationError('a table needs a location');
  const schema = parseSchema(opts.schema);
  const spec = opts.spec ?? { 'spec-id': 0, fields: [] };
  const sortOrder = opts.sortOrder ?? { 'order-id': 0, fields: [] };
  checkSpec(spec, schema);
  checkSortOrder(sortOrder, schema);
  const { version, properties } = creationFormatVersion(opts.properties);
  return {
    'format-version': version,
    'table-uuid': opts.uuid ?? randomUUID(),
    location: opts.location.replace(/\/+$/, ''),
    'last-sequence-number': 0,
    'last-updated-ms': opts.nowMs ?? Date.now(),
    'last-column-id': maxFieldId(schema),
    'current-schema-id': schema['schema-id'],
    schemas: [schema],
    'default-spec-id': spec['spec-id'],
    'partition-specs': [spec],
    'last-partition-id': spec.fields.reduce((max, f) => Math.max(max, f['field-id']), 999),
    'default-sort-order-id': sortOrder['order-id'],
    'sort-orders': [sortOrder],
    properties,
    'current-snapshot-id': -1n,
    refs: {},
    snapshots: [],
    statistics: [],
    'partition-statistics': [],
    'snapshot-log': [],
    'metadata-log': [],
    ...(version >= 3 ? { 'next-row-id': 0 } : {}),
  };
}

/** metadata.json text (2-space indented). Never throws for metadata made of JSON values. */
export function serializeTableMetadata(md: TableMetadata): string {
  return stringifyJson(md, 2);
}

/** The schema with `id`, or undefined. */
export function schemaById(md: TableMetadata, id: number): Schema | undefined {
  return md.schemas.find((s) => s['schema-id'] === id);
}

/** The current schema. @throws ValidationError when current-schema-id names no schema */
export function currentSchema(md: TableMetadata): Schema {
  const schema = schemaById(md, md['current-schema-id']);
  if (!schema) throw new ValidationError(`current-schema-id ${md['current-schema-id']} names no schema`);
  return schema;
}

/**
 * The partition spec with `id`. Manifests name their spec by id, so a missing one is corrupt metadata.
 * @throws ValidationError when no spec has that id
 */
export function specById(md: TableMetadata, id: number): PartitionSpec {
  const spec = md['partition-specs'].find((s) => s['spec-id'] === id);
  if (!spec) throw new ValidationError(`table ${md['table-uuid']} has no partition spec ${id}`);
  return spec;
}

/** The default partition spec. @throws ValidationError when default-spec-id names no spec */
export function defaultSpec(md: TableMetadata): PartitionSpec {
  return specById(md, md['default-spec-id']);
}

/** The sort order with `id`, or undefined. */
export function sortOrderById(md: TableMetadata, id: number): SortOrder | undefined {
  return md['sort-orders'].find((o) => o['order-id'] === id);
}

/** The snapshot with `id`, or undefined (never existed, or expired). */
export function snapshotById(md: TableMetadata, id: SnapshotId): Snapshot | undefined {
  return md.snapshots.find((s) => s['snapshot-id'] === id);
}

/**
 * The snapshot the main branch points at (refs.main, else current-snapshot-id for metadata without
 * refs), or undefined for a table with no snapshot yet (-1 or null).
 * @throws ValidationError when the id points at no snapshot
 */
export function currentSnapshot(md: TableMetadata): Snapshot | undefined {
  const id = md.refs.main?.['snapshot-id'] ?? md['current-snapshot-id'];
  if (id === undefined || id === null || id === -1n) return undefined;
  const snapshot = snapshotById(md, id);
  if (!snapshot) throw new ValidationError(`the current snapshot ${id} is not in the table's snapshots`);
  return snapshot;
}

/**
 * Whether the table's current snapshot has live data files (its summary's running total). A snapshot
 * without the total (not written by floe) counts as having some: deletes stay.
 * @throws as currentSnapshot
 */
export function hasDataFiles(md: TableMetadata): boolean {
  const snapshot = currentSnapshot(md);
  return snapshot !== undefined && snapshot.summary['total-data-files'] !== '0';
}

/**
 * A snapshot and its ancestors, newest first, following parent-snapshot-id until a parent is absent
 * (the first snapshot, or one expired). Starts from `snapshotId`, or the current snapshot when omitted;
 * empty when that snapshot does not exist. Never throws (a parent cycle, which valid metadata cannot
 * have, ends the walk).
 */
export function ancestors(md: TableMetadata, snapshotId?: SnapshotId): Snapshot[] {
  const byId = new Map(md.snapshots.map((s) => [s['snapshot-id'], s]));
  let next: Snapshot | undefined;
  if (snapshotId === undefined) {
    const id = md.refs.main?.['snapshot-id'] ?? md['current-snapshot-id'];
    next = id === undefined || id === null ? undefined : byId.get(id);
  } else {
    next = byId.get(snapshotId);
  }
  const chain: Snapshot[] = [];
  const seen = new Set<SnapshotId>();
  while (next && !seen.has(next['snapshot-id'])) {
    chain.push(next);
    seen.add(next['snapshot-id']);
    const parent = next['parent-snapshot-id'];
    next = parent === undefined || parent === null ? undefined : byId.get(parent);
  }
  return chain;
}
