/**
 * The index from a full scan of the main table: one live entry per live row of a snapshot (deletes
 * applied), all at that snapshot's sequence number; written in one replace commit, so the index
 * drops every older entry (rebuild is also how the log of entries is compacted).
 */
import type { Catalog, LoadedTable } from '../catalog/catalog.js';
import { KAFKA_FIELD } from '../records/kafka-lineage.js';
import type { KeyColumn } from '../routing/table-mode.js';
import { planScan } from '../scan/plan-scan.js';
import { readScanLocated } from '../scan/read-scan.js';
import { currentSchema } from '../spec/metadata.js';
import type { Snapshot, StructType } from '../spec/types.js';
import { replaceEntries } from './index-commit.js';
import type { IndexEntry } from './index-entries.js';
import { KeyReader } from './snapshot-facts.js';

/**
 * Every live row of `snapshot` of `main` as a live entry.
 * @throws NotFoundError / TransientIOError / ValidationError from planning and reading
 */
export async function scanEntries(
  main: LoadedTable,
  snapshot: Snapshot,
  columns: readonly KeyColumn[],
): Promise<IndexEntry[]> {
  const schema = currentSchema(main.metadata);
  const tops = new Set([...columns.map((c) => c.path[0]), KAFKA_FIELD]);
  const projection: StructType = { type: 'struct', fields: schema.fields.filter((f) => tops.has(f.name)) };
  const reader = new KeyReader(main, columns);
  const seq = BigInt(snapshot['sequence-number']);
  const plan = await planScan(main, { snapshotId: snapshot['snapshot-id'] });
  const entries: IndexEntry[] = [];
  for await (const located of readScanLocated(main, plan, { schema: projection })) {
    entries.push({
      key: reader.keyOf(located.row),
      filePath: located.file.file_path,
      pos: BigInt(located.pos),
      live: true,
      seq,
      version: reader.versionOf(located.row),
    });
  }
  return entries;
}

/**
 * Rebuilds `index` from a scan of `main`'s current snapshot (which it must have).
 * @throws as scanEntries and appendEntries
 */
export async function rebuildIndex(
  catalog: Catalog,
  main: LoadedTable,
  snapshot: Snapshot,
  columns: readonly KeyColumn[],
  index: LoadedTable,
): Promise<LoadedTable> {
  const entries = await scanEntries(main, snapshot, columns);
  return replaceEntries(catalog, index, entries, {
    snapshotId: snapshot['snapshot-id'],
    sequenceNumber: snapshot['sequence-number'],
    tableUuid: main.metadata['table-uuid'],
  });
}
