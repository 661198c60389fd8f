/**
 * Profiles kafka-serve's first (cold, uncached) read without the network: the kafka-serve bench's
 * table (N records over 4 partitions, ~200-byte JSON values, `_kafka` lineage, no `_kafka.value`) read
 * from offset 0 to its end through ColdBatches as a consumer does, 1 MiB per fetch, with a fresh cache
 * each run. `npx tsx test/bench/profile-kafka-serve.ts [records] [runs] [--first] [--cpu]`.
 * Prints the CPU per run (median) and self time per function (top 40); writes the .cpuprofile to /tmp.
 */
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatReplayValue } from '../../functions/cli/commands/replay.js';
import { EmbeddedCatalog } from '../../functions/core/catalog/embedded-catalog.js';
import { ingestEvent } from '../../functions/core/ingest/ingest-event.js';
import { ColdBatches } from '../../functions/core/kafka/serve/cold-batches.js';
import { TableRecords } from '../../functions/core/kafka/serve/table-records.js';
import { currentSchema } from '../../functions/core/spec/metadata.js';
import type { Row } from '../../functions/core/spec/types.js';
import { jsonEvent } from '../support/json-event.js';

const numbers = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const records = Number(numbers[0] ?? 80_000);
const runs = Number(numbers[1] ?? 3);
const PARTITIONS = 4;
const topic = 'profile-serve';
const perPartition = Math.ceil(records / PARTITIONS);
const folder = await mkdtemp(join(tmpdir(), 'floe-prof-serve-'));
const catalog = new EmbeddedCatalog({ warehouse: join(folder, 'wh') });
const route = {
  table: { namespace: ['bench'], name: 'serve' },
  topics: [topic],
  kafkaLineage: true,
  properties: {},
  schema: {
    type: 'struct' as const,
    'schema-id': 0,
    fields: [
      { id: 1, name: 'id', required: true, type: 'long' as const },
      { id: 2, name: 'name', required: false, type: 'string' as const },
      { id: 3, name: 'note', required: false, type: 'string' as const },
    ],
  },
};
for (let partition = 0; partition < PARTITIONS; partition++) {
  for (let start = 0; start < perPartition; start += 10_000) {
    const count = Math.min(10_000, perPartition - start);
    const values = Array.from({ length: count }, (_, i) => ({
      id: partition * 10_000_000 + start + i,
      name: `customer-${(start + i) % 997}`,
      note: `order ${start + i} of partition ${partition} ${'x'.repeat(120 + ((start + i) % 40))}`,
    }));
    await ingestEvent(
      { catalog, routes: [route] },
      jsonEvent(topic, values, { partition, firstOffset: start, key: (_, i) => `key-${start + i}` }),
    );
  }
}
const table = await catalog.loadTable({ namespace: ['bench'], name: 'serve' });
const tableRecords = new TableRecords((t) => {
  const encode = formatReplayValue(currentSchema(t.metadata));
  return (row: Row) => Buffer.from(encode(row));
});
// As kafka-serve does at start (a no-op where the table's ingest above loaded them already).
await tableRecords.prepare();

/** Reads every partition from 0 to its end as a consumer does; returns the bytes served. */
async function readAll(): Promise<number> {
  const cold = new ColdBatches(tableRecords);
  let bytes = 0;
  for (let partition = 0; partition < PARTITIONS; partition++) {
    let from = 0n;
    const last = BigInt(perPartition - 1);
    while (from <= last) {
      const batches = await cold.read(table, topic, partition, from, last, 1024 * 1024);
      if (batches.length === 0) break;
      for (const b of batches) bytes += b.length;
      const tail = batches[batches.length - 1];
      from = tail.readBigInt64BE(0) + BigInt(tail.readInt32BE(23)) + 1n;
    }
  }
  return bytes;
}

// The first read in a process (what the bench's `first` measures: a fresh kafka-serve) also pays for
// compiling the code it runs; `--first` profiles that one alone.
const first = process.argv.includes('--first');
// --cpu: the CPU figures alone, without the profiler's overhead.
const profiling = !process.argv.includes('--cpu');
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 100 });
if (first && profiling) await session.post('Profiler.start');
const c0 = process.cpuUsage();
const served = await readAll();
const u0 = process.cpuUsage(c0);
console.log(
  `first read in the process: ${served / 1e6} MB, CPU ms ${((u0.user + u0.system) / 1000).toFixed(0)}`,
);
if (!first && profiling) await session.post('Profiler.start');
const cpus: number[] = [];
for (let i = 0; i < (first ? 0 : runs); i++) {
  const c = process.cpuUsage();
  await readAll();
  const u = process.cpuUsage(c);
  cpus.push((u.user + u.system) / 1000);
}
if (!profiling) {
  const sorted = [...cpus].sort((a, b) => a - b);
  if (sorted.length > 0) console.log(`warm process: CPU ms median ${sorted[sorted.length >> 1].toFixed(0)}`);
  await rm(folder, { recursive: true, force: true });
  process.exit(0);
}
const { profile } = await session.post('Profiler.stop');
writeFileSync('/tmp/kafka-serve.cpuprofile', JSON.stringify(profile));
cpus.sort((a, b) => a - b);
if (!first)
  console.log(
    `cold read of ${perPartition * PARTITIONS} records, warm process: CPU ms median ${cpus[cpus.length >> 1].toFixed(0)} (${cpus.map((c) => c.toFixed(0)).join(' ')})`,
  );
const self = new Map<string, number>();
const dt = new Map<number, number>();
const ids = profile.samples ?? [];
const deltas = profile.timeDeltas ?? [];
for (let i = 0; i < ids.length; i++) dt.set(ids[i], (dt.get(ids[i]) ?? 0) + (deltas[i] ?? 0));
let total = 0;
for (const node of profile.nodes) {
  const t = (dt.get(node.id) ?? 0) / 1000;
  total += t;
  const f = node.callFrame;
  const key = `${f.functionName || '(anon)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + t);
}
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 40))
  console.log(
    `${(v / (first ? 1 : runs)).toFixed(2).padStart(8)} ms  ${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`,
  );
await rm(folder, { recursive: true, force: true });
