/** Readers no one here wrote (DuckDB, icebird), wrapped for tests. */
import { DuckDBInstance } from '@duckdb/node-api';
import type { LoadedTable } from '../../functions/core/catalog/catalog.js';
import { readManifestEntries } from '../../functions/core/manifest/manifest-reader.js';
import { readManifestList } from '../../functions/core/manifest/manifest-list.js';
import { currentSnapshot } from '../../functions/core/spec/metadata.js';
import type { ManifestEntry } from '../../functions/core/spec/types.js';

/** Live manifest entries (data and deletes) of the table's current snapshot. */
export async function liveEntries(table: LoadedTable): Promise<ManifestEntry[]> {
  const snap = currentSnapshot(table.metadata);
  if (!snap) return [];
  const out: ManifestEntry[] = [];
  for (const m of await readManifestList(table.io, snap['manifest-list'])) {
    for (const e of await readManifestEntries(table.io, m)) if (e.status !== 2) out.push(e);
  }
  return out;
}

/** Runs SQL in a fresh single-threaded in-memory DuckDB; rows as plain objects (BigInts kept). */
export async function duckdbQuery(sql: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  const connection = await instance.connect();
  try {
    const reader = await connection.runAndReadAll(sql);
    return reader.getRowObjectsJS() as Record<string, unknown>[];
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** A SQL string literal. */
export function sqlString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}
