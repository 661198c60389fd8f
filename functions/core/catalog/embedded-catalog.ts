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
 *
 * One table per folder: a table's folder never lies inside another table's or holds one, and no name is
 * `metadata` or `data` (the folders a table keeps its files in), so orphan removal of one table cannot
 * take another's files for its own. Creation refuses such identifiers; a table whose metadata gives a
 * location other than its folder (edited by hand or written elsewhere) is refused on load.
 * Two creations racing (`a.b` and `a.b.c` at once) can still both pass the check; deletes are confined
 * anyway (io/confined-delete.ts).
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
  TransientIOError,
  ValidationError,
} from '../errors.js';
import { TableArea } from '../io/confined-delete.js';
import type { FileIO } from '../io/file-io.js';
import { isWithinLocation, joinLocation, normalizeLocation } from '../io/location.js';
import { resolveFileIO } from '../io/resolve-file-io.js';
import { newTableMetadata, parseTableMetadata, serializeTableMetadata } from '../spec/metadata.js';
import { readCommitProperties } from '../spec/table-properties.js';
import type { TableIdentifier, TableMetadata } from '../spec/types.js';
import { applyUpdates, checkRequirements } from './apply-updates.js';
import type { Catalog, CreateTableRequest, LoadedTable } from './catalog.js';
import { formatIdentifier } from './catalog.js';
import type { TableRequirement, TableUpdate } from './requirements-updates.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const NAME_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_-]*$/;
/** The folders a table keeps its files in: no table or nested namespace may take their names. */
const TABLE_FOLDERS = new Set(['metadata', 'data']);
/** `<folder>/metadata/<name>.metadata.json`: the folder is a table's. */
const TABLE_METADATA = /^(.*)\/metadata\/[^/]+\.metadata\.json$/;

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
    // The first part sits in the warehouse root, which is no table's folder: `data.events` is fine.
    const reserved = [...id.namespace, id.name].slice(1).find((p) => TABLE_FOLDERS.has(p.toLowerCase()));
    if (reserved !== undefined) {
      throw new ValidationError(
        `'${reserved}' in ${formatIdentifier(id)} cannot name a table or a nested namespace: tables keep ` +
          'their files in folders called metadata and data, so this folder would pass for part of another table',
      );
    }
    return joinLocation(this.warehouse, ...id.namespace, id.name);
  }

  /** The table the folder `location` (inside the warehouse) would be, as an identifier's text. */
  private nameAt(location: string): string {
    const relative = normalizeLocation(location).slice(normalizeLocation(this.warehouse).length + 1);
    return relative.split('/').join('.');
  }

  /** Whether `folder` holds a table's metadata (so it is a table's folder). */
  private async holdsTable(folder: string): Promise<boolean> {
    const listed = await this.io.list(joinLocation(folder, 'metadata'));
    return listed.some(
      (o) => TABLE_METADATA.exec(normalizeLocation(o.location))?.[1] === normalizeLocation(folder),
    );
  }

  /**
   * Refuses a new table whose folder lies inside another table's, or holds one.
   * @throws ValidationError naming both tables
   */
  private async checkNesting(id: TableIdentifier, location: string): Promise<void> {
    const parts = [...id.namespace, id.name];
    for (let n = 1; n < parts.length; n++) {
      const folder = joinLocation(this.warehouse, ...parts.slice(0, n));
      if (await this.holdsTable(folder)) {
        throw new ValidationError(
          `cannot create table ${formatIdentifier(id)}: its folder ${location} would lie inside table ` +
            `${parts.slice(0, n).join('.')}'s folder ${folder}, and maintenance of one would reach the ` +
            "other's files; choose another name (retrying does not help)",
        );
      }
    }
    for (const object of await this.io.list(location)) {
      const m = TABLE_METADATA.exec(normalizeLocation(object.location));
      if (m && m[1] !== normalizeLocation(location)) {
        throw new ValidationError(
          `cannot create table ${formatIdentifier(id)}: its folder ${location} would hold table ` +
            `${this.nameAt(m[1])} (${m[1]}), and maintenance of one would reach the other's files; ` +
            'choose another name (retrying does not help)',
        );
      }
    }
  }

  /**
   * @throws ValidationError when `metadata` gives a location other than the table's folder
   */
  private checkLocation(id: TableIdentifier, metadata: TableMetadata, metadataLocation: string): void {
    const expected = this.tableLocation(id);
    if (normalizeLocation(metadata.location) === normalizeLocation(expected)) return;
    throw new ValidationError(
      `table ${formatIdentifier(id)}: ${metadataLocation} gives the location ${metadata.location}, but ` +
        `the table's folder in this warehouse is ${expected}; the metadata was edited or written elsewhere, ` +
        'and floe will not read, write or maintain the table until its location is corrected (retrying does not help)',
    );
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
    this.checkLocation(id, metadata, metadataLocation);
    return { identifier: id, metadata, metadataLocation, io: this.io };
  }

  /**
   * @throws ValidationError for an identifier this layout cannot hold (see the module comment) or a
   *   location other than the table's folder
   * @throws TableAlreadyExistsError
   */
  async createTable(id: TableIdentifier, request: CreateTableRequest): Promise<LoadedTable> {
    const location = this.tableLocation(id);
    if (request.location !== undefined && !isWithinLocation(request.location, location)) {
      throw new ValidationError(
        `table ${formatIdentifier(id)}: the embedded catalog keeps a table in its own folder ${location}, ` +
          `not at ${request.location}`,
      );
    }
    if (await this.tableExists(id))
      throw new TableAlreadyExistsError(`table ${formatIdentifier(id)} already exists`);
    await this.checkNesting(id, location);
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
    this.checkLocation(id, next, nextLocation);
    // Read before the commit point: a malformed property refuses the commit, never fails one that landed.
    const deleteDropped = readCommitProperties(next.properties).metadataDeleteAfterCommit;
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
    const committed: LoadedTable = {
      identifier: id,
      metadata: next,
      metadataLocation: nextLocation,
      io: this.io,
    };
    if (deleteDropped) await this.deleteDroppedMetadata(current.metadata, committed);
    return committed;
  }

  /**
   * Iceberg's `write.metadata.delete-after-commit.enabled`: metadata files that fell out of the
   * metadata-log (longer than `write.metadata.previous-versions-max`) are deleted after a commit.
   * Best effort: a leftover file is only an orphan.
   */
  private async deleteDroppedMetadata(before: TableMetadata, after: LoadedTable): Promise<void> {
    const kept = new Set(after.metadata['metadata-log'].map((e) => e['metadata-file']));
    const dropped = before['metadata-log'].map((e) => e['metadata-file']).filter((f) => !kept.has(f));
    // A metadata log is metadata like any other: an entry edited to point elsewhere is not deleted.
    if (dropped.length > 0) await new TableArea(after).delete(dropped);
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
    const prefix = normalizeLocation(joinLocation(this.warehouse, ...namespace));
    const found = new Set<string>();
    for (const object of await this.io.list(prefix)) {
      // Directly in the namespace's folder: a table nested deeper belongs to another namespace.
      const m = /^\/([^/]+)\/metadata\/v\d+\.metadata\.json$/.exec(
        normalizeLocation(object.location).slice(prefix.length),
      );
      if (m) found.add(m[1]);
    }
    return [...found].sort().map((name) => ({ namespace, name }));
  }

  /** Deletes the table's files; a table nested in its folder (an older warehouse) keeps its own. */
  async dropTable(id: TableIdentifier): Promise<void> {
    // The folder is the layout's, not metadata's word: a table whose metadata is broken can be dropped.
    const location = this.tableLocation(id);
    const files = await this.io.list(location);
    const area = new TableArea({ io: this.io, metadata: { location } }, { files, under: [location] });
    const outcome = await area.delete(files.map((f) => f.location));
    if (outcome.failed.length > 0) {
      throw new TransientIOError(
        `dropping ${formatIdentifier(id)}: ${outcome.failed.length} file(s) could not be deleted ` +
          `(first: ${outcome.failed[0]}); dropping again may finish it`,
      );
    }
  }
}
