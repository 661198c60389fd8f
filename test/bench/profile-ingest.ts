/**
 * Profiles the warm ingest handler on the bench's 10,000-record batch: `npx tsx test/bench/profile-ingest.ts [runs]`.
 * Prints self time per function (top 40) and the phases' CPU medians; writes the .cpuprofile to /tmp.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getHandlerHarness } from './floe-handler.js';
import { makeOrderMessages } from './orders-batch.js';
import { medianPhases, PhaseRunner } from './ingest-phases.js';

const runs = Number(process.argv[2] ?? 10);
const messages = makeOrderMessages({ records: 10_000, partitions: 6, seed: 42 });
const h = await getHandlerHarness();
for (let i = 0; i < 5; i++) await h.invoke(h.nextEventJson(messages));
const phases = new PhaseRunner(await mkdtemp(join(tmpdir(), 'floe-prof-')), messages);
await phases.measure();
const cpuRuns = [];
for (let i = 0; i < 7; i++) cpuRuns.push((await phases.measure()).cpu);
console.log('phases cpu ms', medianPhases(cpuRuns));
const cpus: number[] = [];
const events = Array.from({ length: runs }, () => h.nextEventJson(messages));
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 100 });
await session.post('Profiler.start');
for (let i = 0; i < runs; i++) {
  const json = events[i];
  const c = process.cpuUsage();
  await h.invoke(json);
  const u = process.cpuUsage(c);
  cpus.push((u.user + u.system) / 1000);
}
const { profile } = await session.post('Profiler.stop');
writeFileSync('/tmp/ingprof/ingest.cpuprofile', JSON.stringify(profile));
cpus.sort((a, b) => a - b);
console.log('handler cpu ms median', cpus[cpus.length >> 1], cpus.map((c) => c.toFixed(0)).join(' '));
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
const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, 45);
for (const [k, v] of top)
  console.log(
    `${(v / runs).toFixed(2).padStart(7)} ms  ${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`,
  );
await h.cleanup();
