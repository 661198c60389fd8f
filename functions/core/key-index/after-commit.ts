/**
 * A CDC batch's index step, after its main commit: catch the index up to the committed snapshot (the
 * batch's own files are read back; the rows it deleted are known by position from its lookup, so their
 * data files are not read again). A failure here loses nothing: the main commit is the truth, and the
 * next batch's lookup catches the index up from where it stopped (catch-up.ts).
 */
import type { Catalog, LoadedTable } from '../catalog/catalog.js';
import type { RowLocation } from '../cdc/locate-rows.js';
import { LakeError } from '../errors.js';
import type { KeyColumn } from '../routing/table-mode.js';
import { catchUpIndex } from './catch-up.js';
import { COMPACT_FILES, compactIndex, indexFiles } from './compact-index.js';
import { BATCH_REBUILD_ROWS } from './index-locator.js';
import { pauseAt } from './pause-point.js';
import type { KeyHints } from './snapshot-facts.js';

/** Path → position → key of located rows. Never throws. */
export function hintsOf(rows: readonly RowLocation[]): KeyHints {
  const hints = new Map<string, Map<number, string>>();
  for (const r of rows) {
    const byPos = hints.get(r.file.file_path) ?? new Map<number, string>();
    hints.set(r.file.file_path, byPos);
    byPos.set(r.pos, r.key);
  }
  return hints;
}

/**
 * Brings the index up to `committed` (the main table as the batch's commit left it); `onProblem` hears
 * why it could not (the index then stays behind, never wrong).
 * @throws only non-LakeError failures (bugs)
 */
export async function indexAfterCommit(
  catalog: Catalog,
  committed: LoadedTable,
  columns: readonly KeyColumn[],
  located: readonly RowLocation[],
  onProblem: (message: string) => void,
): Promise<void> {
  await pauseAt('after-main-commit');
  try {
    const up = await catchUpIndex(catalog, committed, columns, {
      hints: hintsOf(located),
      maxRebuildRows: BATCH_REBUILD_ROWS,
    });
    // Entries pile up one small file per touched bucket per batch: past a bound, the log is compacted.
    if (up.kind === 'covered' && indexFiles(up.index) > COMPACT_FILES) await compactIndex(catalog, up.index);
  } catch (error) {
    if (!(error instanceof LakeError)) throw error;
    onProblem(`the key index stays behind this commit (the next batch catches it up): ${error.message}`);
  }
  await pauseAt('after-index-commit');
}
