/**
 * The files of a CDC table's live tail: the keys' final rows, and delete files for the cold rows the
 * tail replaces or deletes. Their form follows the table's `floe.delete-mode`, as ingestion's does:
 *
 * - `position` (the default): the replaced rows are located in the committed snapshot (a RowLocator:
 *   a key-pruned scan, or an index) and named by position delete files (`file_path`, `pos`, sorted,
 *   whole-path bounds: cdc/write-position-deletes.ts). They name cold data files only, so the tail's
 *   own rows are never reached; every engine reads them (PyIceberg refuses equality deletes).
 * - `equality`: equality delete files holding the touched keys; at the live snapshot's sequence number
 *   they reach the cold rows only.
 *
 * A format-version 3 table keeps equality deletes: v3 forbids new position delete files (deletion
 * vectors replace them), and floe does not write deletion vectors for the tail.
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
import { writePositionDeletes } from '../cdc/write-position-deletes.js';
import type { KeyColumn } from '../routing/table-mode.js';
import { hasDataFiles } from '../spec/metadata.js';
import { type DeleteMode, readIngestProperties } from '../spec/table-properties.js';
import type { DataFile, Schema, TableMetadata } from '../spec/types.js';
import { writeRows } from '../table/write-rows.js';

/** The tail's files, and the metadata updates they need (an unpartitioned spec for equality deletes). */
export interface TailFiles {
  data: DataFile[];
  deletes: DataFile[];
  preUpdates: TableUpdate[];
}

/** Written into the live cache folder under this prefix, like the tail's data files. */
const PREFIX = 'live';

/**
 * How the tail deletes cold rows: the table's delete mode, but equality for a table that is not
 * format-version 2 (see the file comment).
 * @throws ValidationError for a malformed `floe.delete-mode`
 */
export function tailDeleteMode(md: TableMetadata): DeleteMode {
  const mode = readIngestProperties(md.properties).deleteMode;
  return mode === 'position' && md['format-version'] === 2 ? 'position' : 'equality';
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
    return { data: written.dataFiles, deletes: written.deleteFiles, preUpdates: scope?.preUpdates ?? [] };
  }
  const located = finals.some((f) => f.deleteExisting)
    ? (await locateReplaced(table, key, finals, locator)).rows
    : [];
  const rows = finals.flatMap((f) => (f.row ? [f.row] : []));
  const data = rows.length ? await writeRows(base, rows, { filePrefix: PREFIX, schema }) : [];
  // Located rows are those of keys with deleteExisting (locateReplaced asks for no others).
  const deletes = await writePositionDeletes(base, located, `${PREFIX}-`);
  return { data, deletes, preUpdates: [] };
}
