/**
 * Where the live rows of some keys are in one snapshot: each row's data file and position in it, what
 * a position delete names. Behind one small interface so the key index (../key-index/: key → file and
 * position, kept beside the table; ingest-cdc's default in position mode) replaces the scan without
 * touching the writers; the scan here is its fallback.
 *
 * The scan reads the key columns of the files whose partition and column bounds admit the keys (the
 * key filter of key-versions.ts), applies every live delete (a row already deleted is not deleted
 * again), and keeps the rows whose key is one of the keys.
 */
import type { LoadedTable } from '../catalog/catalog.js';
import type { KeyColumn } from '../routing/table-mode.js';
import { planScan } from '../scan/plan-scan.js';
import { readPath } from '../scan/read-columns.js';
import { readScanLocated } from '../scan/read-scan.js';
import { tupleKey } from '../scan/value-key.js';
import { currentSchema, currentSnapshot } from '../spec/metadata.js';
import type { DataFile, StructType } from '../spec/types.js';
import { keysFilter } from './key-versions.js';
import type { ChangeKey } from './record-key.js';
import type { KeyState } from './collapse-changes.js';

/** One live row of a key: its data file (spec and partition scope the delete) and position. */
export interface RowLocation {
  file: DataFile;
  specId: number;
  pos: number;
  /** The key's text (record-key.ts), for callers that delete only some of the keys. */
  key: string;
}

/** The live rows of `keys` in a table's loaded snapshot. */
export interface RowLocator {
  /**
   * The locations of every live row of `keys` at `table`'s loaded snapshot; `snapshotId` is that
   * snapshot (null: the table has none), what the locations are facts of.
   */
  locate(
    table: LoadedTable,
    columns: readonly KeyColumn[],
    keys: readonly ChangeKey[],
  ): Promise<{ snapshotId: bigint | null; rows: RowLocation[] }>;
}

/**
 * Locates rows by a filtered scan of the snapshot (no index).
 * @throws (from locate) NotFoundError / TransientIOError / ValidationError from planning and reading
 */
export const scanRowLocator: RowLocator = {
  async locate(table, columns, keys) {
    const snapshotId = currentSnapshot(table.metadata)?.['snapshot-id'] ?? null;
    if (keys.length === 0 || snapshotId === null) return { snapshotId, rows: [] };
    const wanted = new Set(keys.map((k) => k.text));
    const schema = currentSchema(table.metadata);
    const tops = new Set(columns.map((c) => c.path[0]));
    const projection: StructType = { type: 'struct', fields: schema.fields.filter((f) => tops.has(f.name)) };
    const plan = await planScan(table, { filter: keysFilter(columns, keys) });
    const rows: RowLocation[] = [];
    // Rows are matched by key text here (an `in` of many values per row is slow); the filter prunes files.
    for await (const located of readScanLocated(table, plan, { schema: projection })) {
      const key = tupleKey(columns.map((c) => readPath(located.row, c.path)));
      if (wanted.has(key)) rows.push({ file: located.file, specId: located.specId, pos: located.pos, key });
    }
    return { snapshotId, rows };
  },
};

/**
 * The live rows of the keys `finals` replace or delete, located in `table`'s loaded snapshot.
 * @throws as RowLocator.locate
 */
export function locateReplaced(
  table: LoadedTable,
  columns: readonly KeyColumn[],
  finals: readonly KeyState[],
  locator: RowLocator = scanRowLocator,
): Promise<{ snapshotId: bigint | null; rows: RowLocation[] }> {
  return locator.locate(
    table,
    columns,
    finals.filter((f) => f.deleteExisting).map((f) => f.key),
  );
}
