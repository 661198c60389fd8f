/**
 * The merged table for any Iceberg engine: the table's current metadata plus ONE
 * synthetic snapshot on top — parent = the current snapshot, sequence number = last + 1 — whose
 * manifest list holds the current manifests and one manifest of Parquet files holding the hotset
 * (and, for CDC tables, delete files for the cold rows the tail replaces or deletes: position deletes
 * naming them — deletion vectors on a v3 table, each replacing its cold data file's vector, which the
 * live snapshot drops as a commit would (table/actions/row-delta.ts) — or equality deletes under
 * `floe.delete-mode=equality`; either way they reach the cold rows only, never the tail's own rows:
 * write-tail-changes.ts). `refs.main` points at it.
 *
 * Nothing is committed: the files and the metadata JSON go to a cache folder named by a hash of what
 * they hold (table, snapshot, view schema, delete form, offset ranges), `<cache root>/<key>/`, by floe's
 * own writers (write-rows, delete-positions or write-changes, the row-delta action). A cache
 * folder is reused while the tail is the same, and swept after its TTL by the server; orphan removal
 * leaves it alone while it is fresh (io/confined-delete.ts). The metadata file is not named `<dir>/metadata/*.metadata.json`, so no tool
 * takes the cache folder for a table of its own.
 */
import { createHash } from 'node:crypto';
import type { LoadedTable } from '../catalog/catalog.js';
import { applyUpdates } from '../catalog/apply-updates.js';
import type { RowLocator } from '../cdc/locate-rows.js';
import { LIVE_CACHE_FOLDER } from '../io/confined-delete.js';
import { joinLocation } from '../io/location.js';
import { currentSnapshot, serializeTableMetadata } from '../spec/metadata.js';
import type { Snapshot, TableMetadata } from '../spec/types.js';
import { rowDelta } from '../table/actions/row-delta.js';
import { writeRows } from '../table/write-rows.js';
import { freshnessSummary } from './freshness.js';
import { describeHotRanges } from './hot-ranges.js';
import { describeMismatches } from './identity-check.js';
import type { Hotset } from './read-hotset.js';
import { type TailFiles, tailDeleteMode, writeTailChanges } from './write-tail-changes.js';

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

/**
 * The cache key: what the files hold, so an unchanged tail finds its folder again.
 * @throws ValidationError for a CDC table with a malformed `floe.delete-mode`
 */
export function liveCacheKey(table: LoadedTable, hotset: Hotset): string {
  const md = table.metadata;
  const text = JSON.stringify({
    table: md['table-uuid'],
    snapshot: String(currentSnapshot(md)?.['snapshot-id'] ?? 'none'),
    schema: hotset.mapped.schema['schema-id'],
    fields: hotset.mapped.schema.fields.length,
    // A property change makes no snapshot, yet the tail's delete files change form.
    deletes: hotset.mapped.mode === 'append' ? 'none' : tailDeleteMode(md),
    ranges: describeHotRanges(hotset.ranges),
  });
  return createHash('sha256').update(text).digest('hex').slice(0, 24);
}

/** The hot files, written into the cache folder as files of `base` (whose location is that folder). */
async function writeHotFiles(
  table: LoadedTable,
  base: LoadedTable,
  hotset: Hotset,
  locator: RowLocator | undefined,
): Promise<TailFiles> {
  const mapped = hotset.mapped;
  const schema = mapped.schema;
  if (mapped.mode === 'append') {
    const data = mapped.rows.length ? await writeRows(base, mapped.rows, { filePrefix: 'live', schema }) : [];
    return { data, deletes: [], replaced: [], preUpdates: [] };
  }
  return writeTailChanges(table, base, { finals: mapped.finals, key: mapped.key, schema }, locator);
}

export interface WriteLiveVersionOptions {
  /** Finds the cold rows a CDC tail replaces, for position deletes. @default scanRowLocator */
  locator?: RowLocator;
}

/**
 * Writes the live version of `table` for its hotset into `<cacheRoot>/<key>/` (nothing is committed).
 * @throws whatever writing throws (TransientIOError, ...); NotFoundError from reading the manifest list;
 *   ValidationError for a malformed `floe.delete-mode`; whatever the locator throws
 */
export async function writeLiveVersion(
  table: LoadedTable,
  hotset: Hotset,
  cacheRoot: string,
  options: WriteLiveVersionOptions = {},
): Promise<LiveVersion> {
  const mapped = hotset.mapped;
  const nothing = mapped.mode === 'append' ? mapped.rows.length === 0 : mapped.finals.length === 0;
  if (nothing) return { metadata: table.metadata, metadataLocation: table.metadataLocation };
  const cacheKey = liveCacheKey(table, hotset);
  const cacheDir = joinLocation(cacheRoot, cacheKey);
  // The table seen from its cache folder: every writer puts its files under `location`.
  const base: LoadedTable = { ...table, metadata: { ...table.metadata, location: cacheDir } };
  const files = await writeHotFiles(table, base, hotset, options.locator);
  // Floe's own rule for a CDC commit: deletes make it an overwrite or a delete.
  const { change: prepared } = await rowDelta(base, {
    dataFiles: files.data,
    deleteFiles: files.deletes,
    removedDeleteFiles: files.replaced,
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
