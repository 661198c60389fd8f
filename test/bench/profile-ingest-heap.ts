/**
 * Where the warm ingest handler allocates, on the bench's 10,000-record batch:
 * `npx tsx test/bench/profile-ingest-heap.ts [runs]` — sampled allocations per function (top 30),
 * what the garbage collector then has to work through.
 */
import { Session } from 'node:inspector/promises';
import { getHandlerHarness } from './floe-handler.js';
import { makeOrderMessages } from './orders-batch.js';

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

const runs = Number(process.argv[2] ?? 5);
const messages = makeOrderMessages({ records: 10_000, partitions: 6, seed: 42 });
const h = await getHandlerHarness();
for (let i = 0; i < 5; i++) await h.invoke(h.nextEventJson(messages));
const events = Array.from({ length: runs }, () => h.nextEventJson(messages));
const session = new Session();
session.connect();
await session.post('HeapProfiler.enable');
await session.post('HeapProfiler.startSampling', {
  samplingInterval: 1024,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: true,
});
for (const json of events) await h.invoke(json);
const { profile } = await session.post('HeapProfiler.stopSampling');
const self = new Map<string, number>();
let total = 0;
const walk = (node: HeapNode) => {
  const f = node.callFrame;
  const key = `${f.functionName || '(anon)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + node.selfSize);
  total += node.selfSize;
  for (const c of node.children) walk(c);
};
walk(profile.head as unknown as HeapNode);
console.log(`allocated per run: ${(total / runs / 2 ** 20).toFixed(1)} MiB (sampled)`);
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30))
  console.log(`${(v / runs / 2 ** 20).toFixed(2).padStart(7)} MiB  ${k}`);
await h.cleanup();
