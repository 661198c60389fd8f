/**
 * The embedded catalog: tables under a warehouse folder (local path or s3://), in the layout of
 * Iceberg's Hadoop catalog, so Spark's HadoopCatalog, DuckDB and PyIceberg's StaticTable can open them:
 *
 *   <warehouse>/<ns>/<table>/metadata/v<N>.metadata.json   (never overwritten)
 *   <warehouse>/<ns>/<table>/metadata/version-hint.text    (a hint only: the latest N, may lag)
 *
 * COMMIT POINT: `writeIfAbsent(v<N+1>.metadata.json)`. Before it returns, readers see version N;
 * after, version N+1 (they probe past the hint). Failures:
 *   - AlreadyExistsError (another writer created v<N+1> first) → CommitFailedError: did not land.
 *   - any other error from that write (I/O, timeout) → CommitStateUnknownError: it may have landed;
 *     the commit loop re-reads the table and looks for its snapshot before anything else.
 * Requirements are checked against the latest version just before the write, as a REST server would.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import {
  AlreadyExistsError,
  CommitFailedError,
  CommitStateUnknownError,
  LakeError,
  NoSuchTableError,
  NotFoundError,
  TableAlreadyExistsError,
  ValidationError,
} from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { joinLocation } from '../io/location.js';
import { resolveFileIO } from '../io/resolve-file-io.js';
import { newTableMetadata, parseTableMetadata, serializeTableMetadata } from '../spec/metadata.js';
import type { TableIdentifier, TableMetadata } from '../spec/types.js';
import { applyUpdates, checkRequirements } from './apply-updates.js';
import type { Catalog, CreateTableRequest, LoadedTable } from './catalog.js';
import { formatIdentifier } from './catalog.js';
import type { TableRequirement, TableUpdate } from './requirements-updates.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const NAME_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_-]*$/;

export interface EmbeddedCatalogOptions {
  /** Warehouse root: an absolute path, `file://...` or `s3://bucket/prefix`. */
  warehouse: string;
  io?: FileIO;
}

export class EmbeddedCatalog implements Catalog {
  readonly name = 'embedded';
  readonly warehouse: string;
  readonly io: FileIO;

  constructor(options: EmbeddedCatalogOptions) {
    // A relative path is relative to the working directory, as a user typing `--warehouse wh` means.
    const root = /^[a-z][a-z0-9+.-]*:\/\//i.test(options.warehouse)
      ? options.warehouse
      : resolve(options.warehouse);
    this.warehouse = root.replace(/\/+$/, '');
    this.io = options.io ?? resolveFileIO(this.warehouse);
  }

  tableLocation(id: TableIdentifier): string {
    for (const part of [...id.namespace, id.name]) {
      if (!NAME_PATTERN.test(part)) {
        throw new ValidationError(
          `'${part}' in ${formatIdentifier(id)} is not a valid name (letters, digits, _ and -)`,
        );
      }
    }
    return joinLocation(this.warehouse, ...id.namespace, id.name);
  }

  private metadataFile(id: TableIdentifier, version: number): string {
    return joinLocation(this.tableLocation(id), 'metadata', `v${version}.metadata.json`);
  }

  private hintFile(id: TableIdentifier): string {
    return joinLocation(this.tableLocation(id), 'metadata', 'version-hint.text');
  }

  /** The version the hint file names; 0 without a usable hint. */
  private async hintedVersion(id: TableIdentifier): Promise<number> {
    try {
      const hint = Number.parseInt(decoder.decode(await this.io.read(this.hintFile(id))).trim(), 10);
      return Number.isSafeInteger(hint) && hint > 0 ? hint : 0;
    } catch (error) {
      if (error instanceof LakeError && error.retryable) throw error;
      return 0;
    }
  }

  /**
   * The latest version: start at the hint, probe forward while the next file exists. Without a usable
   * hint, list the metadata folder (old versions may have been removed, so counting up from v1 is not enough).
   */
  private async latestVersion(id: TableIdentifier): Promise<number | undefined> {
    let version = await this.hintedVersion(id);
    if (version > 0 && !(await this.io.exists(this.metadataFile(id, version)))) version = 0;
    if (version === 0) version = await this.listedVersion(id);
    while (await this.io.exists(this.metadataFile(id, version + 1))) version++;
    return version === 0 ? undefined : version;
  }

  private async listedVersion(id: TableIdentifier): Promise<number> {
    let max = 0;
    for (const object of await this.io.list(joinLocation(this.tableLocation(id), 'metadata'))) {
      const m = /\/v(\d+)\.metadata\.json$/.exec(object.location);
      if (m) max = Math.max(max, Number(m[1]));
    }
    return max;
  }

  async tableExists(id: TableIdentifier): Promise<boolean> {
    return (await this.latestVersion(id)) !== undefined;
  }

  async loadTable(id: TableIdentifier): Promise<LoadedTable> {
    // The common case in two reads and a probe: the hint names the latest version, read it at once
    // (rather than checking it exists first) and look for a newer one.
    const hinted = await this.hintedVersion(id);
    if (hinted > 0) {
      const table = await this.readVersion(id, hinted).catch((error: unknown) => {
        if (error instanceof NotFoundError) return undefined; // pruned metadata: find the latest below
        throw error;
      });
      if (table && !(await this.io.exists(this.metadataFile(id, hinted + 1)))) return table;
    }
    const version = await this.latestVersion(id);
    if (version === undefined)
      throw new NoSuchTableError(`table ${formatIdentifier(id)} does not exist in ${this.warehouse}`);
    return this.readVersion(id, version);
  }

  private async readVersion(id: TableIdentifier, version: number): Promise<LoadedTable> {
    const metadataLocation = this.metadataFile(id, version);
    const metadata = parseTableMetadata(decoder.decode(await this.io.read(metadataLocation)));
    return { identifier: id, metadata, metadataLocation, io: this.io };
  }

  async createTable(id: TableIdentifier, request: CreateTableRequest): Promise<LoadedTable> {
    const location = request.location ?? this.tableLocation(id);
    const metadata = newTableMetadata({
      location,
      schema: request.schema,
      spec: request.partitionSpec,
      sortOrder: request.sortOrder,
      properties: request.properties,
      uuid: randomUUID(),
    });
    const metadataLocation = this.metadataFile(id, 1);
    try {
      await this.io.writeIfAbsent(metadataLocation, encoder.encode(serializeTableMetadata(metadata)));
    } catch (error) {
      if (error instanceof AlreadyExistsError) {
        throw new TableAlreadyExistsError(`table ${formatIdentifier(id)} already exists`);
      }
      throw error;
    }
    await this.writeHint(id, 1);
    return { identifier: id, metadata, metadataLocation, io: this.io };
  }

  /** The version a metadata location names, when it is this table's file in this catalog's layout. */
  private versionAt(id: TableIdentifier, location: string): number | undefined {
    const m = /\/v(\d+)\.metadata\.json$/.exec(location);
    if (!m) return undefined;
    const version = Number(m[1]);
    return this.metadataFile(id, version) === location ? version : undefined;
  }

  /** Current while no v<N+1> exists: one existence check. */
  async isCurrent(table: LoadedTable): Promise<boolean> {
    const version = this.versionAt(table.identifier, table.metadataLocation);
    if (version === undefined) return false;
    return !(await this.io.exists(this.metadataFile(table.identifier, version + 1)));
  }

  async commitTable(
    id: TableIdentifier,
    requirements: TableRequirement[],
    updates: TableUpdate[],
    base?: LoadedTable,
  ): Promise<LoadedTable> {
    // A base from this catalog names its version: no need to find and read the latest again. If it is
    // stale, v<N+1> exists and the create-if-absent below refuses the commit.
    const baseVersion = base ? this.versionAt(id, base.metadataLocation) : undefined;
    const version = baseVersion ?? (await this.latestVersion(id));
    if (version === undefined) throw new NoSuchTableError(`table ${formatIdentifier(id)} does not exist`);
    const current = base && baseVersion !== undefined ? base : await this.readVersion(id, version);
    checkRequirements(current.metadata, requirements);
    const next: TableMetadata = applyUpdates(current.metadata, updates, {
      previousMetadataLocation: current.metadataLocation,
    });
    const nextLocation = this.metadataFile(id, version + 1);
    try {
      // ---- COMMIT POINT ----
      await this.io.writeIfAbsent(nextLocation, encoder.encode(serializeTableMetadata(next)));
    } catch (error) {
      if (error instanceof AlreadyExistsError) {
        throw new CommitFailedError(
          `${formatIdentifier(id)}: version ${version + 1} was committed by another writer`,
          {
            cause: error,
          },
        );
      }
      throw new CommitStateUnknownError(
        `${formatIdentifier(id)}: writing ${nextLocation} failed; it may have landed`,
        {
          cause: error,
        },
      );
    }
    await this.writeHint(id, version + 1);
    await this.deleteDroppedMetadata(current.metadata, next);
    return { identifier: id, metadata: next, metadataLocation: nextLocation, io: this.io };
  }

  /**
   * Iceberg's `write.metadata.delete-after-commit.enabled`: metadata files that fell out of the
   * metadata-log (longer than `write.metadata.previous-versions-max`) are deleted after a commit.
   * Best effort: a leftover file is only an orphan.
   */
  private async deleteDroppedMetadata(before: TableMetadata, after: TableMetadata): Promise<void> {
    if (after.properties?.['write.metadata.delete-after-commit.enabled'] !== 'true') return;
    const kept = new Set(after['metadata-log'].map((e) => e['metadata-file']));
    for (const e of before['metadata-log']) {
      if (!kept.has(e['metadata-file'])) await this.io.delete(e['metadata-file']).catch(() => {});
    }
  }

  /** The hint is only an optimisation: a failure to write it never fails a commit that landed. */
  private async writeHint(id: TableIdentifier, version: number): Promise<void> {
    try {
      await this.io.write(this.hintFile(id), encoder.encode(String(version)));
    } catch {
      // readers probe past a stale hint
    }
  }

  async listTables(namespace: string[]): Promise<TableIdentifier[]> {
    const prefix = joinLocation(this.warehouse, ...namespace);
    const found = new Set<string>();
    for (const object of await this.io.list(prefix)) {
      const m = /\/([^/]+)\/metadata\/v\d+\.metadata\.json$/.exec(object.location);
      if (m) found.add(m[1]);
    }
    return [...found].sort().map((name) => ({ namespace, name }));
  }

  async dropTable(id: TableIdentifier): Promise<void> {
    for (const object of await this.io.list(this.tableLocation(id))) await this.io.delete(object.location);
  }
}
