/**
 * The merged table for any Iceberg engine: the table's current metadata plus ONE
 * synthetic snapshot on top — parent = the current snapshot, sequence number = last + 1 — whose
 * manifest list holds the current manifests and one manifest of Parquet files holding the hotset
 * (and, for CDC tables, equality-delete files for the keys the tail replaces or deletes: at the new
 * sequence number they reach the cold rows only, never the tail's own rows). `refs.main` points at it.
 *
 * Nothing is committed: the files and the metadata JSON go to a cache folder named by a hash of what
 * they hold (table, snapshot, view schema, offset ranges), `<cache root>/<key>/`, by floe's own writers
 * (write-rows / write-changes, the snapshot producer). A cache folder is reused while the tail is the
 * same, and swept after its TTL by the server; orphan removal leaves it alone while it is fresh
 * (io/confined-delete.ts). The metadata file is not named `<dir>/metadata/*.metadata.json`, so no tool
 * takes the cache folder for a table of its own.
 */
import { createHash } from 'node:crypto';
import type { LoadedTable } from '../catalog/catalog.js';
import { applyUpdates } from '../catalog/apply-updates.js';
import type { TableUpdate } from '../catalog/requirements-updates.js';
import { planDeleteScope } from '../cdc/delete-scope.js';
import { writeChanges } from '../cdc/write-changes.js';
import { LIVE_CACHE_FOLDER } from '../io/confined-delete.js';
import { joinLocation } from '../io/location.js';
import { currentSnapshot, serializeTableMetadata } from '../spec/metadata.js';
import type { DataFile, Snapshot, SnapshotOperation, TableMetadata } from '../spec/types.js';
import { prepareSnapshot } from '../table/snapshot-producer.js';
import { writeRows } from '../table/write-rows.js';
import { freshnessSummary } from './freshness.js';
import { describeHotRanges } from './hot-ranges.js';
import { describeMismatches } from './identity-check.js';
import type { Hotset } from './read-hotset.js';

/** Summary keys of the live snapshot. */
export const LIVE_KEY = 'floe.live';
export const LIVE_OFFSETS_KEY = 'floe.live-offsets';
/** The partitions whose broker records are not those the table committed (identity-check.ts). */
export const LIVE_IDENTITY_MISMATCH_KEY = 'floe.live.identity-mismatch';

export interface LiveVersion {
  metadata: TableMetadata;
  /** The live metadata JSON in the cache (the committed one when the tail adds nothing). */
  metadataLocation: string;
  /** The live snapshot; undefined when the tail maps to nothing (the committed table is served). */
  snapshot?: Snapshot;
  cacheKey?: string;
  cacheDir?: string;
}

/** `<table location>/floe-live`: readable by every engine that reads the table's own files. */
export function defaultCacheRoot(table: LoadedTable): string {
  return joinLocation(table.metadata.location, LIVE_CACHE_FOLDER);
}

/** The cache key: what the files hold, so an unchanged tail finds its folder again. Never throws. */
export function liveCacheKey(table: LoadedTable, hotset: Hotset): string {
  const md = table.metadata;
  const text = JSON.stringify({
    table: md['table-uuid'],
    snapshot: String(currentSnapshot(md)?.['snapshot-id'] ?? 'none'),
    schema: hotset.mapped.schema['schema-id'],
    fields: hotset.mapped.schema.fields.length,
    ranges: describeHotRanges(hotset.ranges),
  });
  return createHash('sha256').update(text).digest('hex').slice(0, 24);
}

function hasDataFiles(md: TableMetadata): boolean {
  const snapshot = currentSnapshot(md);
  return snapshot !== undefined && snapshot.summary['total-data-files'] !== '0';
}

/** The hot files, written into the cache folder as files of `base` (whose location is that folder). */
async function writeHotFiles(
  base: LoadedTable,
  hotset: Hotset,
): Promise<{ data: DataFile[]; deletes: DataFile[]; preUpdates: TableUpdate[] }> {
  const mapped = hotset.mapped;
  const schema = mapped.schema;
  if (mapped.mode === 'append') {
    const data = mapped.rows.length ? await writeRows(base, mapped.rows, { filePrefix: 'live', schema }) : [];
    return { data, deletes: [], preUpdates: [] };
  }
  // As ingestion: a table without data files has no older rows for deletes to reach.
  const empty = !hasDataFiles(base.metadata);
  const finals = empty ? mapped.finals.map((f) => ({ ...f, deleteExisting: false })) : mapped.finals;
  const keyIds = mapped.key.map((c) => c.id);
  const scope = finals.some((f) => f.deleteExisting) ? await planDeleteScope(base, keyIds) : undefined;
  const written = await writeChanges(base, finals, mapped.key, scope, { filePrefix: 'live', schema });
  return { data: written.dataFiles, deletes: written.deleteFiles, preUpdates: scope?.preUpdates ?? [] };
}

function operationOf(data: DataFile[], deletes: DataFile[]): SnapshotOperation {
  // Floe's own rule for a CDC commit (commit-batch.ts): deletes make it an overwrite or a delete.
  if (deletes.length === 0) return 'append';
  return data.length === 0 ? 'delete' : 'overwrite';
}

/**
 * Writes the live version of `table` for its hotset into `<cacheRoot>/<key>/` (nothing is committed).
 * @throws whatever writing throws (TransientIOError, ...); NotFoundError from reading the manifest list
 */
export async function writeLiveVersion(
  table: LoadedTable,
  hotset: Hotset,
  cacheRoot: string,
): Promise<LiveVersion> {
  const mapped = hotset.mapped;
  const nothing = mapped.mode === 'append' ? mapped.rows.length === 0 : mapped.finals.length === 0;
  if (nothing) return { metadata: table.metadata, metadataLocation: table.metadataLocation };
  const cacheKey = liveCacheKey(table, hotset);
  const cacheDir = joinLocation(cacheRoot, cacheKey);
  // The table seen from its cache folder: every writer puts its files under `location`.
  const base: LoadedTable = { ...table, metadata: { ...table.metadata, location: cacheDir } };
  const files = await writeHotFiles(base, hotset);
  const prepared = await prepareSnapshot(base, {
    operation: operationOf(files.data, files.deletes),
    addedDataFiles: files.data,
    addedDeleteFiles: files.deletes,
    summary: {
      [LIVE_KEY]: 'true',
      [LIVE_OFFSETS_KEY]: JSON.stringify(describeHotRanges(hotset.ranges)),
      ...freshnessSummary(hotset.freshness),
      ...(hotset.identityMismatches.length > 0
        ? { [LIVE_IDENTITY_MISMATCH_KEY]: describeMismatches(hotset.identityMismatches) }
        : {}),
    },
    preUpdates: [...mapped.schemaUpdates, ...files.preUpdates],
  });
  // Applied to the table's own metadata: its location stays the table's, only the snapshot is new.
  const metadata = applyUpdates(table.metadata, prepared.updates);
  const metadataLocation = joinLocation(cacheDir, `live-${prepared.snapshot['snapshot-id']}.metadata.json`);
  await table.io.write(metadataLocation, new TextEncoder().encode(serializeTableMetadata(metadata)));
  return { metadata, metadataLocation, snapshot: prepared.snapshot, cacheKey, cacheDir };
}
