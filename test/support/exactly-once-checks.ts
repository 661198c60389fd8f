/**
 * What "exactly once" means for a table, checked three ways: floe's reader (planScan + readScanRows),
 * DuckDB over the live DataFiles (downloaded from storage to a temp dir), and the table's metadata (a
 * linear snapshot history, each batch id at most once, every referenced file still in storage).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { LoadedTable } from '../../functions/core/catalog/catalog.js';
import { readManifestList } from '../../functions/core/manifest/manifest-list.js';
import { planScan } from '../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../functions/core/scan/read-scan.js';
import { currentSnapshot } from '../../functions/core/spec/metadata.js';
import type { ManifestEntry, Row, TableMetadata } from '../../functions/core/spec/types.js';
import { BATCH_ID_KEY } from '../../functions/core/table/source-offsets.js';
import { EO_TOPIC, recordKey, rowId } from './esm-batches.js';
import { duckdbQuery, liveEntries, sqlString } from './readers.js';

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Requests in flight at once when checking many files (a table of 800 commits has thousands). */
const CHECK_CONCURRENCY = 8;

/** Maps with at most `limit` calls in flight, keeping the order. */
async function mapPooled<T, R>(
  items: T[],
  limit: number,
  f: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** `partition:offset` of every row floe's reader returns (sorted, duplicates kept). */
export async function readKeysWithFloe(table: LoadedTable): Promise<string[]> {
  const rows = await readScanRows(table, await planScan(table));
  return rows
    .map((row) => {
      const kafka = row._kafka as Row;
      const partition = kafka.partition as number;
      const offset = kafka.offset as bigint;
      // the value columns and the lineage must describe the same record
      if (row.id !== rowId(partition, Number(offset)) || kafka.topic !== EO_TOPIC) {
        throw new Error(`row ${String(row.id)} does not match its lineage ${partition}:${offset}`);
      }
      return recordKey(partition, offset);
    })
    .sort(byText);
}

/**
 * `partition:offset` of every row in the live DataFiles as DuckDB reads them (sorted, duplicates kept).
 * The files are copied out of storage first: DuckDB's httpfs cannot be installed here.
 * @throws Error when the snapshot has delete files (the appends under test never write any)
 */
export async function readKeysWithDuckDb(table: LoadedTable, entries?: ManifestEntry[]): Promise<string[]> {
  entries ??= await liveEntries(table);
  if (entries.some((e) => e.data_file.content !== 0)) throw new Error('unexpected delete files');
  if (entries.length === 0) return [];
  const dir = await mkdtemp(join(tmpdir(), 'floe-eo-duckdb-'));
  try {
    const paths = await mapPooled(entries, CHECK_CONCURRENCY, async (entry, i) => {
      const local = join(dir, `${i}.parquet`);
      await writeFile(local, await table.io.read(entry.data_file.file_path));
      return sqlString(local);
    });
    const rows = await duckdbQuery(
      `select _kafka.topic as topic, _kafka.partition as p, _kafka."offset" as o, id
       from read_parquet([${paths.join(',')}])`,
    );
    return rows
      .map((r) => {
        if (r.id !== rowId(Number(r.p), Number(r.o)) || r.topic !== EO_TOPIC) {
          throw new Error(`DuckDB row ${String(r.id)} does not match its lineage ${r.p}:${r.o}`);
        }
        return recordKey(Number(r.p), r.o as bigint);
      })
      .sort(byText);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** What is wrong with the snapshot history, if anything: each snapshot's parent must be the one before it. */
export function historyProblems(metadata: TableMetadata): string[] {
  const problems: string[] = [];
  const snapshots = [...metadata.snapshots].sort((a, b) => a['sequence-number'] - b['sequence-number']);
  snapshots.forEach((snapshot, i) => {
    const expectedParent = i === 0 ? undefined : snapshots[i - 1]['snapshot-id'];
    if (snapshot['parent-snapshot-id'] !== expectedParent) {
      problems.push(
        `snapshot ${snapshot['snapshot-id']} (seq ${snapshot['sequence-number']}) has parent ${snapshot['parent-snapshot-id']}, expected ${expectedParent}`,
      );
    }
    if (snapshot['sequence-number'] !== i + 1) {
      problems.push(`snapshot ${snapshot['snapshot-id']} has sequence number ${snapshot['sequence-number']}`);
    }
  });
  const last = snapshots.at(-1)?.['snapshot-id'];
  if (currentSnapshot(metadata)?.['snapshot-id'] !== last)
    problems.push('the current snapshot is not the last');
  return problems;
}

/** Batch ids that more than one snapshot carries. */
export function repeatedBatchIds(metadata: TableMetadata): string[] {
  const counts = new Map<string, number>();
  for (const s of metadata.snapshots) {
    const id = s.summary[BATCH_ID_KEY];
    if (id !== undefined) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return [...counts].filter(([, n]) => n > 1).map(([id]) => id);
}

/** The files a table's current state rests on. */
export interface TableFiles {
  /** Every snapshot's manifest list. */
  manifestLists: string[];
  /** The current snapshot's manifests. */
  manifests: string[];
  /** The current snapshot's live entries. */
  entries: ManifestEntry[];
}

export async function listTableFiles(table: LoadedTable): Promise<TableFiles> {
  const current = currentSnapshot(table.metadata);
  const manifests = current ? await readManifestList(table.io, current['manifest-list']) : [];
  return {
    manifestLists: table.metadata.snapshots.map((s) => s['manifest-list']),
    manifests: manifests.map((m) => m.manifest_path),
    entries: await liveEntries(table),
  };
}

/** Files the table needs (see {@link TableFiles}) that storage no longer has. */
export async function missingFiles(table: LoadedTable, files?: TableFiles): Promise<string[]> {
  files ??= await listTableFiles(table);
  const locations = [
    ...new Set([
      ...files.manifestLists,
      ...files.manifests,
      ...files.entries.map((e) => e.data_file.file_path),
    ]),
  ];
  const present = await mapPooled(locations, CHECK_CONCURRENCY, (location) => table.io.exists(location));
  return locations.filter((_, i) => !present[i]);
}

/** Files the current snapshot needs that some writer asked storage to delete (table buckets refuse deletes). */
export function deletedLiveFiles(table: LoadedTable, files: TableFiles, deleted: Iterable<string>): string[] {
  const asked = new Set(deleted);
  const current = currentSnapshot(table.metadata);
  const live = [
    ...(current ? [current['manifest-list']] : []),
    ...files.manifests,
    ...files.entries.map((e) => e.data_file.file_path),
  ];
  return live.filter((l) => asked.has(l));
}

/**
 * Asserts the table holds exactly the expected records once each (floe's reader and DuckDB agree), its
 * history is linear, no batch id repeats, and nothing it references is missing or was asked to be deleted.
 */
export async function expectExactlyOnce(
  table: LoadedTable,
  expected: string[],
  options: { deleted?: Iterable<string> } = {},
): Promise<void> {
  const files = await listTableFiles(table);
  expect(await missingFiles(table, files), 'files the table references but storage lacks').toEqual([]);
  expect(
    deletedLiveFiles(table, files, options.deleted ?? []),
    'live files a writer tried to delete',
  ).toEqual([]);
  const want = [...expected].sort(byText);
  expect(await readKeysWithFloe(table), "floe's reader").toEqual(want);
  expect(await readKeysWithDuckDb(table, files.entries), 'DuckDB over the live DataFiles').toEqual(want);
  expect(currentSnapshot(table.metadata)?.summary['total-records']).toBe(String(want.length));
  expect(historyProblems(table.metadata)).toEqual([]);
  expect(repeatedBatchIds(table.metadata)).toEqual([]);
}
