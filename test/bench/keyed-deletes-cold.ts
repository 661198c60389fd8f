/**
 * Micro: the cold build of a key index view from a real index (embedded catalog, 16 buckets, `appends`
 * appends: 64 files at the defaults), the way a new container's first batch makes it
 * (`new IndexViewCache().view()`: Parquet read straight into columns, index-columns.ts) against the
 * way it was made before (rows read as objects, rowEntry, KeyView.foldChunks), back to back in one
 * process, each after a full GC. Prints CPU and wall per round and the medians. Not part of
 * `npm run bench` (writing the index takes tens of seconds).
 *
 *   npx tsx test/bench/keyed-deletes-cold.ts [keys=1000000] [appends=4] [rounds=3]
 */
import type { LoadedTable } from '../../functions/core/catalog/catalog.js';
import { readDataFile } from '../../functions/core/data/parquet/read/read-data-file.js';
import { appendEntries } from '../../functions/core/key-index/index-commit.js';
import { type IndexEntry, rowEntry } from '../../functions/core/key-index/index-entries.js';
import { INDEX_SCHEMA, loadOrCreateIndex } from '../../functions/core/key-index/index-table.js';
import { KeyView } from '../../functions/core/key-index/key-view.js';
import { IndexViewCache } from '../../functions/core/key-index/view-cache.js';
import { readSnapshotManifests } from '../../functions/core/table/snapshot-manifests.js';
import { currentSnapshot } from '../../functions/core/spec/metadata.js';
import { tempWarehouse } from '../support/tables.js';
import { median, round, timed } from './stats.js';

const keys = Number(process.argv[2] ?? 1_000_000);
const appends = Number(process.argv[3] ?? 4);
const rounds = Number(process.argv[4] ?? 3);

/** The old cold build: rows, then entries, then the fold (view-cache.ts before index-columns.ts). */
async function rowsBuild(index: LoadedTable): Promise<KeyView> {
  const snapshot = currentSnapshot(index.metadata)!;
  const manifests = await readSnapshotManifests(index.io, snapshot);
  const paths = manifests.flatMap((m) => m.entries.map((e) => e.data_file.file_path));
  const view = new KeyView();
  async function* chunks(): AsyncGenerator<IndexEntry[]> {
    const reads: Promise<IndexEntry[]>[] = [];
    const start = (i: number) => {
      if (i < paths.length)
        reads[i] = readDataFile(index.io, paths[i]!, INDEX_SCHEMA).then((rows) =>
          rows.flatMap((r) => rowEntry(r) ?? []),
        );
    };
    for (let i = 0; i < Math.min(4, paths.length); i++) start(i);
    for (let i = 0; i < paths.length; i++) {
      const entries = await reads[i]!;
      delete reads[i];
      start(i + 4);
      yield entries;
    }
  }
  if ((await view.foldChunks(chunks())) !== true) throw new Error('fold refused');
  view.trim();
  return view;
}

const wh = await tempWarehouse();
try {
  let index = await loadOrCreateIndex(wh.catalog, { namespace: ['bench'], name: 'orders' });
  const per = Math.ceil(keys / appends);
  for (let a = 0; a < appends; a++) {
    const entries: IndexEntry[] = [];
    for (let k = a * per; k < Math.min(keys, (a + 1) * per); k++) {
      const version = { topic: 'shop.public.orders', partition: k % 3, offset: BigInt(k) };
      entries.push({
        key: `i${k}`,
        filePath: `s3://floe-bench/warehouse/bench/orders/data/${a}-${k % 7}.parquet`,
        pos: BigInt(k),
        live: true,
        seq: BigInt(a + 1),
        version,
      });
    }
    const coverage = { snapshotId: BigInt(a + 1), sequenceNumber: a + 1, tableUuid: 'main' };
    const out = await appendEntries(wh.catalog, index, entries, coverage, () => 'append');
    if (out.kind !== 'committed') throw new Error('append did not commit');
    index = out.index;
  }
  const cpu: Record<'rows' | 'columns', number[]> = { rows: [], columns: [] };
  for (let r = 0; r < rounds; r++) {
    const old = await timed(() => rowsBuild(index));
    const now = await timed(() => new IndexViewCache().view(index));
    if (old.result.size !== now.result?.size) throw new Error('the two builds differ in size');
    cpu.rows.push(old.cpuMs);
    cpu.columns.push(now.cpuMs);
    console.log(
      `round ${r}: rows ${round(old.cpuMs)} ms CPU (${round(old.wallMs)} wall), columns ${round(now.cpuMs)} ms CPU (${round(now.wallMs)} wall)`,
    );
  }
  const [a, b] = [median(cpu.rows), median(cpu.columns)];
  console.log(`${keys} entries: rows ${round(a)} ms CPU, columns ${round(b)} ms CPU, ${round(a / b, 2)}x`);
} finally {
  await wh.cleanup();
}
