/**
 * The key index as a RowLocator (cdc/locate-rows.ts): bring the index up to the snapshot the batch is
 * planned on (catch-up.ts), look the batch's keys up in the process's view of the whole index
 * (view-cache.ts: only what the index gained since the last batch is read; an index too large for a
 * view is read by the buckets the keys hash to instead), and turn each key's live row into the
 * snapshot's DataFile and position (live-files.ts). An entry naming a file that is
 * not live in the snapshot, or a position past its end, means the index is wrong: that is never
 * deleted by; the lookup fails with KeyIndexMismatchError and the caller scans instead.
 *
 * When the index cannot be used — another writer's index commit covers a newer snapshot than the one
 * loaded (`ahead`: normal with concurrent writers), or anything in the index path fails (`failed`) —
 * the batch falls back to the scan (scanRowLocator), and `onFallback` says why: the index is an
 * accelerator, never a reason for a batch to fail.
 */
import type { Catalog, LoadedTable } from '../catalog/catalog.js';
import { type RowLocation, type RowLocator, scanRowLocator } from '../cdc/locate-rows.js';
import { LakeError } from '../errors.js';
import type { Expression } from '../scan/expression.js';
import { planScan } from '../scan/plan-scan.js';
import { readScan } from '../scan/read-scan.js';
import { currentSnapshot } from '../spec/metadata.js';
import { catchUpIndex } from './catch-up.js';
import { type IndexView, rowEntry, viewOf } from './index-entries.js';
import type { KeyStates } from './key-view.js';
import { type LiveFilesCache, sharedLiveFiles } from './live-files.js';
import { type IndexViewCache, sharedIndexViews } from './view-cache.js';

/**
 * The most rows a batch scans to rebuild an index (a new table's first batches, a small table): a larger
 * table's rebuild is `floe index rebuild`'s, and its batches scan meanwhile.
 */
export const BATCH_REBUILD_ROWS = 100_000;

/** Past this many keys, the lookup reads every bucket (a longer `in` list prunes nothing more). */
const IN_LIMIT = 256;

/** The index names a row the table does not have: it is wrong, and must be rebuilt. */
export class KeyIndexMismatchError extends LakeError {
  constructor(message: string) {
    super(`${message}; rebuild the index (floe index rebuild)`, { retryable: false });
  }
}

/**
 * The view of the entries of `keys` in `index` (every key when `keys` is undefined).
 * @throws NotFoundError / TransientIOError / ValidationError from planning and reading the index
 */
export async function readIndexView(index: LoadedTable, keys?: readonly string[]): Promise<IndexView> {
  const filter: Expression | undefined =
    keys !== undefined && keys.length <= IN_LIMIT ? { op: 'in', term: 'key', values: [...keys] } : undefined;
  const wanted = keys === undefined ? undefined : new Set(keys);
  const entries = [];
  if (currentSnapshot(index.metadata) !== undefined) {
    const plan = await planScan(index, { filter });
    for await (const row of readScan(index, plan)) {
      const entry = rowEntry(row);
      if (entry && (wanted === undefined || wanted.has(entry.key))) entries.push(entry);
    }
  }
  return viewOf(entries);
}

/**
 * The live rows of `keys` by `view`, as locations in `table`'s loaded snapshot.
 * @throws KeyIndexMismatchError when the view names a row the snapshot does not have
 * @throws as LiveFilesCache.filesOf
 */
async function locationsIn(
  table: LoadedTable,
  keys: readonly string[],
  view: KeyStates,
  liveFiles: LiveFilesCache,
): Promise<RowLocation[]> {
  const live = keys.flatMap((key) => {
    const { row } = view.state(key);
    return row ? [{ key, ...row }] : [];
  });
  if (live.length === 0) return [];
  const files = await liveFiles.filesOf(table);
  return live.map((row) => {
    const task = files.get(row.filePath);
    if (task === undefined)
      throw new KeyIndexMismatchError(`the key index names ${row.filePath}, which is not live in the table`);
    if (row.pos < 0n || row.pos >= task.file.record_count)
      throw new KeyIndexMismatchError(`the key index names row ${row.pos} of ${row.filePath}, past its end`);
    return { file: task.file, specId: task.specId, pos: Number(row.pos), key: row.key };
  });
}

/** Where a locator keeps what it learnt between batches. */
export interface LocatorCaches {
  views: IndexViewCache;
  files: LiveFilesCache;
}

/**
 * A RowLocator reading the key index of the located table (kept by `catalog`).
 * `onFallback` hears why a lookup used the scan instead; `caches`: the views and files kept between
 * batches (@default the process's own). Never throws (its `locate` throws what scanRowLocator throws
 * when the fallback scan fails too).
 */
export function keyIndexLocator(
  catalog: Catalog,
  onFallback?: (reason: string, kind: 'ahead' | 'failed') => void,
  caches: LocatorCaches = { views: sharedIndexViews, files: sharedLiveFiles },
): RowLocator {
  return {
    async locate(table, columns, keys) {
      const snapshotId = currentSnapshot(table.metadata)?.['snapshot-id'] ?? null;
      if (keys.length === 0 || snapshotId === null) return scanRowLocator.locate(table, columns, keys);
      let reason: string;
      let kind: 'ahead' | 'failed' = 'failed';
      try {
        const texts = [...new Set(keys.map((k) => k.text))];
        // The view this process's own commit left covers the snapshot: no index to load or catch up.
        const held = await caches.views.covering(table.metadata['table-uuid'], snapshotId);
        if (held) return { snapshotId, rows: await locationsIn(table, texts, held, caches.files) };
        const up = await catchUpIndex(catalog, table, columns, { maxRebuildRows: BATCH_REBUILD_ROWS });
        if (up.kind === 'covered') {
          const view = (await caches.views.view(up.index)) ?? (await readIndexView(up.index, texts));
          return { snapshotId, rows: await locationsIn(table, texts, view, caches.files) };
        }
        reason = 'the key index covers a newer snapshot than the batch was planned on';
        kind = 'ahead';
      } catch (error) {
        if (!(error instanceof LakeError)) throw error;
        reason = `the key index could not be used: ${error.message}`;
      }
      onFallback?.(reason, kind);
      return scanRowLocator.locate(table, columns, keys);
    },
  };
}
