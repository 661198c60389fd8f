/**
 * Micro: the key index's in-process view (key-index/key-view.ts) at a size the keyed-deletes section
 * cannot build here in reasonable time (10M keys: hours of initial load). Folds `keys` live entries
 * (plus one in ten replaced: a death and a newer live entry) as one read of a whole index would, then
 * looks up batches of 1,000 random keys. Prints the view's memory (heap + external, measured after a
 * full GC, and the view's own estimate the cache bounds), the fold's CPU and wall (the in-memory part
 * of a cold start: the Parquet reads come on top) and the median lookup's. Keys are longs (`i123`, the
 * text cdc/record-key.ts makes of a long) or UUID strings. Not part of `npm run bench` (10M keys take
 * ~1 GB and tens of seconds).
 *
 *   npx tsx test/bench/keyed-deletes-view.ts [keys=10000000] [long|uuid]
 */
import type { IndexEntry } from '../../functions/core/key-index/index-entries.js';
import { KeyView } from '../../functions/core/key-index/key-view.js';
import { collectGarbage, median, timed } from './stats.js';

const keys = Number(process.argv[2] ?? 10_000_000);
const kind = process.argv[3] === 'uuid' ? 'uuid' : 'long';
const FILES = 2_000;
const LOOKUPS = 7;
const paths = Array.from(
  { length: FILES },
  (_, i) =>
    `s3://floe-bench/warehouse/bench/keyed_position/data/${String(i).padStart(5, '0')}-0-7d3f0c1e-9a4b-4c2d-8e6f-${String(i).padStart(12, '0')}.parquet`,
);

/** The key text of key number `k`: a long's, or a (deterministic) UUID string's. */
function keyText(k: number): string {
  if (kind === 'long') return `i${k}`;
  const hex = (k * 2_654_435_761).toString(16).padStart(12, '0').slice(-12);
  return `s"7d3f0c1e-9a4b-4c2d-8e6f-${hex}"`;
}

function* entries(): Generator<IndexEntry> {
  const rowsPerFile = Math.ceil(keys / FILES);
  for (let k = 1; k <= keys; k++) {
    const file = Math.floor((k - 1) / rowsPerFile);
    const version = { topic: 'shop.public.orders', partition: k % 3, offset: BigInt(k) };
    const row = { key: keyText(k), filePath: paths[file]!, pos: BigInt((k - 1) % rowsPerFile) };
    yield { ...row, live: true, seq: BigInt(1 + file), version };
    if (k % 10 === 0) {
      yield { ...row, live: false, seq: BigInt(FILES + 1), version };
      yield {
        key: row.key,
        filePath: paths[(file + 1) % FILES]!,
        pos: BigInt(rowsPerFile + k),
        live: true,
        seq: BigInt(FILES + 1),
        version,
      };
    }
  }
}

const memory = () => {
  const m = process.memoryUsage();
  // external includes the array buffers.
  return m.heapUsed + m.external;
};

collectGarbage();
const before = memory();
const view = new KeyView();
const fold = await timed(
  () => {
    const folded = view.fold(entries());
    // As the view cache does after reading an index whole.
    view.trim();
    return folded;
  },
  { fullGcFirst: false },
);
if (fold.result !== true) throw new Error(`the fold answered ${fold.result}`);
collectGarbage();
// V8 frees the backing stores of dropped typed arrays (the ones the view grew out of) on a
// background task after the GC: until then `external` still counts them.
await new Promise((resolve) => setTimeout(resolve, 500));
collectGarbage();
const held = memory() - before;
const lookups = [];
for (let b = 0; b < LOOKUPS; b++) {
  const batch = Array.from({ length: 1_000 }, (_, i) => keyText(1 + ((i * 7_919_003 + b * 104_729) % keys)));
  lookups.push(await timed(() => batch.filter((k) => view.state(k).row !== null).length));
}
console.log(
  JSON.stringify({
    keys: view.size,
    kind,
    measured_mb: Math.round(held / 2 ** 20),
    estimated_mb: Math.round(view.bytes / 2 ** 20),
    bytes_per_key: Math.round(held / view.size),
    fold_cpu_ms: Math.round(fold.cpuMs),
    fold_wall_ms: Math.round(fold.wallMs),
    lookup_1000_keys_cpu_ms: Number(median(lookups.map((l) => l.cpuMs)).toFixed(2)),
    lookup_1000_keys_wall_ms: Number(median(lookups.map((l) => l.wallMs)).toFixed(2)),
    found: lookups[0]!.result,
  }),
);
