/**
 * Amazon S3 Tables runs its own compaction, snapshot expiry and unreferenced-file removal, and its table
 * buckets refuse DeleteObject and ListObjects. The S3 Tables catalog's maintenance capability sets S3
 * Tables' table-level maintenance (`icebergCompaction` target file size, `icebergSnapshotManagement`
 * retention) from floe's settings, instead of floe deleting files itself. Unreferenced-file removal is a
 * table-bucket setting (on by default), left as it is.
 *
 * An endpoint that does not implement Get/PutTableMaintenanceConfiguration (moto answers its 404 page;
 * an emulator may answer 501) is reported `unsupported`: the rest of the run goes on. Access denied,
 * throttling and 5xx stay errors.
 */
import {
  GetTableMaintenanceConfigurationCommand,
  type GetTableMaintenanceConfigurationCommandOutput,
  PutTableMaintenanceConfigurationCommand,
  type TableMaintenanceConfigurationValue,
} from '@aws-sdk/client-s3tables';
import { LakeError, TransientIOError } from '../errors.js';
import { classifyAwsError } from '../io/aws-errors.js';
import type { TableIdentifier } from '../spec/types.js';
import {
  type CatalogMaintenance,
  formatIdentifier,
  type TableMaintenanceResult,
  type TableMaintenanceSettings,
} from './catalog.js';

/** What the two calls need of an S3TablesClient (a stub in tests). */
export interface S3TablesMaintenanceClient {
  send(
    command: GetTableMaintenanceConfigurationCommand | PutTableMaintenanceConfigurationCommand,
  ): Promise<unknown>;
}

/** S3 Tables accepts a compaction target between 64 and 512 MB. */
const MIN_TARGET_MB = 64;
const MAX_TARGET_MB = 512;

type MaintenanceType = 'icebergCompaction' | 'icebergSnapshotManagement';
const TYPES: readonly MaintenanceType[] = ['icebergCompaction', 'icebergSnapshotManagement'];

/**
 * An operation the endpoint does not implement (not retryable: the endpoint will not grow it): carried
 * out of the calls, then a result, never thrown on.
 */
class UnsupportedEndpointError extends LakeError {}

/** @see the module comment. */
export class S3TablesMaintenance implements CatalogMaintenance {
  constructor(
    private readonly client: S3TablesMaintenanceClient,
    private readonly tableBucketArn: string,
  ) {}

  /** @throws TransientIOError (throttling, 5xx, network); LakeError (access denied, no such table, ...) */
  async configure(id: TableIdentifier, settings: TableMaintenanceSettings): Promise<TableMaintenanceResult> {
    try {
      return await this.configureTable(id, settings);
    } catch (error) {
      if (error instanceof UnsupportedEndpointError) return { status: 'unsupported', reason: error.message };
      throw error;
    }
  }

  private async configureTable(
    id: TableIdentifier,
    settings: TableMaintenanceSettings,
  ): Promise<TableMaintenanceResult> {
    const table = { tableBucketARN: this.tableBucketArn, namespace: id.namespace.join('.'), name: id.name };
    const what = `S3 Tables maintenance configuration of ${formatIdentifier(id)}`;
    const targetFileSizeMB = Math.min(
      MAX_TARGET_MB,
      Math.max(MIN_TARGET_MB, Math.round(settings.targetFileSizeBytes / (1024 * 1024))),
    );
    const maxSnapshotAgeHours = Math.max(1, Math.ceil(settings.maxSnapshotAgeMs / 3_600_000));
    const wanted: Record<MaintenanceType, TableMaintenanceConfigurationValue> = {
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
      const out = (await this.client.send(
        new GetTableMaintenanceConfigurationCommand(table),
      )) as GetTableMaintenanceConfigurationCommandOutput;
      current = out.configuration;
    } catch (error) {
      throw mapError(error, 'GetTableMaintenanceConfiguration', `reading the ${what}`);
    }
    const changed: string[] = [];
    for (const type of TYPES) {
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
        await this.client.send(new PutTableMaintenanceConfigurationCommand({ ...table, type, value: want }));
      } catch (error) {
        throw mapError(error, 'PutTableMaintenanceConfiguration', `writing the ${what} (${type})`);
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
}

function mapError(error: unknown, operation: string, what: string): Error {
  const aws = classifyAwsError(error);
  if (aws.kind === 'unsupported') {
    return new UnsupportedEndpointError(
      `S3 Tables maintenance configuration not available from this endpoint: ${operation} answered ${aws.detail}`,
    );
  }
  if (aws.retryable) return new TransientIOError(`${what} failed: ${aws.detail}`, { cause: error });
  return new LakeError(`${what} failed: ${aws.detail}`, { cause: error });
}

/** The keys of `like` taken from `from`, in `like`'s order. */
function pick(from: object | undefined, like: object | undefined): Record<string, unknown> {
  const source = (from ?? {}) as Record<string, unknown>;
  return Object.fromEntries(Object.keys(like ?? {}).map((k) => [k, source[k]]));
}
