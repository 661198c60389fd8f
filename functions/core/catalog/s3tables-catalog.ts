/**
 * Amazon S3 Tables as a catalog, through its control-plane API (@aws-sdk/client-s3tables). Metadata and
 * data files are written by floe under the table's `warehouseLocation` through S3; S3 Tables only keeps the
 * pointer to the current metadata.json.
 *
 * COMMIT POINT: `UpdateTableMetadataLocation(versionToken, metadataLocation)`, conditional on the version
 * token read with the base metadata. Before it succeeds, readers see metadata N; after, N+1. The new
 * metadata.json is a fresh object (`<NNNNN>-<uuid>.metadata.json`, written if absent, never overwritten)
 * and is invisible until the pointer names it.
 *   - did not land → CommitFailedError: a failed requirement; ConflictException (409, the token moved) on
 *     the first attempt; any failure before the swap request (reading the base, writing the new file).
 *   - may have landed → CommitStateUnknownError: 5xx, timeouts and network errors on the swap, and a
 *     409 after the SDK retried the swap (the retried request may have found its own earlier success).
 *     Before reporting "unknown", the pointer is read once: if it names our new file, the commit landed.
 * Table buckets forbid DeleteObject and ListObjects: this catalog never calls `io.delete` or `io.list`.
 */
import {
  CreateNamespaceCommand,
  CreateTableCommand,
  DeleteTableCommand,
  GetNamespaceCommand,
  GetTableMetadataLocationCommand,
  ListTablesCommand,
  type ListTablesCommandOutput,
  S3TablesClient,
  UpdateTableMetadataLocationCommand,
} from '@aws-sdk/client-s3tables';
import {
  CommitFailedError,
  CommitStateUnknownError,
  LakeError,
  NoSuchTableError,
  TableAlreadyExistsError,
  TransientIOError,
  ValidationError,
} from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { joinLocation } from '../io/location.js';
import { S3FileIO } from '../io/s3-file-io.js';
import { newTableMetadata, parseTableMetadata, serializeTableMetadata } from '../spec/metadata.js';
import type { TableIdentifier, TableMetadata } from '../spec/types.js';
import { applyUpdates, checkRequirements } from './apply-updates.js';
import type { Catalog, CreateTableRequest, LoadedTable } from './catalog.js';
import { formatIdentifier } from './catalog.js';
import type { TableRequirement, TableUpdate } from './requirements-updates.js';
import { nextMetadataFileName, singleNamespace, validateS3TablesName } from './s3tables-names.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const DEFAULT_COMMIT_TIMEOUT_MS = 30_000;

export interface S3TablesCatalogOptions {
  tableBucketArn: string;
  /** @default a client from the standard AWS environment (AWS_REGION, AWS_ENDPOINT_URL, ...) */
  client?: S3TablesClient;
  /** Storage for metadata and data files. @default an S3FileIO from the standard environment */
  io?: FileIO;
  /** A pointer swap that has not answered by then is abandoned; its outcome is unknown. @default 30000 */
  commitTimeoutMs?: number;
}

/** Where a table's pointer is now, with the token that conditions the next swap. */
interface Pointer {
  versionToken: string;
  warehouseLocation: string;
  metadataLocation?: string;
}

function errorName(error: unknown): string {
  return typeof error === 'object' && error !== null && 'name' in error ? String(error.name) : '';
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function httpStatus(error: unknown): number | undefined {
  const metadata = (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata;
  return metadata?.httpStatusCode;
}

function sdkAttempts(error: unknown): number {
  const metadata = (error as { $metadata?: { attempts?: number } } | null)?.$metadata;
  return metadata?.attempts ?? 1;
}

/** Throttling, 5xx and network trouble: a read may succeed if tried again. */
function isTransient(error: unknown): boolean {
  const status = httpStatus(error);
  // No HTTP status at all: the request failed on the network or timed out.
  return status === undefined || status >= 500 || status === 429;
}

/** Maps a failure of a call that changes nothing (get, list) to the lake's errors. */
function mapReadError(error: unknown, what: string): LakeError {
  if (error instanceof LakeError) return error;
  if (errorName(error) === 'NotFoundException') return new NoSuchTableError(`${what}: not found`);
  if (isTransient(error)) return new TransientIOError(`${what} failed: ${describe(error)}`, { cause: error });
  return new LakeError(`${what} failed: ${describe(error)}`, { cause: error });
}

/** The new metadata file could not be written, so the pointer was never asked to move: did not land. */
class MetadataWriteFailedError extends CommitFailedError {}

/** @see the module comment. */
export class S3TablesCatalog implements Catalog {
  readonly name = 's3tables';
  readonly tableBucketArn: string;
  readonly client: S3TablesClient;
  readonly io: FileIO;
  private readonly commitTimeoutMs: number;

  constructor(options: S3TablesCatalogOptions) {
    if (!/^arn:[^:]+:s3tables:[^:]*:[^:]*:bucket\/.+$/.test(options.tableBucketArn)) {
      throw new ValidationError(
        `'${options.tableBucketArn}' is not a table bucket ARN (arn:aws:s3tables:...:bucket/NAME)`,
      );
    }
    this.tableBucketArn = options.tableBucketArn;
    this.client = options.client ?? new S3TablesClient({});
    this.io = options.io ?? new S3FileIO();
    this.commitTimeoutMs = options.commitTimeoutMs ?? DEFAULT_COMMIT_TIMEOUT_MS;
  }

  /** Creates a namespace; one that already exists is fine. @throws ValidationError; LakeError */
  async createNamespace(namespace: string[]): Promise<void> {
    const ns = singleNamespace(namespace);
    try {
      await this.client.send(
        new CreateNamespaceCommand({ tableBucketARN: this.tableBucketArn, namespace: [ns] }),
      );
    } catch (error) {
      if (errorName(error) === 'ConflictException') return;
      throw mapReadError(error, `creating namespace '${ns}'`);
    }
  }

  /** @throws ValidationError for a multi-level or invalid namespace; LakeError */
  async namespaceExists(namespace: string[]): Promise<boolean> {
    const ns = singleNamespace(namespace);
    try {
      await this.client.send(new GetNamespaceCommand({ tableBucketARN: this.tableBucketArn, namespace: ns }));
      return true;
    } catch (error) {
      if (errorName(error) === 'NotFoundException') return false;
      throw mapReadError(error, `reading namespace '${ns}'`);
    }
  }

  /** The pointer, or undefined when the table does not exist. */
  private async readPointer(id: TableIdentifier): Promise<Pointer | undefined> {
    const namespace = singleNamespace(id.namespace);
    try {
      const out = await this.client.send(
        new GetTableMetadataLocationCommand({
          tableBucketARN: this.tableBucketArn,
          namespace,
          name: id.name,
        }),
      );
      if (!out.versionToken || !out.warehouseLocation) {
        throw new LakeError(
          `${formatIdentifier(id)}: GetTableMetadataLocation returned no version token or warehouse`,
        );
      }
      return {
        versionToken: out.versionToken,
        warehouseLocation: out.warehouseLocation.replace(/\/+$/, ''),
        metadataLocation: out.metadataLocation ?? undefined,
      };
    } catch (error) {
      if (errorName(error) === 'NotFoundException') return undefined;
      throw mapReadError(error, `reading the metadata location of ${formatIdentifier(id)}`);
    }
  }

  /** True once the table exists with metadata (a table whose creation stopped half-way counts as absent). */
  async tableExists(id: TableIdentifier): Promise<boolean> {
    validateS3TablesName('table', id.name);
    return (await this.readPointer(id))?.metadataLocation !== undefined;
  }

  /** @throws NoSuchTableError; TransientIOError; LakeError */
  async loadTable(id: TableIdentifier): Promise<LoadedTable> {
    validateS3TablesName('table', id.name);
    const pointer = await this.readPointer(id);
    if (!pointer?.metadataLocation) {
      throw new NoSuchTableError(`table ${formatIdentifier(id)} does not exist in ${this.tableBucketArn}`);
    }
    return this.readTable(id, { ...pointer, metadataLocation: pointer.metadataLocation });
  }

  private async readTable(
    id: TableIdentifier,
    pointer: Pointer & { metadataLocation: string },
  ): Promise<LoadedTable> {
    const { metadataLocation, versionToken } = pointer;
    const metadata = parseTableMetadata(decoder.decode(await this.io.read(metadataLocation)));
    return { identifier: id, metadata, metadataLocation, io: this.io, versionToken };
  }

  /** Current while the pointer still names its metadata: one GetTableMetadataLocation. */
  async isCurrent(table: LoadedTable): Promise<boolean> {
    const pointer = await this.readPointer(table.identifier);
    return pointer?.metadataLocation === table.metadataLocation;
  }

  /**
   * Creates the namespace if needed and the table, then writes its first metadata.json under the
   * table's warehouse location and points the table at it (S3 Tables' CreateTable writes none). A table
   * whose earlier creation stopped before the pointer was set is completed rather than refused.
   * @throws TableAlreadyExistsError; ValidationError for names S3 Tables refuses or a custom location
   */
  async createTable(id: TableIdentifier, request: CreateTableRequest): Promise<LoadedTable> {
    validateS3TablesName('table', id.name);
    const namespace = singleNamespace(id.namespace);
    await this.createNamespace([namespace]);
    const alreadyExists = () => new TableAlreadyExistsError(`table ${formatIdentifier(id)} already exists`);

    // moto's CreateTable silently replaces an existing table; S3 Tables answers 409. Look first.
    let pointer = await this.readPointer(id);
    if (pointer?.metadataLocation) throw alreadyExists();
    if (!pointer) {
      try {
        await this.client.send(
          new CreateTableCommand({
            tableBucketARN: this.tableBucketArn,
            namespace,
            name: id.name,
            format: 'ICEBERG',
          }),
        );
      } catch (error) {
        if (errorName(error) !== 'ConflictException')
          throw mapReadError(error, `creating ${formatIdentifier(id)}`);
      }
      pointer = await this.readPointer(id);
      if (!pointer) throw new LakeError(`${formatIdentifier(id)} vanished right after it was created`);
      if (pointer.metadataLocation) throw alreadyExists();
    }
    if (
      request.location !== undefined &&
      request.location.replace(/\/+$/, '') !== pointer.warehouseLocation
    ) {
      throw new ValidationError(
        `S3 Tables chooses table locations: ${formatIdentifier(id)} lives at ${pointer.warehouseLocation}, not ${request.location}`,
      );
    }

    const metadata = newTableMetadata({
      location: pointer.warehouseLocation,
      schema: request.schema,
      spec: request.partitionSpec,
      sortOrder: request.sortOrder,
      properties: request.properties,
    });
    const metadataLocation = joinLocation(
      pointer.warehouseLocation,
      'metadata',
      nextMetadataFileName(undefined),
    );
    let versionToken: string | undefined;
    try {
      versionToken = await this.swapPointer(id, pointer, metadataLocation, metadata);
    } catch (error) {
      if (error instanceof MetadataWriteFailedError) {
        const cause = error.cause;
        throw new LakeError(`creating ${formatIdentifier(id)}: ${error.message}`, {
          cause,
          retryable: cause instanceof LakeError ? cause.retryable : true,
        });
      }
      if (error instanceof CommitFailedError) throw alreadyExists(); // another creator set it first
      if (error instanceof CommitStateUnknownError) {
        // Retrying is safe: a create that did land answers TableAlreadyExistsError next time.
        throw new TransientIOError(`creating ${formatIdentifier(id)} may have finished: ${error.message}`, {
          cause: error,
        });
      }
      throw error;
    }
    return { identifier: id, metadata, metadataLocation, io: this.io, versionToken };
  }

  /**
   * Checks requirements against the current metadata, applies the updates, writes the next metadata.json
   * and swaps the pointer conditionally (see the module comment for what each failure means).
   * @throws CommitFailedError; CommitStateUnknownError; NoSuchTableError; ValidationError for bad updates
   */
  async commitTable(
    id: TableIdentifier,
    requirements: TableRequirement[],
    updates: TableUpdate[],
    given?: LoadedTable,
  ): Promise<LoadedTable> {
    validateS3TablesName('table', id.name);
    // A base read with its version token needs no second read: the swap is conditional on that token,
    // so a stale base is refused (ConflictException → CommitFailedError).
    const trusted = given?.versionToken !== undefined ? given : undefined;
    const pointer: Pointer | undefined = trusted
      ? {
          versionToken: trusted.versionToken!,
          warehouseLocation: trusted.metadata.location.replace(/\/+$/, ''),
          metadataLocation: trusted.metadataLocation,
        }
      : await this.readPointer(id);
    if (!pointer?.metadataLocation)
      throw new NoSuchTableError(`table ${formatIdentifier(id)} does not exist`);
    const base =
      trusted ?? (await this.readTable(id, { ...pointer, metadataLocation: pointer.metadataLocation }));
    checkRequirements(base.metadata, requirements);
    const next = applyUpdates(base.metadata, updates, { previousMetadataLocation: pointer.metadataLocation });
    const nextLocation = joinLocation(
      pointer.warehouseLocation,
      'metadata',
      nextMetadataFileName(pointer.metadataLocation, base.metadata),
    );
    const versionToken = await this.swapPointer(id, pointer, nextLocation, next);
    return { identifier: id, metadata: next, metadataLocation: nextLocation, io: this.io, versionToken };
  }

  /**
   * Writes `metadata` as a new object at `location`, then moves the pointer there: THE COMMIT POINT.
   * Returns the pointer's new version token when S3 Tables reported it.
   */
  private async swapPointer(
    id: TableIdentifier,
    pointer: Pointer,
    location: string,
    metadata: TableMetadata,
  ): Promise<string | undefined> {
    const what = formatIdentifier(id);
    try {
      await this.io.writeIfAbsent(location, encoder.encode(serializeTableMetadata(metadata)));
    } catch (error) {
      // The pointer has not moved: whatever happened to the file, the commit did not land.
      throw new MetadataWriteFailedError(
        `${what}: writing ${location} failed, pointer not moved: ${describe(error)}`,
        {
          cause: error,
        },
      );
    }
    try {
      // ---- COMMIT POINT ----
      const out = await this.client.send(
        new UpdateTableMetadataLocationCommand({
          tableBucketARN: this.tableBucketArn,
          namespace: id.namespace[0],
          name: id.name,
          versionToken: pointer.versionToken,
          metadataLocation: location,
        }),
        { abortSignal: AbortSignal.timeout(this.commitTimeoutMs) },
      );
      return out.versionToken ?? undefined;
    } catch (error) {
      const name = errorName(error);
      const status = httpStatus(error);
      const firstAttempt = sdkAttempts(error) <= 1;
      if (name === 'ConflictException' && firstAttempt) {
        throw new CommitFailedError(`${what}: the table changed since it was read (version token is stale)`, {
          cause: error,
        });
      }
      if (firstAttempt && status !== undefined && status >= 400 && status < 500) {
        if (name === 'NotFoundException') throw new NoSuchTableError(`table ${what} no longer exists`);
        // 4xx on the only attempt: the request was refused, nothing landed; retrying will not help.
        throw new LakeError(
          `${what}: S3 Tables refused the metadata location ${location}: ${describe(error)}`,
          {
            cause: error,
          },
        );
      }
      await this.reconcileSwap(id, location, error);
      return undefined;
    }
  }

  /** After an unknown outcome: proven landed when the pointer names our new file, else still unknown. */
  private async reconcileSwap(id: TableIdentifier, location: string, cause: unknown): Promise<void> {
    let current: Pointer | undefined;
    try {
      current = await this.readPointer(id);
    } catch {
      // the check itself failed: the outcome stays unknown
    }
    if (current?.metadataLocation === location) return;
    throw new CommitStateUnknownError(
      `${formatIdentifier(id)}: the swap to ${location} may have landed: ${describe(cause)}`,
      { cause },
    );
  }

  /** Tables in a namespace, by name; a missing namespace lists as empty. @throws ValidationError; LakeError */
  async listTables(namespace: string[]): Promise<TableIdentifier[]> {
    const ns = singleNamespace(namespace);
    const out: TableIdentifier[] = [];
    let continuationToken: string | undefined;
    do {
      let page: ListTablesCommandOutput;
      try {
        page = await this.client.send(
          new ListTablesCommand({ tableBucketARN: this.tableBucketArn, namespace: ns, continuationToken }),
        );
      } catch (error) {
        if (errorName(error) === 'NotFoundException') return [];
        throw mapReadError(error, `listing tables in '${ns}'`);
      }
      for (const table of page.tables ?? []) if (table.name) out.push({ namespace: [ns], name: table.name });
      continuationToken = page.continuationToken;
    } while (continuationToken);
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Deletes the table; S3 Tables removes its files itself. @throws NoSuchTableError; LakeError */
  async dropTable(id: TableIdentifier): Promise<void> {
    const namespace = singleNamespace(id.namespace);
    try {
      await this.client.send(
        new DeleteTableCommand({ tableBucketARN: this.tableBucketArn, namespace, name: id.name }),
      );
    } catch (error) {
      throw mapReadError(error, `dropping ${formatIdentifier(id)}`);
    }
  }
}
