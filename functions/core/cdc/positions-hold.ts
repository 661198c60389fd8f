/**
 * Whether position deletes located in one snapshot still delete exactly the rows they must on a later
 * base: the commit round (ingest/commit-batch.ts) asks this of every attempt's base.
 *
 * Located in snapshot S, the deletes name every live row of the batch's keys in S. On a later base they
 * are still right unless a snapshot since S
 *   - removed a data file they name (compaction rewrote it: the position names nothing, or another
 *     row), or
 *   - added rows of one of the keys (another writer's change of the same key: the deletes would leave
 *     that row live beside the batch's), or
 *   - (v3) added or removed a deletion vector of a data file they name: the batch's vector merged the
 *     one it located beside, and would now either leave a second vector for the file or drop the
 *     positions the other writer deleted — it is merged again on the new base.
 * Other changes — other writers' batches of other keys, which is what concurrent invocations on other
 * partitions commit all the time, deletes of any kind, compaction of files they do not name — leave
 * them right. Rows a compaction adds come from the files it removed, so only a removed file they name
 * can move a row of the keys. Without this, every commit by a concurrent writer would send the batch
 * back to locate and write again, and N writers on one keyed table would mostly redo each other's work.
 */
import type { LoadedTable } from '../catalog/catalog.js';
import { readDataFile } from '../data/parquet/read/read-data-file.js';
import { isDeletionVector } from '../manifest/manifest-entry-codec.js';
import type { KeyColumn } from '../routing/table-mode.js';
import { readPath } from '../scan/read-columns.js';
import { tupleKey } from '../scan/value-key.js';
import { currentSchema, currentSnapshot, snapshotById } from '../spec/metadata.js';
import type { DataFile, Snapshot } from '../spec/types.js';
import { mapLimited } from '../table/map-limited.js';
import { readSnapshotManifests } from '../table/snapshot-manifests.js';
import { boundsAdmitKeys } from './key-versions.js';
import type { RowLocation } from './locate-rows.js';
import type { ChangeKey } from './record-key.js';
import { keySchema } from './write-changes.js';

/** Past this many snapshots since the rows were located, locating again is cheaper than reading them. */
const MAX_SNAPSHOTS_SINCE = 32;
const READ_CONCURRENCY = 4;

/** Where rows were located: the snapshot (null: the table had none) and the rows. */
export interface Located {
  snapshotId: bigint | null;
  rows: readonly RowLocation[];
}

/** The snapshots after `since` up to the base's current one, newest first; undefined when `since` is not an ancestor. */
function snapshotsSince(base: LoadedTable, since: bigint | null): Snapshot[] | undefined {
  const out: Snapshot[] = [];
  let at = currentSnapshot(base.metadata);
  while (at && at['snapshot-id'] !== since) {
    out.push(at);
    if (out.length > MAX_SNAPSHOTS_SINCE) return undefined;
    const parent = at['parent-snapshot-id'];
    at = parent === undefined ? undefined : snapshotById(base.metadata, parent);
  }
  return at === undefined && since !== null ? undefined : out;
}

/**
 * Why the located deletes do not hold on `base` (the batch then locates and writes again), or
 * undefined when they do.
 * @throws NotFoundError / TransientIOError / ValidationError from reading manifests and data files
 */
export async function positionsMoved(
  base: LoadedTable,
  located: Located,
  columns: readonly KeyColumn[],
  keys: readonly ChangeKey[],
): Promise<string | undefined> {
  const since = snapshotsSince(base, located.snapshotId);
  if (since === undefined) {
    return 'the snapshot the rows to delete were located in is not a recent ancestor of the table any more';
  }
  if (since.length === 0) return undefined;
  const named = new Set(located.rows.map((r) => r.file.file_path));
  const added: DataFile[] = [];
  for (const snapshot of since) {
    const id = snapshot['snapshot-id'];
    // A snapshot's own changes (added and removed entries) are in the manifests it wrote.
    const own = await readSnapshotManifests(base.io, snapshot, (m) => m.added_snapshot_id === id);
    const rewrite = snapshot.summary.operation === 'replace';
    for (const { entries } of own) {
      for (const entry of entries) {
        if (entry.snapshot_id !== id) continue;
        const vectorOf = isDeletionVector(entry.data_file) ? entry.data_file.referenced_data_file : null;
        if (entry.status !== 0 && vectorOf && named.has(vectorOf)) {
          return `the deletion vector of a data file holding rows to delete changed (${vectorOf})`;
        }
        if (entry.data_file.content !== 0) continue;
        if (entry.status === 2 && named.has(entry.data_file.file_path)) {
          return `a data file holding rows to delete was rewritten (${entry.data_file.file_path})`;
        }
        if (entry.status === 1 && !rewrite) added.push(entry.data_file);
      }
    }
  }
  const candidates = added.filter((f) => boundsAdmitKeys(f, columns, keys));
  if (candidates.length === 0) return undefined;
  const wanted = new Set(keys.map((k) => k.text));
  const struct = keySchema(currentSchema(base.metadata), new Set(columns.map((c) => c.id)));
  const found = await mapLimited(candidates, READ_CONCURRENCY, async (file) => {
    const rows = await readDataFile(base.io, file.file_path, struct);
    return rows.some((row) => wanted.has(tupleKey(columns.map((c) => readPath(row, c.path)))));
  });
  const i = found.indexOf(true);
  return i < 0 ? undefined : `rows of the batch's keys were committed meanwhile (${candidates[i].file_path})`;
}
