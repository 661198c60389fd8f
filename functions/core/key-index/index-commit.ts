/**
 * Commits to the index table: entries appended (a catch-up) or every entry replaced (a rebuild), each
 * snapshot carrying what main snapshot the index now covers (index-table.ts).
 *
 * Commit point: the index's catalog swap. Before it, the index covers what it covered (the entry files
 * written are invisible and removed on a certain failure); after it, it covers the new snapshot. An
 * unknown outcome leaves the files (they may have landed) and is harmless: entries are facts, so the
 * next catch-up appending the same ones again changes nothing a lookup sees.
 */
import type { Catalog, LoadedTable } from '../catalog/catalog.js';
import { CommitFailedError } from '../errors.js';
import { currentSnapshot } from '../spec/metadata.js';
import type { DataFile } from '../spec/types.js';
import { appendFiles } from '../table/actions/append-files.js';
import { rewriteFiles } from '../table/actions/rewrite-files.js';
import type { Noop, Stale } from '../table/actions/table-action.js';
import { commitAction } from '../table/commit-loop.js';
import { readSnapshotManifests } from '../table/snapshot-manifests.js';
import { writeRows } from '../table/write-rows.js';
import { type Coverage, coverageSummary, readCoverage } from './index-table.js';
import { entryRow, type IndexEntry } from './index-entries.js';
import { pauseAt } from './pause-point.js';
import { sharedIndexViews } from './view-cache.js';

/** How an append judges the index's coverage on a commit attempt's base. */
export type CoverageCheck = (covered: Coverage | null) => 'append' | 'noop' | 'stale';

export type IndexCommit =
  | { kind: 'committed'; index: LoadedTable }
  | { kind: 'noop'; reason: string }
  | { kind: 'stale'; reason: string };

async function writeEntries(index: LoadedTable, entries: readonly IndexEntry[]): Promise<DataFile[]> {
  const files =
    entries.length > 0 ? await writeRows(index, entries.map(entryRow), { filePrefix: 'keys' }) : [];
  await pauseAt('after-index-write');
  return files;
}

async function dropFiles(index: LoadedTable, files: readonly DataFile[]): Promise<void> {
  await Promise.all(files.map((f) => index.io.delete(f.file_path).catch(() => undefined)));
}

/**
 * Appends `entries` to the index and marks it as covering `coverage`, if `check` accepts the base.
 * @throws CommitFailedError / CommitStateUnknownError / LockTimeoutError from the commit loop;
 *   whatever writing the entry files throws
 */
export async function appendEntries(
  catalog: Catalog,
  index: LoadedTable,
  entries: readonly IndexEntry[],
  coverage: Coverage,
  check: CoverageCheck,
): Promise<IndexCommit> {
  const files = await writeEntries(index, entries);
  let outcome: Awaited<ReturnType<typeof commitAction<Noop | Stale>>>;
  try {
    outcome = await commitAction<Noop | Stale>(catalog, index.identifier, {
      prepare: async (base) => {
        const verdict = check(readCoverage(base));
        if (verdict === 'noop') return { kind: 'noop', reason: 'the index already covers the snapshot' };
        if (verdict === 'stale')
          return { kind: 'stale', reason: 'the index moved to another snapshot meanwhile' };
        return appendFiles(base, { dataFiles: files, summary: coverageSummary(coverage) });
      },
    });
  } catch (error) {
    // An unknown outcome may have landed: its files stay (CommitStateUnknownError is left alone).
    if (error instanceof CommitFailedError) await dropFiles(index, files);
    throw error;
  }
  if (outcome.kind === 'committed') {
    // The process's view of the index takes the entries in: the next lookup reads nothing of them.
    await sharedIndexViews.noteAppended(outcome.result.table, entries);
    return { kind: 'committed', index: outcome.result.table };
  }
  await dropFiles(index, files);
  return outcome;
}

/**
 * Replaces every entry of the index by `entries` and marks it as covering `coverage` (one snapshot:
 * a reader sees the old index or the new one).
 * @throws as appendEntries
 */
export async function replaceEntries(
  catalog: Catalog,
  index: LoadedTable,
  entries: readonly IndexEntry[],
  coverage: Coverage,
): Promise<LoadedTable> {
  const files = await writeEntries(index, entries);
  try {
    const outcome = await commitAction<never>(catalog, index.identifier, {
      prepare: async (base) => {
        const summary = coverageSummary(coverage);
        const snapshot = currentSnapshot(base.metadata);
        if (snapshot === undefined) return appendFiles(base, { dataFiles: files, summary });
        const manifests = await readSnapshotManifests(base.io, snapshot);
        const live = manifests.flatMap((m) =>
          m.entries.filter((e) => e.status !== 2).map((e) => e.data_file),
        );
        return rewriteFiles(base, {
          removedDataFiles: live.filter((f) => f.content === 0).map((f) => f.file_path),
          removedDeleteFiles: new Set(live.filter((f) => f.content !== 0).map((f) => f.file_path)),
          addedDataFiles: files,
          deletesApplied: false,
          dataSequenceNumber: BigInt(snapshot['sequence-number']),
          manifests,
          summary,
        });
      },
    });
    await sharedIndexViews.noteReplaced(outcome.result.table, undefined, entries);
    return outcome.result.table;
  } catch (error) {
    if (error instanceof CommitFailedError) await dropFiles(index, files);
    throw error;
  }
}
