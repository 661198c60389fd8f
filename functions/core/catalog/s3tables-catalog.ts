/**
 * Amazon S3 Tables as a catalog, through its control-plane API (@aws-sdk/client-s3tables). Metadata and
 * data files are written by floe under the table's `warehouseLocation` through S3; S3 Tables only keeps the
 * pointer to the current metadata.json.
 *
 * COMMIT POINT: the conditional pointer swap, in s3tables-pointer.ts (what each failure there means).
 * Errors of the other calls: s3tables-errors.ts. S3 Tables maintains its tables itself: `maintenance`
 * configures that (s3tables-maintenance.ts).
 * Table buckets forbid DeleteObject and ListObjects: this catalog never calls `io.delete` or `io.list`.
 */
import {
  CreateNamespaceCommand,
  CreateTableCommand,
  DeleteTableCommand,
  GetNamespaceCommand,
  ListTablesCommand,
  type ListTablesCommandOutput,
  S3TablesClient,
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
import { newTableMetadata, parseTableMetadata } from '../spec/metadata.js';
import type { TableIdentifier } from '../spec/types.js';
import { applyUpdates, checkRequirements } from './apply-updates.js';
import type { Catalog, CatalogMaintenance, CreateTableRequest, LoadedTable } from './catalog.js';
import { formatIdentifier } from './catalog.js';
import type { TableRequirement, TableUpdate } from './requirements-updates.js';
import { MetadataMemo } from './metadata-memo.js';
import { isS3TablesConflict, isS3TablesNotFound, mapS3TablesError } from './s3tables-errors.js';
import { S3TablesMaintenance } from './s3tables-maintenance.js';
import { nextMetadataFileName, singleNamespace, validateS3TablesName } from './s3tables-names.js';
import {
  MetadataWriteFailedError,
  type Pointer,
  readPointer,
  type S3TablesBucket,
  SwapThrottledError,
  swapPointer,
} from './s3tables-pointer.js';

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

/** @see the module comment. */
export class S3TablesCatalog implements Catalog {
  readonly name = 's3tables';
  readonly tableBucketArn: string;
  readonly client: S3TablesClient;
  readonly io: FileIO;
  /** S3 Tables compacts, expires snapshots and removes unreferenced files itself; this configures it. */
  readonly maintenance: CatalogMaintenance;
  private readonly bucket: S3TablesBucket;
  /** Each table's last metadata read or written here, so a warm function's next load skips the GET. */
  private readonly memo = new MetadataMemo();

  constructor(options: S3TablesCatalogOptions) {
    if (!/^arn:[^:]+:s3tables:[^:]*:[^:]*:bucket\/.+$/.test(options.tableBucketArn)) {
      throw new ValidationError(
        `'${options.tableBucketArn}' is not a table bucket ARN (arn:aws:s3tables:...:bucket/NAME)`,
      );
    }
    this.tableBucketArn = options.tableBucketArn;
    this.client = options.client ?? new S3TablesClient({});
    this.io = options.io ?? new S3FileIO();
    this.bucket = {
      client: this.client,
      tableBucketArn: this.tableBucketArn,
      io: this.io,
      commitTimeoutMs: options.commitTimeoutMs ?? DEFAULT_COMMIT_TIMEOUT_MS,
    };
    this.maintenance = new S3TablesMaintenance(this.client, this.tableBucketArn);
  }

  /** Creates a namespace; one that already exists is fine. @throws ValidationError; LakeError */
  async createNamespace(namespace: string[]): Promise<void> {
    const ns = singleNamespace(namespace);
    try {
      await this.client.send(
        new CreateNamespaceCommand({ tableBucketARN: this.tableBucketArn, namespace: [ns] }),
      );
    } catch (error) {
      if (isS3TablesConflict(error)) return;
      throw mapS3TablesError(error, `creating namespace '${ns}'`);
    }
  }

  /** @throws ValidationError for a multi-level or invalid namespace; LakeError */
  async namespaceExists(namespace: string[]): Promise<boolean> {
    const ns = singleNamespace(namespace);
    try {
      await this.client.send(new GetNamespaceCommand({ tableBucketARN: this.tableBucketArn, namespace: ns }));
      return true;
    } catch (error) {
      if (isS3TablesNotFound(error)) return false;
      throw mapS3TablesError(error, `reading namespace '${ns}'`);
    }
  }

  /** True once the table exists with metadata (a table whose creation stopped half-way counts as absent). */
  async tableExists(id: TableIdentifier): Promise<boolean> {
    validateS3TablesName('table', id.name);
    return (await readPointer(this.bucket, id))?.metadataLocation !== undefined;
  }

  /** @throws NoSuchTableError; TransientIOError; LakeError */
  async loadTable(id: TableIdentifier): Promise<LoadedTable> {
    validateS3TablesName('table', id.name);
    const pointer = await readPointer(this.bucket, id);
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
    const key = formatIdentifier(id);
    const metadata =
      this.memo.get(key, metadataLocation) ??
      this.memo.remember(
        key,
        metadataLocation,
        parseTableMetadata(decoder.decode(await this.io.read(metadataLocation))),
      );
    return { identifier: id, metadata, metadataLocation, io: this.io, versionToken };
  }

  /** Current while the pointer still names its metadata: one GetTableMetadataLocation. */
  async isCurrent(table: LoadedTable): Promise<boolean> {
    const pointer = await readPointer(this.bucket, table.identifier);
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
    let pointer = await readPointer(this.bucket, id);
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
        if (!isS3TablesConflict(error)) throw mapS3TablesError(error, `creating ${formatIdentifier(id)}`);
      }
      pointer = await readPointer(this.bucket, id);
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
      versionToken = await swapPointer(this.bucket, id, pointer, metadataLocation, metadata);
    } catch (error) {
      if (error instanceof MetadataWriteFailedError) {
        const cause = error.cause;
        throw new LakeError(`creating ${formatIdentifier(id)}: ${error.message}`, {
          cause,
          retryable: cause instanceof LakeError ? cause.retryable : true,
        });
      }
      if (error instanceof SwapThrottledError) {
        throw new TransientIOError(`creating ${formatIdentifier(id)}: ${error.message}`, { cause: error });
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
    this.memo.remember(formatIdentifier(id), metadataLocation, metadata);
    return { identifier: id, metadata, metadataLocation, io: this.io, versionToken };
  }

  /**
   * Checks requirements against the current metadata, applies the updates, writes the next metadata.json
   * and swaps the pointer conditionally (s3tables-pointer.ts says what each failure means).
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
      : await readPointer(this.bucket, id);
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
    const versionToken = await swapPointer(this.bucket, id, pointer, nextLocation, next);
    this.memo.remember(formatIdentifier(id), nextLocation, next);
    return { identifier: id, metadata: next, metadataLocation: nextLocation, io: this.io, versionToken };
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
        if (isS3TablesNotFound(error)) return [];
        throw mapS3TablesError(error, `listing tables in '${ns}'`);
      }
      for (const table of page.tables ?? []) if (table.name) out.push({ namespace: [ns], name: table.name });
      continuationToken = page.continuationToken;
    } while (continuationToken);
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Deletes the table; S3 Tables removes its files itself. @throws NoSuchTableError; LakeError */
  async dropTable(id: TableIdentifier): Promise<void> {
    const namespace = singleNamespace(id.namespace);
    this.memo.forget(formatIdentifier(id));
    try {
      await this.client.send(
        new DeleteTableCommand({ tableBucketARN: this.tableBucketArn, namespace, name: id.name }),
      );
    } catch (error) {
      throw mapS3TablesError(error, `dropping ${formatIdentifier(id)}`);
    }
  }
}
