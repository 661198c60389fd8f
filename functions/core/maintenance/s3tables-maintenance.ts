/**
 * Amazon S3 Tables runs its own compaction, snapshot expiry and unreferenced-file removal, and its table
 * buckets refuse DeleteObject and ListObjects. For its tables, floe's maintenance configures S3 Tables'
 * table-level maintenance (`icebergCompaction` target file size, `icebergSnapshotManagement` retention)
 * from the table's properties and the run's retention, instead of deleting files itself.
 * Unreferenced-file removal is a table-bucket setting (on by default), left as it is.
 *
 * The adapter for the S3 Tables maintenance API: the only file here that talks to @aws-sdk/client-s3tables.
 */
import {
  GetTableMaintenanceConfigurationCommand,
  type GetTableMaintenanceConfigurationCommandOutput,
  PutTableMaintenanceConfigurationCommand,
  type TableMaintenanceConfigurationValue,
} from '@aws-sdk/client-s3tables';
import type { Catalog } from '../catalog/catalog.js';
import { formatIdentifier } from '../catalog/catalog.js';
import { LakeError, TransientIOError } from '../errors.js';
import type { TableIdentifier } from '../spec/types.js';
import type { MaintenanceSettings } from './maintenance-settings.js';

/** What the two calls need of an S3TablesClient (a stub in tests: moto does not implement them). */
export interface S3TablesMaintenanceClient {
  send(
    command: GetTableMaintenanceConfigurationCommand | PutTableMaintenanceConfigurationCommand,
  ): Promise<unknown>;
}

export interface S3TablesAccess {
  client: S3TablesMaintenanceClient;
  tableBucketArn: string;
}

export interface S3TablesMaintenanceResult {
  status: 'configured' | 'unchanged';
  targetFileSizeMB: number;
  minSnapshotsToKeep: number;
  maxSnapshotAgeHours: number;
  /** The maintenance types written (those whose configuration differed). */
  changed: string[];
}

/** S3 Tables accepts a compaction target between 64 and 512 MB. */
const MIN_TARGET_MB = 64;
const MAX_TARGET_MB = 512;

/** The S3 Tables client and bucket behind a catalog, when it is the S3 Tables catalog. Never throws. */
export function s3TablesAccessOf(catalog: Catalog): S3TablesAccess | undefined {
  const c = catalog as Partial<S3TablesAccess> & Catalog;
  if (c.name !== 's3tables' || !c.client || typeof c.tableBucketArn !== 'string') return undefined;
  return { client: c.client, tableBucketArn: c.tableBucketArn };
}

/** Whether a table location is in an S3 Tables table bucket (`s3://<id>--table-s3/...`). Never throws. */
export function isS3TablesLocation(location: string): boolean {
  return /^s3a?:\/\/[^/]+--table-s3(?:\/|$)/i.test(location);
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function mapError(error: unknown, what: string): LakeError {
  const status = (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
  if (status === undefined || status >= 500 || status === 429) {
    return new TransientIOError(`${what} failed: ${describe(error)}`, { cause: error });
  }
  return new LakeError(`${what} failed: ${describe(error)}`, { cause: error });
}

/**
 * Sets the table's S3 Tables maintenance to match floe's settings, writing only what differs.
 * @throws TransientIOError (throttling, 5xx, network) or LakeError (access denied, no such table, ...)
 */
export async function configureS3TablesMaintenance(
  access: S3TablesAccess,
  id: TableIdentifier,
  settings: MaintenanceSettings,
): Promise<S3TablesMaintenanceResult> {
  const table = { tableBucketARN: access.tableBucketArn, namespace: id.namespace.join('.'), name: id.name };
  const what = `S3 Tables maintenance configuration of ${formatIdentifier(id)}`;
  const targetFileSizeMB = Math.min(
    MAX_TARGET_MB,
    Math.max(MIN_TARGET_MB, Math.round(settings.targetFileSizeBytes / (1024 * 1024))),
  );
  const maxSnapshotAgeHours = Math.max(1, Math.ceil(settings.maxSnapshotAgeMs / 3_600_000));
  const wanted: Record<
    'icebergCompaction' | 'icebergSnapshotManagement',
    TableMaintenanceConfigurationValue
  > = {
    icebergCompaction: { status: 'enabled', settings: { icebergCompaction: { targetFileSizeMB } } },
    icebergSnapshotManagement: {
      status: 'enabled',
      settings: {
        icebergSnapshotManagement: { minSnapshotsToKeep: settings.minSnapshotsToKeep, maxSnapshotAgeHours },
      },
    },
  };
  let current: GetTableMaintenanceConfigurationCommandOutput['configuration'];
  try {
    const out = (await access.client.send(
      new GetTableMaintenanceConfigurationCommand(table),
    )) as GetTableMaintenanceConfigurationCommandOutput;
    current = out.configuration;
  } catch (error) {
    throw mapError(error, `reading the ${what}`);
  }
  const changed: string[] = [];
  for (const type of ['icebergCompaction', 'icebergSnapshotManagement'] as const) {
    const have = current?.[type];
    const want = wanted[type];
    // Compare only the fields floe sets: S3 Tables may report others (a compaction strategy, ...).
    const same =
      have !== undefined &&
      have.status === want.status &&
      JSON.stringify(pick(have.settings?.[type], want.settings?.[type])) ===
        JSON.stringify(want.settings?.[type]);
    if (same) continue;
    try {
      await access.client.send(new PutTableMaintenanceConfigurationCommand({ ...table, type, value: want }));
    } catch (error) {
      throw mapError(error, `writing the ${what} (${type})`);
    }
    changed.push(type);
  }
  return {
    status: changed.length > 0 ? 'configured' : 'unchanged',
    targetFileSizeMB,
    minSnapshotsToKeep: settings.minSnapshotsToKeep,
    maxSnapshotAgeHours,
    changed,
  };
}

/** The keys of `like` taken from `from`, in `like`'s order. */
function pick(from: object | undefined, like: object | undefined): Record<string, unknown> {
  const source = (from ?? {}) as Record<string, unknown>;
  return Object.fromEntries(Object.keys(like ?? {}).map((k) => [k, source[k]]));
}
