/** Shared helpers for tests that need a real table in a temporary local warehouse. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Catalog, LoadedTable } from '../../functions/core/catalog/catalog.js';
import type { TableRequirement, TableUpdate } from '../../functions/core/catalog/requirements-updates.js';
import { EmbeddedCatalog } from '../../functions/core/catalog/embedded-catalog.js';
import { CommitStateUnknownError } from '../../functions/core/errors.js';
import type { DataFile, Schema, TableIdentifier } from '../../functions/core/spec/types.js';

export const ORDERS_ID: TableIdentifier = { namespace: ['sales'], name: 'orders' };

export const SIMPLE_SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'name', required: false, type: 'string' },
  ],
};

export async function tempWarehouse(): Promise<{
  dir: string;
  catalog: EmbeddedCatalog;
  cleanup: () => Promise<void>;
}> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-test-'));
  return {
    dir,
    catalog: new EmbeddedCatalog({ warehouse: dir }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** A DataFile entry for metadata-only tests (the Parquet file itself is not needed to commit). */
export function fakeDataFile(table: LoadedTable, name: string, records = 10): DataFile {
  return {
    content: 0,
    file_path: `${table.metadata.location}/data/${name}.parquet`,
    file_format: 'PARQUET',
    spec_id: 0,
    partition: {},
    record_count: BigInt(records),
    file_size_in_bytes: 1000n,
  };
}

export type CommitFault = 'unknown-after-landing' | 'unknown-before-landing' | 'fail';

/** A catalog whose next commits can be made to fail the ways a real one does. */
export class FaultyCatalog implements Catalog {
  readonly name = 'faulty';
  readonly faults: CommitFault[] = [];
  commits = 0;
  /** The table name of each commit request, in order (a keyed table's key index commits too). */
  readonly committed: string[] = [];
  /** Runs before each commit request (e.g. to slip in a concurrent writer's commit). */
  beforeCommit?: () => Promise<void>;
  constructor(readonly inner: Catalog) {}
  loadTable(id: TableIdentifier) {
    return this.inner.loadTable(id);
  }
  tableExists(id: TableIdentifier) {
    return this.inner.tableExists(id);
  }
  createTable(id: TableIdentifier, req: Parameters<Catalog['createTable']>[1]) {
    return this.inner.createTable(id, req);
  }
  listTables(ns: string[]) {
    return this.inner.listTables(ns);
  }
  isCurrent(table: LoadedTable): Promise<boolean> {
    return this.inner.isCurrent ? this.inner.isCurrent(table) : Promise.resolve(false);
  }
  async commitTable(
    id: TableIdentifier,
    requirements: TableRequirement[],
    updates: TableUpdate[],
    base?: LoadedTable,
  ) {
    this.commits++;
    this.committed.push(id.name);
    const hook = this.beforeCommit;
    this.beforeCommit = undefined;
    if (hook) await hook();
    const fault = this.faults.shift();
    if (fault === 'unknown-before-landing')
      throw new CommitStateUnknownError('injected: timed out before the swap');
    const result = await this.inner.commitTable(id, requirements, updates, base);
    if (fault === 'unknown-after-landing')
      throw new CommitStateUnknownError('injected: timed out after the swap');
    return result;
  }
}
