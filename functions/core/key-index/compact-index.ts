/**
 * Compacts the index's log of entries: every batch appends a few small files (one per key bucket it
 * touches), and a lookup reads every file of its buckets, so past a number of files the index is
 * rewritten from its own view — per key with a live row, that row's newest live entry; nothing for a
 * key without one — in one replace commit. No scan of the main table: the view is what the index
 * already knows, and it covers the same main snapshot afterwards.
 *
 * Entries another writer appends meanwhile stay (only the files read are replaced), and the new
 * snapshot keeps the base's covered marker, so a concurrent catch-up is neither lost nor moved back.
 */
import type { Catalog, LoadedTable } from '../catalog/catalog.js';
import { currentSnapshot } from '../spec/metadata.js';
import { rewriteFiles } from '../table/actions/rewrite-files.js';
import type { Stale } from '../table/actions/table-action.js';
import { commitAction } from '../table/commit-loop.js';
import { readSnapshotManifests } from '../table/snapshot-manifests.js';
import { writeRows } from '../table/write-rows.js';
import { entryRow, type IndexEntry, liveEntriesOf, rowEntry, viewOf } from './index-entries.js';
import { coverageSummary, readCoverage } from './index-table.js';
import { readDataFile } from '../data/parquet/read/read-data-file.js';
import { INDEX_SCHEMA } from './index-table.js';
import { sharedIndexViews } from './view-cache.js';

/** An index with more data files than this is compacted after a batch's catch-up. */
export const COMPACT_FILES = 256;

/** The index's live data files. Never throws. */
export function indexFiles(index: LoadedTable): number {
  return Number(currentSnapshot(index.metadata)?.summary['total-data-files'] ?? '0');
}

/** Per key with a live row, its newest live entry, by reading `paths`. @throws as readDataFile */
async function keptEntries(index: LoadedTable, paths: readonly string[]): Promise<IndexEntry[]> {
  const entries: IndexEntry[] = [];
  for (const path of paths) {
    for (const row of await readDataFile(index.io, path, INDEX_SCHEMA)) {
      const entry = rowEntry(row);
      if (entry) entries.push(entry);
    }
  }
  const view = viewOf(entries);
  return liveEntriesOf(view.keys(), (key) => view.state(key));
}

/**
 * Rewrites the index from its view (the process's own when it holds one of this snapshot); returns the index as committed, or undefined when another writer
 * replaced its files meanwhile (nothing to do then: that writer compacted or rebuilt it).
 * @throws NotFoundError / TransientIOError / ValidationError from reading; the commit loop's errors
 */
export async function compactIndex(catalog: Catalog, index: LoadedTable): Promise<LoadedTable | undefined> {
  const snapshot = currentSnapshot(index.metadata);
  if (snapshot === undefined) return index;
  const manifests = await readSnapshotManifests(index.io, snapshot);
  const read = manifests.flatMap((m) =>
    m.entries.filter((e) => e.status !== 2 && e.data_file.content === 0).map((e) => e.data_file.file_path),
  );
  // The process's view of this very snapshot already says what to keep: nothing to read then.
  const kept = (await sharedIndexViews.held(index))?.liveEntries() ?? (await keptEntries(index, read));
  const files = kept.length > 0 ? await writeRows(index, kept.map(entryRow), { filePrefix: 'keys' }) : [];
  const outcome = await commitAction<Stale>(catalog, index.identifier, {
    prepare: async (base) => {
      const head = currentSnapshot(base.metadata);
      const coverage = readCoverage(base);
      if (head === undefined || coverage === null) return { kind: 'stale', reason: 'the index was replaced' };
      const now = await readSnapshotManifests(base.io, head);
      const live = new Set(
        now.flatMap((m) => m.entries.filter((e) => e.status !== 2).map((e) => e.data_file.file_path)),
      );
      if (read.some((p) => !live.has(p)))
        return { kind: 'stale', reason: 'the index files were replaced meanwhile' };
      return rewriteFiles(base, {
        removedDataFiles: read,
        removedDeleteFiles: new Set(),
        addedDataFiles: files,
        deletesApplied: false,
        dataSequenceNumber: BigInt(head['sequence-number']),
        manifests: now,
        summary: coverageSummary(coverage),
      });
    },
  });
  if (outcome.kind === 'committed') {
    await sharedIndexViews.noteReplaced(outcome.result.table, snapshot['snapshot-id'], kept);
    return outcome.result.table;
  }
  await Promise.all(files.map((f) => index.io.delete(f.file_path).catch(() => undefined)));
  return undefined;
}
