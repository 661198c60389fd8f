/**
 * PROTOTYPE (bench only, not used by floe): the embedded catalog without the repeated metadata reads
 * one batch makes today (4 full loads: ingestTable, commitBatch, commitWithRetry, and commitTable's own
 * re-read — each = version-hint GET + 2 HEADs + metadata.json GET on S3).
 *
 * - loadTable: the table this instance loaded or committed last is still current when v<N+1> does not
 *   exist — one HEAD instead of four requests.
 * - commitTable: requirements are checked against that cached base and v<N+1> is created if absent. A
 *   stale base cannot land: another writer's v<N+1> makes the create fail → CommitFailedError, and the
 *   commit loop reloads. (The same idea for S3 Tables: keep the versionToken from the load and let
 *   UpdateTableMetadataLocation's token check catch a stale base, instead of re-reading both.)
 */
import { applyUpdates, checkRequirements } from '../../../functions/core/catalog/apply-updates.js';
import type { Catalog, CreateTableRequest, LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { formatIdentifier } from '../../../functions/core/catalog/catalog.js';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import type { TableRequirement, TableUpdate } from '../../../functions/core/catalog/requirements-updates.js';
import {
  AlreadyExistsError,
  CommitFailedError,
  CommitStateUnknownError,
} from '../../../functions/core/errors.js';
import type { FileIO } from '../../../functions/core/io/file-io.js';
import { joinLocation } from '../../../functions/core/io/location.js';
import { serializeTableMetadata } from '../../../functions/core/spec/metadata.js';
import type { TableIdentifier } from '../../../functions/core/spec/types.js';

const encoder = new TextEncoder();

function versionOf(metadataLocation: string): number {
  const m = /\/v(\d+)\.metadata\.json$/.exec(metadataLocation);
  if (!m) throw new Error(`not an embedded-catalog metadata location: ${metadataLocation}`);
  return Number(m[1]);
}

export class CachedEmbeddedCatalog implements Catalog {
  readonly name = 'embedded (prototype: cached metadata)';
  private readonly inner: EmbeddedCatalog;
  private readonly io: FileIO;
  private readonly cache = new Map<string, LoadedTable>();

  constructor(options: { warehouse: string; io: FileIO }) {
    this.inner = new EmbeddedCatalog(options);
    this.io = options.io;
  }

  private file(id: TableIdentifier, version: number): string {
    return joinLocation(this.inner.tableLocation(id), 'metadata', `v${version}.metadata.json`);
  }

  async loadTable(id: TableIdentifier): Promise<LoadedTable> {
    const key = formatIdentifier(id);
    const cached = this.cache.get(key);
    if (cached && !(await this.io.exists(this.file(id, versionOf(cached.metadataLocation) + 1))))
      return cached;
    const table = await this.inner.loadTable(id);
    this.cache.set(key, table);
    return table;
  }

  tableExists(id: TableIdentifier): Promise<boolean> {
    return this.inner.tableExists(id);
  }

  async createTable(id: TableIdentifier, request: CreateTableRequest): Promise<LoadedTable> {
    const table = await this.inner.createTable(id, request);
    this.cache.set(formatIdentifier(id), table);
    return table;
  }

  listTables(namespace: string[]): Promise<TableIdentifier[]> {
    return this.inner.listTables(namespace);
  }

  async commitTable(
    id: TableIdentifier,
    requirements: TableRequirement[],
    updates: TableUpdate[],
  ): Promise<LoadedTable> {
    const key = formatIdentifier(id);
    const base = this.cache.get(key) ?? (await this.loadTable(id));
    checkRequirements(base.metadata, requirements);
    const next = applyUpdates(base.metadata, updates, { previousMetadataLocation: base.metadataLocation });
    const version = versionOf(base.metadataLocation) + 1;
    const location = this.file(id, version);
    try {
      // ---- COMMIT POINT (as EmbeddedCatalog) ----
      await this.io.writeIfAbsent(location, encoder.encode(serializeTableMetadata(next)));
    } catch (error) {
      this.cache.delete(key);
      if (error instanceof AlreadyExistsError) {
        throw new CommitFailedError(`${key}: version ${version} was committed by another writer`, {
          cause: error,
        });
      }
      throw new CommitStateUnknownError(`${key}: writing ${location} failed; it may have landed`, {
        cause: error,
      });
    }
    await this.io
      .write(
        joinLocation(this.inner.tableLocation(id), 'metadata', 'version-hint.text'),
        encoder.encode(String(version)),
      )
      .catch(() => undefined);
    const table: LoadedTable = { identifier: id, metadata: next, metadataLocation: location, io: this.io };
    this.cache.set(key, table);
    return table;
  }
}
