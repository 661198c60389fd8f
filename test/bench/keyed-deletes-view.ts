/**
 * Micro: the key index's in-process view (key-index/key-view.ts) at a size the keyed-deletes section
 * cannot build here in reasonable time (10M keys: hours of initial load). Folds `keys` live entries
 * (plus one in ten replaced: a death and a newer live entry) as one read of a whole index would, then
 * looks up a batch of 1,000 random keys. Prints the view's memory (heap + array buffers, measured
 * after a full GC, and the view's own estimate the cache bounds), the fold's CPU (the in-memory part
 * of a cold start: the Parquet reads come on top) and the lookup's.
 *
 *   npx tsx test/bench/keyed-deletes-view.ts [keys=10000000]
 */
import type { IndexEntry } from '../../functions/core/key-index/index-entries.js';
import { KeyView } from '../../functions/core/key-index/key-view.js';
import { collectGarbage, timed } from './stats.js';

const keys = Number(process.argv[2] ?? 10_000_000);
const FILES = 2_000;
const paths = Array.from(
  { length: FILES },
  (_, i) =>
    `s3://floe-bench/warehouse/bench/keyed_position/data/${String(i).padStart(5, '0')}-0-7d3f0c1e-9a4b-4c2d-8e6f-${String(i).padStart(12, '0')}.parquet`,
);

function* entries(): Generator<IndexEntry> {
  const rowsPerFile = Math.ceil(keys / FILES);
  for (let k = 1; k <= keys; k++) {
    const file = Math.floor((k - 1) / rowsPerFile);
    const version = { topic: 'shop.public.orders', partition: k % 3, offset: BigInt(k) };
    const row = { key: `i${k}`, filePath: paths[file]!, pos: BigInt((k - 1) % rowsPerFile) };
    yield { ...row, live: true, seq: 1n, version };
    if (k % 10 === 0) {
      yield { ...row, live: false, seq: 2n, version };
      yield {
        key: row.key,
        filePath: paths[(file + 1) % FILES]!,
        pos: BigInt(rowsPerFile + k),
        live: true,
        seq: 2n,
        version,
      };
    }
  }
}

const memory = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

collectGarbage();
const before = memory();
const view = new KeyView();
const fold = await timed(() => view.fold(entries()), { fullGcFirst: false });
if (fold.result !== true) throw new Error(`the fold answered ${fold.result}`);
collectGarbage();
const held = memory() - before;
const batch = Array.from({ length: 1_000 }, (_, i) => `i${1 + ((i * 7_919_003) % keys)}`);
const lookup = await timed(() => batch.filter((k) => view.state(k).row !== null).length);
console.log(
  JSON.stringify({
    keys: view.size,
    measured_mb: Math.round(held / 2 ** 20),
    estimated_mb: Math.round(view.bytes / 2 ** 20),
    bytes_per_key: Math.round(held / view.size),
    fold_cpu_ms: Math.round(fold.cpuMs),
    lookup_1000_keys_cpu_ms: Number(lookup.cpuMs.toFixed(2)),
    found: lookup.result,
  }),
);
