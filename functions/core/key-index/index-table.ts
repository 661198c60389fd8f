/**
 * The key index table of a keyed table: `<namespace>.<name>__keys`, an ordinary Iceberg table (any
 * engine reads it) that is an append-only, latest-wins log of where each key's live row is.
 *
 * One row (an entry) says: in the main table's snapshot with sequence number `seq`, the row at
 * `file_path`/`pos` holding `key` (record-key.ts text) became live, or died (index-entries.ts). Entries
 * are never deleted by writers, so two writers appending never conflict on content; the view of them
 * is latest-wins per key (index-entries.ts). Partitioned by Iceberg's `bucket[N](key)`, so a lookup reads only the
 * buckets its keys hash to, and so does any engine's filter.
 *
 * What the index covers lives in each index snapshot's summary: the main table's snapshot id and
 * sequence number (and table uuid), written by every index commit and never moved back except by a
 * rebuild (catch-up.ts says why that is sound).
 */
import type { Catalog, LoadedTable } from '../catalog/catalog.js';
import { NoSuchTableError, ValidationError } from '../errors.js';
import { currentSnapshot } from '../spec/metadata.js';
import { parsePartitionExpression } from '../spec/partition-spec.js';
import type { Schema, TableIdentifier } from '../spec/types.js';

/** The suffix of an index table's name. */
export const INDEX_SUFFIX = '__keys';
/** Table property on the index: how many key buckets a new index is partitioned into. */
export const BUCKETS_PROPERTY = 'floe.index.buckets';
export const DEFAULT_BUCKETS = 16;

/** Summary keys of an index snapshot: what main snapshot it covers. */
export const COVERS_SNAPSHOT = 'floe.index.main-snapshot-id';
export const COVERS_SEQUENCE = 'floe.index.main-sequence-number';
export const COVERS_TABLE = 'floe.index.main-table-uuid';

export const INDEX_SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'key', required: true, type: 'string' },
    { id: 2, name: 'file_path', required: true, type: 'string' },
    { id: 3, name: 'pos', required: true, type: 'long' },
    { id: 4, name: 'live', required: true, type: 'boolean' },
    { id: 5, name: 'seq', required: true, type: 'long' },
    // The change version of the entry (the row's or the deleting change's `_kafka`), when the main table has lineage.
    { id: 6, name: 'topic', required: false, type: 'string' },
    { id: 7, name: 'partition', required: false, type: 'int' },
    { id: 8, name: 'offset', required: false, type: 'long' },
  ],
};

/** The main snapshot an index snapshot covers. */
export interface Coverage {
  snapshotId: bigint;
  sequenceNumber: number;
  tableUuid: string;
}

/** The index table of `id`. Never throws. */
export function indexIdentifier(id: TableIdentifier): TableIdentifier {
  return { namespace: id.namespace, name: `${id.name}${INDEX_SUFFIX}` };
}

/** Whether a table name is an index's. Never throws. */
export function isIndexName(name: string): boolean {
  return name.endsWith(INDEX_SUFFIX);
}

/**
 * What the index's current snapshot covers; null when it has no snapshot or its summary lacks the
 * marker (another engine committed to it: the index is then treated as covering nothing).
 * Never throws.
 */
export function readCoverage(index: LoadedTable): Coverage | null {
  const summary = currentSnapshot(index.metadata)?.summary;
  const id = summary?.[COVERS_SNAPSHOT];
  const seq = summary?.[COVERS_SEQUENCE];
  const uuid = summary?.[COVERS_TABLE];
  if (id === undefined || seq === undefined || uuid === undefined) return null;
  if (!/^-?\d+$/.test(id) || !/^\d+$/.test(seq)) return null;
  return { snapshotId: BigInt(id), sequenceNumber: Number(seq), tableUuid: uuid };
}

/** The summary properties that say an index snapshot covers `coverage`. Never throws. */
export function coverageSummary(coverage: Coverage): Record<string, string> {
  return {
    [COVERS_SNAPSHOT]: String(coverage.snapshotId),
    [COVERS_SEQUENCE]: String(coverage.sequenceNumber),
    [COVERS_TABLE]: coverage.tableUuid,
  };
}

/**
 * The index table of `mainId`, or undefined when it does not exist.
 * @throws whatever the catalog throws, but NoSuchTableError
 */
export async function loadIndex(catalog: Catalog, mainId: TableIdentifier): Promise<LoadedTable | undefined> {
  try {
    return await catalog.loadTable(indexIdentifier(mainId));
  } catch (error) {
    if (error instanceof NoSuchTableError) return undefined;
    throw error;
  }
}

/**
 * The index table of `mainId`, created (empty, covering nothing) when missing.
 * @throws ValidationError for a main table name that already ends in the index suffix
 * @throws whatever the catalog throws
 */
export async function loadOrCreateIndex(
  catalog: Catalog,
  mainId: TableIdentifier,
  buckets = DEFAULT_BUCKETS,
): Promise<LoadedTable> {
  if (isIndexName(mainId.name))
    throw new ValidationError(`${mainId.name} is a key index itself: an index has no index`);
  const existing = await loadIndex(catalog, mainId);
  if (existing) return existing;
  const id = indexIdentifier(mainId);
  try {
    return await catalog.createTable(id, {
      schema: INDEX_SCHEMA,
      partitionSpec: parsePartitionExpression(`bucket(${buckets}, key)`, INDEX_SCHEMA),
      properties: { [BUCKETS_PROPERTY]: String(buckets) },
    });
  } catch (error) {
    // Another writer created it first: theirs is as good as ours.
    if (await catalog.tableExists(id)) return catalog.loadTable(id);
    throw error;
  }
}

/** Main table property: `off` keeps a position-mode table without a key index (lookups scan). */
export const KEY_INDEX_PROPERTY = 'floe.key-index';

/**
 * Whether a main table keeps a key index: position-delete tables do unless `floe.key-index=off`.
 * @throws ValidationError for a `floe.key-index` value other than on / off
 */
export function keyIndexEnabled(properties: Record<string, string> | undefined): boolean {
  const value = properties?.[KEY_INDEX_PROPERTY] ?? 'on';
  if (value !== 'on' && value !== 'off')
    throw new ValidationError(`${KEY_INDEX_PROPERTY} must be 'on' or 'off', got '${value}'`);
  return value === 'on';
}
