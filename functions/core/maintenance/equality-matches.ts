/**
 * The rows some equality delete files delete, by position: for every data file a scan plan gave one of
 * them (so the spec's scoping already held: same spec and partition, or a global delete, and a data
 * sequence number strictly below the delete's), the rows whose equality columns match a row of one of
 * them (delete-mask.ts, the rule every floe read applies) and that no position delete or deletion
 * vector removes already (it needs no second delete). Equality deletes of other groups are not read:
 * holding only the group's keys is what bounds memory; a row one of them also matches is named once
 * still, since the group converted after this one finds it deleted by position.
 */
import type { LoadedTable } from '../catalog/catalog.js';
import type { RowLocation } from '../cdc/locate-rows.js';
import { readArrowFile } from '../data/parquet/read/read-arrow-columns.js';
import type { FileScanTask } from '../scan/scan-plan.js';
import { mapLimited } from '../table/map-limited.js';
import { DeleteMasks } from './delete-mask.js';

/** Data files read at once: each is decoded whole, so this bounds memory with the file size. */
const READ_CONCURRENCY = 2;

export interface EqualityMatches {
  /** The rows to delete by position, each once. */
  rows: RowLocation[];
  /** The data files the deletes applied to (the group's scope), matched or not. */
  scanned: Set<string>;
}

/**
 * The rows the equality delete files `deletes` (paths) delete among the tasks' data files.
 * @throws NotFoundError / TransientIOError from reading files; ValidationError for a malformed delete
 *   file or a key column in no schema; CorruptDeletionVectorError for a deletion vector that does not read
 */
export async function findEqualityMatches(
  table: LoadedTable,
  tasks: readonly FileScanTask[],
  deletes: ReadonlySet<string>,
): Promise<EqualityMatches> {
  const touched = tasks.filter((t) => t.deletes.some((d) => deletes.has(d.file.file_path)));
  const masks = new DeleteMasks(table);
  const perFile = await mapLimited(touched, READ_CONCURRENCY, async (task) => {
    const mine = task.deletes.filter((d) => deletes.has(d.file.file_path));
    const others = task.deletes.filter((d) => d.file.content === 1);
    const file = await readArrowFile(table.io, task.file.file_path);
    const matched = await masks.maskOf({ ...task, deletes: mine }, file);
    const already = await masks.maskOf({ ...task, deletes: others }, file);
    const rows: RowLocation[] = [];
    if (!matched) return rows;
    for (let pos = 0; pos < matched.length; pos++) {
      if (matched[pos] === 1 && already?.[pos] !== 1) {
        rows.push({ file: task.file, specId: task.specId, pos, key: '' });
      }
    }
    return rows;
  });
  return { rows: perFile.flat(), scanned: new Set(touched.map((t) => t.file.file_path)) };
}
