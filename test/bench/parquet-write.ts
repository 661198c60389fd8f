/**
 * Micro benchmark: writeDataFiles on 100k realistic rows (long, string, decimal, timestamptz, nested
 * struct), ZSTD, into an in-memory FileIO so storage does not count. Prints rows/s of the best run.
 * Run: npx tsx test/bench/parquet-write.ts [rows]
 */
import { writeDataFiles } from '../../functions/core/data/parquet/write/write-data-file.js';
import type { FileIO } from '../../functions/core/io/file-io.js';
import type { Row, Schema } from '../../functions/core/spec/types.js';

const ROWS = Number(process.argv[2] ?? 100_000);
const RUNS = 5;

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'order_id', required: true, type: 'long' },
    { id: 2, name: 'customer', required: false, type: 'string' },
    { id: 3, name: 'amount', required: false, type: 'decimal(12, 2)' },
    { id: 4, name: 'created_at', required: true, type: 'timestamptz' },
    {
      id: 5,
      name: 'shipping',
      required: false,
      type: {
        type: 'struct',
        fields: [
          { id: 6, name: 'city', required: false, type: 'string' },
          { id: 7, name: 'zip', required: false, type: 'string' },
          { id: 8, name: 'weight_kg', required: false, type: 'double' },
        ],
      },
    },
    {
      id: 9,
      name: '_kafka',
      required: true,
      type: {
        type: 'struct',
        fields: [
          { id: 10, name: 'topic', required: true, type: 'string' },
          { id: 11, name: 'partition', required: true, type: 'int' },
          { id: 12, name: 'offset', required: true, type: 'long' },
        ],
      },
    },
  ],
};

const CITIES = ['Lisbon', 'Berlin', 'Zürich', 'Osaka', 'São Paulo', 'Toronto', 'Nairobi', 'Oslo'];

/** Deterministic pseudo-random rows shaped like an orders topic. */
function makeRows(n: number): Row[] {
  let seed = 42;
  const next = (): number => {
    seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
    return seed;
  };
  const start = 1_767_225_600_000_000n; // 2026-01-01T00:00:00Z in µs
  return Array.from({ length: n }, (_, i) => ({
    order_id: 10_000_000n + BigInt(i),
    customer: `customer-${(next() % 50_000).toString().padStart(6, '0')}`,
    amount: BigInt(next() % 10_000_000),
    created_at: start + BigInt(i) * 1_000_000n + BigInt(next() % 1_000_000),
    shipping:
      i % 10 === 0
        ? null
        : {
            city: CITIES[next() % CITIES.length],
            zip: String(next() % 100_000),
            weight_kg: (next() % 5000) / 100,
          },
    _kafka: { topic: 'orders', partition: i % 12, offset: BigInt(Math.floor(i / 12)) },
  }));
}

function memoryIO(): FileIO & { bytes: number } {
  const store = new Map<string, Uint8Array>();
  return {
    bytes: 0,
    async write(location, data) {
      store.set(location, data);
      this.bytes += data.byteLength;
    },
    async writeIfAbsent(location, data) {
      store.set(location, data);
    },
    async read(location) {
      const data = store.get(location);
      if (!data) throw new Error(`no ${location}`);
      return data;
    },
    async readRange(location, offset, length) {
      return (await this.read(location)).subarray(offset, offset + length);
    },
    async stat(location) {
      const data = store.get(location);
      return data ? { size: data.byteLength, lastModifiedMs: 0 } : undefined;
    },
    async exists(location) {
      return store.has(location);
    },
    async delete(location) {
      store.delete(location);
    },
    async list() {
      return [];
    },
  };
}

const rows = makeRows(ROWS);
const times: number[] = [];
const cpuTimes: number[] = [];
let fileBytes = 0;
for (let run = 0; run < RUNS; run++) {
  const io = memoryIO();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const files = await writeDataFiles(rows, {
    io,
    schema,
    specId: 0,
    partition: {},
    nextLocation: (k) => `mem://bench/data/${run}-${k}.parquet`,
  });
  times.push(performance.now() - t0);
  const cpu = process.cpuUsage(cpu0);
  cpuTimes.push((cpu.user + cpu.system) / 1000);
  fileBytes = files.reduce((sum, f) => sum + Number(f.file_size_in_bytes), 0);
}
const best = Math.min(...times);
const bestCpu = Math.min(...cpuTimes);
const rate = (ms: number) => Math.round(ROWS / (ms / 1000)).toLocaleString('en-US');
// CPU time is reported too: on a shared machine wall time swings with the load; CPU time much less.
console.log(
  `parquet-write: ${ROWS} rows, ${(fileBytes / 1024 / 1024).toFixed(2)} MiB zstd; ` +
    `best wall ${best.toFixed(0)} ms = ${rate(best)} rows/s; best CPU ${bestCpu.toFixed(0)} ms = ${rate(bestCpu)} rows/s ` +
    `(wall runs: ${times.map((t) => t.toFixed(0)).join(', ')} ms; node ${process.version})`,
);
