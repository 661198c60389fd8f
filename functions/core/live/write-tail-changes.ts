/**
 * The files of a CDC table's live tail: the keys' final rows, and delete files for the cold rows the
 * tail replaces or deletes. Their form follows the table's `floe.delete-mode`, as ingestion's does:
 *
 * - `position` (the default): the replaced rows are located in the committed snapshot (a RowLocator:
 *   a key-pruned scan, or an index) and deleted by position the table's way (cdc/delete-positions.ts,
 *   as a CDC batch commits them): position delete files on a format-version 2 table (`file_path`,
 *   `pos`, sorted, whole-path bounds), deletion vectors on a v3 one, each merged with its cold data
 *   file's current vector, which the live snapshot then drops (`replaced`: at most one vector per data
 *   file, and v3 forbids new position delete files — the live snapshot is served to every engine by
 *   `floe serve --live`, so it keeps the spec's rules, not only floe's reader's). They name cold data
 *   files only, so the tail's own rows are never reached; every engine reads them (PyIceberg refuses
 *   equality deletes).
 * - `equality`: equality delete files holding the touched keys; at the live snapshot's sequence number
 *   they reach the cold rows only.
 *
 * No key-versions file is written by position (ingestion's record of a deleted key's version for
 * late batches): the tail is never committed, and no reader of the view needs it.
 */
import type { LoadedTable } from '../catalog/catalog.js';
import type { TableUpdate } from '../catalog/requirements-updates.js';
import type { KeyState } from '../cdc/collapse-changes.js';
import { planDeleteScope } from '../cdc/delete-scope.js';
import { locateReplaced, type RowLocator, scanRowLocator } from '../cdc/locate-rows.js';
import { writeChanges } from '../cdc/write-changes.js';
import { deletePositions } from '../cdc/delete-positions.js';
import type { KeyColumn } from '../routing/table-mode.js';
import { hasDataFiles } from '../spec/metadata.js';
import { type DeleteMode, readIngestProperties } from '../spec/table-properties.js';
import type { DataFile, Schema, TableMetadata } from '../spec/types.js';
import { writeRows } from '../table/write-rows.js';

/** The tail's files, and the metadata updates they need (an unpartitioned spec for equality deletes). */
export interface TailFiles {
  data: DataFile[];
  deletes: DataFile[];
  /** Deletion vectors of the committed snapshot that `deletes` merged and replace (v3). */
  replaced: DataFile[];
  preUpdates: TableUpdate[];
}

/** Written into the live cache folder under this prefix, like the tail's data files. */
const PREFIX = 'live';

/**
 * How the tail deletes cold rows: the table's delete mode (`position` is deletion vectors on a v3
 * table, see the file comment).
 * @throws ValidationError for a malformed `floe.delete-mode`
 */
export function tailDeleteMode(md: TableMetadata): DeleteMode {
  return readIngestProperties(md.properties).deleteMode;
}

/**
 * Writes the tail of a CDC table: `table` is the committed table (where replaced rows are located),
 * `base` the same table seen from its cache folder (where every file is written).
 * @throws ValidationError for a malformed `floe.delete-mode`; whatever locating (NotFoundError,
 *   TransientIOError, ValidationError) and writing (TransientIOError, LakeError) throw
 */
export async function writeTailChanges(
  table: LoadedTable,
  base: LoadedTable,
  changes: { finals: readonly KeyState[]; key: readonly KeyColumn[]; schema: Schema },
  locator: RowLocator = scanRowLocator,
): Promise<TailFiles> {
  const { key, schema } = changes;
  // As ingestion: a table without data files has no older rows for deletes to reach.
  const finals = hasDataFiles(table.metadata)
    ? changes.finals
    : changes.finals.map((f) => ({ ...f, deleteExisting: false }));
  if (tailDeleteMode(table.metadata) === 'equality') {
    const keyIds = key.map((c) => c.id);
    const scope = finals.some((f) => f.deleteExisting) ? await planDeleteScope(base, keyIds) : undefined;
    const written = await writeChanges(base, finals, key, scope, { filePrefix: PREFIX, schema });
    return {
      data: written.dataFiles,
      deletes: written.deleteFiles,
      replaced: [],
      preUpdates: scope?.preUpdates ?? [],
    };
  }
  const located = finals.some((f) => f.deleteExisting)
    ? (await locateReplaced(table, key, finals, locator)).rows
    : [];
  const rows = finals.flatMap((f) => (f.row ? [f.row] : []));
  const data = rows.length ? await writeRows(base, rows, { filePrefix: PREFIX, schema }) : [];
  // Located rows are those of keys with deleteExisting (locateReplaced asks for no others). `base` holds
  // the committed snapshot too: a v3 vector merges the cold file's current one from there.
  const deletes = await deletePositions(base, located, `${PREFIX}-`);
  return { data, deletes: deletes.added, replaced: deletes.replaced, preUpdates: [] };
}
