import { ValidationError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import type { PartitionSpec, Schema, SortOrder, TableIdentifier, TableMetadata } from '../spec/types.js';
import type { TableRequirement, TableUpdate } from './requirements-updates.js';

/** A table as a catalog hands it out: its current metadata, where that metadata lives, and its storage. */
export interface LoadedTable {
  identifier: TableIdentifier;
  metadata: TableMetadata;
  metadataLocation: string;
  io: FileIO;
  /**
   * S3 Tables: the version token of the pointer this metadata was read at, so a commit on this table
   * can swap conditionally on it without reading the pointer again.
   */
  versionToken?: string;
}

export interface CreateTableRequest {
  schema: Schema;
  partitionSpec?: PartitionSpec;
  sortOrder?: SortOrder;
  properties?: Record<string, string>;
  /** Defaults to the catalog's warehouse location for the table. */
  location?: string;
}

/** What floe asks of a catalog that maintains its tables itself (from table properties and the run). */
export interface TableMaintenanceSettings {
  /** `write.target-file-size-bytes`: what compaction should write. */
  targetFileSizeBytes: number;
  /** Snapshots always kept. */
  minSnapshotsToKeep: number;
  /** Snapshots older than this may be expired. */
  maxSnapshotAgeMs: number;
}

/** What configuring a catalog's own maintenance did (`unsupported`: the endpoint does not offer it). */
export type TableMaintenanceResult =
  | {
      status: 'configured' | 'unchanged';
      targetFileSizeMB: number;
      minSnapshotsToKeep: number;
      maxSnapshotAgeHours: number;
      /** The maintenance types written (those whose configuration differed). */
      changed: string[];
    }
  | { status: 'unsupported'; reason: string };

/** The maintenance a catalog runs itself (S3 Tables: compaction, snapshot expiry, unreferenced files). */
export interface CatalogMaintenance {
  /**
   * Sets the table's maintenance to match `settings`, writing only what differs. An endpoint that does
   * not implement the maintenance API (an emulator) is `unsupported`, not an error.
   * @throws TransientIOError (throttling, 5xx, network); LakeError (access denied, no such table, ...)
   */
  configure(id: TableIdentifier, settings: TableMaintenanceSettings): Promise<TableMaintenanceResult>;
}

/**
 * A catalog translates requirements + updates to its own wire format and maps its errors.
 * It never retries a commit itself: the one commit loop (table/commit-loop.ts) does.
 */
export interface Catalog {
  readonly name: string;
  /** @throws NoSuchTableError */
  loadTable(id: TableIdentifier): Promise<LoadedTable>;
  tableExists(id: TableIdentifier): Promise<boolean>;
  /** @throws TableAlreadyExistsError */
  createTable(id: TableIdentifier, request: CreateTableRequest): Promise<LoadedTable>;
  /**
   * Checks the requirements against the current metadata, applies the updates, and swaps the
   * pointer atomically.
   *
   * `base` is the table the change was prepared on, as this catalog loaded or committed it. A catalog
   * that applies updates itself may take it as the current metadata instead of reading the table again:
   * its swap is conditional on that version still being current, so a stale base cannot land (it
   * fails with CommitFailedError and the commit loop reloads).
   * @throws CommitFailedError when a requirement failed or the swap lost a race (did not land)
   * @throws CommitStateUnknownError when the swap may have landed
   */
  commitTable(
    id: TableIdentifier,
    requirements: TableRequirement[],
    updates: TableUpdate[],
    base?: LoadedTable,
  ): Promise<LoadedTable>;
  /**
   * Whether `table` is still the table's current version, checked with one small request (cheaper
   * than loadTable). Catalogs without such a check leave it out: callers then load.
   */
  isCurrent?(table: LoadedTable): Promise<boolean>;
  listTables(namespace: string[]): Promise<TableIdentifier[]>;
  dropTable?(id: TableIdentifier): Promise<void>;
  /**
   * Present when the catalog maintains its tables itself: floe's maintenance then compacts, expires and
   * deletes nothing there, and configures this instead.
   */
  readonly maintenance?: CatalogMaintenance;
}

export function formatIdentifier(id: TableIdentifier): string {
  return [...id.namespace, id.name].join('.');
}

/** `ns.name` or `a.b.name` → identifier. @throws ValidationError for one part only, or an empty part */
export function parseIdentifier(text: string): TableIdentifier {
  const parts = text.split('.');
  if (parts.length < 2 || parts.some((p) => p.length === 0)) {
    throw new ValidationError(`table identifier '${text}' must look like NAMESPACE.TABLE`);
  }
  return { namespace: parts.slice(0, -1), name: parts[parts.length - 1] };
}
