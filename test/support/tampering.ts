/**
 * Ways a warehouse ends up other than floe left it: metadata edited by hand or by another tool, a
 * catalog whose answers are taken on trust (as a REST catalog's are), tables nested in one another by a
 * warehouse written before the embedded catalog refused that.
 */
import { mkdir, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Catalog, LoadedTable } from '../../functions/core/catalog/catalog.js';
import type { TableRequirement, TableUpdate } from '../../functions/core/catalog/requirements-updates.js';
import type { EmbeddedCatalog } from '../../functions/core/catalog/embedded-catalog.js';
import { parseTableMetadata, serializeTableMetadata } from '../../functions/core/spec/metadata.js';
import type { TableIdentifier, TableMetadata } from '../../functions/core/spec/types.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Writes the table's next metadata version as `edit` leaves a copy of the current one, the way a
 * hand edit or another tool would (no catalog checks). Returns the new version's location.
 */
export async function tamperMetadata(
  catalog: EmbeddedCatalog,
  id: TableIdentifier,
  edit: (md: TableMetadata) => void,
): Promise<string> {
  const table = await catalog.loadTable(id);
  const md = parseTableMetadata(decoder.decode(await table.io.read(table.metadataLocation)));
  edit(md);
  const version = Number(/\/v(\d+)\.metadata\.json$/.exec(table.metadataLocation)![1]) + 1;
  const folder = table.metadataLocation.replace(/\/[^/]+$/, '');
  const next = `${folder}/v${version}.metadata.json`;
  await table.io.writeIfAbsent(next, encoder.encode(serializeTableMetadata(md)));
  await table.io.write(`${folder}/version-hint.text`, encoder.encode(String(version)));
  return next;
}

/**
 * Creates `child` inside `parent`'s folder as if the warehouse predated the embedded catalog's nesting
 * check: `parent`'s folder is moved aside while `child` is created, then put back. Every path in either
 * table's metadata stays true. `fill` writes rows into a table just created.
 */
export async function nestTables(
  catalog: EmbeddedCatalog,
  parent: TableIdentifier,
  child: TableIdentifier,
  fill: (id: TableIdentifier) => Promise<void>,
): Promise<void> {
  await fill(parent);
  const parentDir = catalog.tableLocation(parent);
  const aside = `${parentDir}.aside`;
  await rename(parentDir, aside);
  await fill(child);
  await mkdir(parentDir, { recursive: true });
  for (const entry of await readdir(aside)) await rename(join(aside, entry), join(parentDir, entry));
  await rmdir(aside);
}

/**
 * Creates a table (through `fill`) wherever its identifier puts it, nested in or holding tables already
 * there, as a warehouse from before the nesting check could hold them: the namespace's top folder is
 * moved aside while `fill` creates the table, then merged back. Every path in every table stays true.
 */
export async function createUnchecked(
  catalog: EmbeddedCatalog,
  id: TableIdentifier,
  fill: (id: TableIdentifier) => Promise<void>,
): Promise<void> {
  const top = join(catalog.warehouse, id.namespace[0]);
  const aside = `${top}.aside`;
  const existed = await stat(top).then(
    () => true,
    () => false,
  );
  if (existed) await rename(top, aside);
  await fill(id);
  if (existed) await mergeInto(aside, top);
}

/** Moves everything in `from` into `to`, folder by folder; `from` is gone afterwards. */
async function mergeInto(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const target = join(to, entry.name);
    const present = await stat(target).then(
      (s) => s,
      () => undefined,
    );
    if (!present) await rename(join(from, entry.name), target);
    else if (entry.isDirectory() && present.isDirectory()) await mergeInto(join(from, entry.name), target);
    else throw new Error(`${target} exists on both sides`);
  }
  await rm(from, { recursive: true, force: true });
}

/**
 * A catalog that reports `location` as the table's location, whatever its metadata says — what floe
 * sees from a REST catalog whose answer is wrong. Commits go through `inner` with the true metadata.
 */
export class LocationLyingCatalog implements Catalog {
  readonly name = 'location-lying';
  constructor(
    readonly inner: Catalog,
    readonly lies: Map<string, string>,
  ) {}
  private lie(table: LoadedTable): LoadedTable {
    const location = this.lies.get(key(table.identifier));
    return location === undefined ? table : { ...table, metadata: { ...table.metadata, location } };
  }
  private truth(table: LoadedTable | undefined, real: LoadedTable): LoadedTable | undefined {
    return table && { ...table, metadata: { ...table.metadata, location: real.metadata.location } };
  }
  async loadTable(id: TableIdentifier): Promise<LoadedTable> {
    return this.lie(await this.inner.loadTable(id));
  }
  tableExists(id: TableIdentifier): Promise<boolean> {
    return this.inner.tableExists(id);
  }
  async createTable(id: TableIdentifier, req: Parameters<Catalog['createTable']>[1]): Promise<LoadedTable> {
    return this.lie(await this.inner.createTable(id, req));
  }
  listTables(ns: string[]): Promise<TableIdentifier[]> {
    return this.inner.listTables(ns);
  }
  async commitTable(
    id: TableIdentifier,
    requirements: TableRequirement[],
    updates: TableUpdate[],
    base?: LoadedTable,
  ): Promise<LoadedTable> {
    const real = await this.inner.loadTable(id);
    return this.lie(await this.inner.commitTable(id, requirements, updates, this.truth(base, real)));
  }
}

function key(id: TableIdentifier): string {
  return [...id.namespace, id.name].join('.');
}
