/**
 * The kill -9 loop (issue 20's standing adversarial suite): child processes run `floe ingest` over a
 * sequence of batches and `floe maintain` steps (compaction, snapshot expiry, manifest rewrites) on one
 * embedded warehouse at the same time, and are killed with SIGKILL at random moments and restarted — a
 * batch whose `floe ingest` never returned is delivered again, as the ESM would. Afterwards, with
 * nothing in flight, one last `floe maintain all` (orphan window 0: safe only now) collects what the
 * killed processes left behind.
 *
 * Then every record is in the table exactly once — by floe's reader and by DuckDB over the live
 * DataFiles — no file the table references is missing, no batch id repeats, and a neighbouring table
 * and a file beside the warehouse are untouched. Bounded: the loop stops after LOOP_MS.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../../functions/cli/main.js';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { parseIdentifier } from '../../../functions/core/catalog/catalog.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import { EO_SCHEMA, esmEvent, expectedKeys, type OffsetRange } from '../../support/esm-batches.js';
import {
  listTableFiles,
  missingFiles,
  readKeysWithDuckDb,
  readKeysWithFloe,
  repeatedBatchIds,
} from '../../support/exactly-once-checks.js';
import { seededRandom } from '../../support/seeded-random.js';

const LOOP_MS = 30_000;
const KILL_LOOP_TABLE = 'eo.payments';
const NEIGHBOUR = 'eo.neighbour';
const BATCHES = 80;
const CHILD = resolve(import.meta.dirname, '../../support/kill-loop-child.ts');

/** Batch i: three records of each of two partitions. */
const rangesOf = (i: number): OffsetRange[] => [
  { partition: 0, first: i * 3, count: 3 },
  { partition: 1, first: i * 3, count: 3 },
];

interface Child {
  process: ChildProcess;
  lines: string[];
  stderr: string;
  exited: Promise<number | null>;
}

function startChild(args: string[]): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], {
    cwd: resolve(import.meta.dirname, '../../..'),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: Child = {
    process: child,
    lines: [],
    stderr: '',
    exited: new Promise((done) => child.on('exit', (code) => done(code))),
  };
  let partial = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    const text = partial + chunk.toString();
    const lines = text.split('\n');
    partial = lines.pop() ?? '';
    out.lines.push(...lines);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    out.stderr = (out.stderr + chunk.toString()).slice(-4000);
  });
  return out;
}

/** Kills a child of this test by its own handle (SIGKILL: no cleanup runs) and waits for it. */
async function kill(child: Child): Promise<void> {
  if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGKILL');
  await child.exited;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves once the child is past start-up (its `ready` line), or has exited. */
async function ready(child: Child): Promise<void> {
  while (
    !child.lines.includes('ready') &&
    child.process.exitCode === null &&
    child.process.signalCode === null
  )
    await sleep(20);
}

describe('kill -9 loop over ingest and maintenance', () => {
  let root: string;
  let warehouse: string;
  let schema: string;
  const batchFiles: string[] = [];

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'floe-kill-loop-'));
    warehouse = join(root, 'wh');
    schema = join(root, 'schema.json');
    await writeFile(schema, JSON.stringify(EO_SCHEMA));
    for (let i = 0; i < BATCHES; i++) {
      const file = join(root, `batch-${i}.json`);
      await writeFile(file, JSON.stringify(esmEvent(rangesOf(i))));
      batchFiles.push(file);
    }
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('ends with every record exactly once and nothing outside the table touched', async () => {
    // Prepare: a neighbour table and a file beside the warehouse, which nothing may touch
    const catalog = new EmbeddedCatalog({ warehouse });
    const beside = join(root, 'beside.txt');
    await writeFile(beside, 'not the table’s');
    const silent = process.stdout.write.bind(process.stdout);
    process.stdout.write = (() => true) as typeof process.stdout.write;
    try {
      const args = ['--table', NEIGHBOUR, '--schema', schema, batchFiles[0]];
      expect(await main(['ingest', '--warehouse', warehouse, ...args])).toBe(0);
      // The table exists before the first kill: on a loaded machine a child killed again and again
      // before its first commit left maintenance nothing to work on (every step exits 1 without a table).
      const first = ['--table', KILL_LOOP_TABLE, '--schema', schema, batchFiles[0]];
      expect(await main(['ingest', '--warehouse', warehouse, ...first])).toBe(0);
    } finally {
      process.stdout.write = silent;
    }
    const neighbour = await catalog.loadTable(parseIdentifier(NEIGHBOUR));
    const neighbourFiles = (await catalog.io.list(neighbour.metadata.location)).map((f) => f.location);

    // Act: the loop
    const random = seededRandom(20);
    let delivered = 1;
    let kills = 0;
    let ingester: Child | undefined;
    /** The first batch the running ingester was given. */
    let ingesterFrom = 0;
    let maintainer: Child | undefined;
    const confirmed = (child: Child | undefined) =>
      child ? child.lines.filter((l) => l.startsWith('done ')).length : 0;
    const failures: string[] = [];
    /** The maintenance steps that finished (`<step> <exit code>`), across children. */
    const maintained: string[] = [];
    const stopAt = Date.now() + LOOP_MS;
    while (Date.now() < stopAt && delivered < BATCHES) {
      if (!ingester) {
        ingesterFrom = delivered;
        ingester = startChild([
          'ingest',
          warehouse,
          KILL_LOOP_TABLE,
          schema,
          String(delivered),
          ...batchFiles,
        ]);
      }
      if (!maintainer)
        maintainer = startChild(['maintain', warehouse, KILL_LOOP_TABLE, String(Math.floor(random() * 1e9))]);
      await Promise.all([ready(ingester), ready(maintainer)]);
      await sleep(20 + random() * 600);
      const victim = random() < 0.6 ? 'ingest' : random() < 0.8 ? 'maintain' : 'both';
      if (victim !== 'maintain') {
        await kill(ingester);
        kills++;
      }
      if (victim !== 'ingest') {
        await kill(maintainer);
        kills++;
      }
      delivered = ingesterFrom + confirmed(ingester);
      failures.push(
        ...ingester.lines.filter((l) => l.startsWith('failed')).map((l) => `${l}: ${ingester?.stderr}`),
      );
      if (ingester.process.exitCode !== null || ingester.process.signalCode !== null) ingester = undefined;
      if (maintainer.process.exitCode !== null || maintainer.process.signalCode !== null) {
        maintained.push(
          ...maintainer.lines.filter((l) => l.startsWith('maintained ')).map((l) => l.slice(11)),
        );
        maintainer = undefined;
      }
    }
    if (ingester) {
      await kill(ingester);
      delivered = ingesterFrom + confirmed(ingester);
    }
    if (maintainer) {
      await kill(maintainer);
      maintained.push(...maintainer.lines.filter((l) => l.startsWith('maintained ')).map((l) => l.slice(11)));
    }
    // What the loop did not get through is delivered with no one killing; then the quiet clean-up.
    if (delivered < BATCHES) {
      const rest = startChild([
        'ingest',
        warehouse,
        KILL_LOOP_TABLE,
        schema,
        String(delivered),
        ...batchFiles,
      ]);
      expect(await rest.exited, rest.stderr).toBe(0);
    }
    const want = Array.from({ length: BATCHES }, (_, i) => expectedKeys(rangesOf(i)))
      .flat()
      .sort();
    const expectOnce = async (when: string) => {
      const table = await catalog.loadTable(parseIdentifier(KILL_LOOP_TABLE));
      const files = await listTableFiles(table);
      expect(await missingFiles(table, files), `${when}: files missing`).toEqual([]);
      expect(await readKeysWithFloe(table), `${when}: floe's reader`).toEqual(want);
      expect(await readKeysWithDuckDb(table, files.entries), `${when}: DuckDB`).toEqual(want);
      expect(currentSnapshot(table.metadata)?.summary['total-records']).toBe(String(want.length));
      // Maintenance snapshots carry the latest batch id on purpose (carried-summary.ts): count appends.
      const appends = table.metadata.snapshots.filter((s) => s.summary.operation === 'append');
      expect(repeatedBatchIds({ ...table.metadata, snapshots: appends }), when).toEqual([]);
    };

    // Assess: the table as the killed processes left it, then after a quiet clean-up of their debris
    const tally = new Map<string, number>();
    for (const m of maintained) tally.set(m, (tally.get(m) ?? 0) + 1);
    const done = `${kills} kills, maintenance steps (step, exit code): ${JSON.stringify([...tally])}`;
    expect(failures).toEqual([]);
    expect(kills, done).toBeGreaterThan(3);
    expect(tally.get('compact 0') ?? 0, done).toBeGreaterThan(0);
    expect(tally.get('expire-snapshots 0') ?? 0, done).toBeGreaterThan(0);
    await expectOnce('after the kill loop');
    process.stdout.write = (() => true) as typeof process.stdout.write;
    let cleanup: number;
    try {
      const args = ['--table', KILL_LOOP_TABLE, '--older-than', '0', '--retain-last', '1'];
      cleanup = await main(['maintain', 'all', '--warehouse', warehouse, ...args]);
    } finally {
      process.stdout.write = silent;
    }
    expect(cleanup).toBe(0);
    await expectOnce('after the clean-up');
    for (const f of neighbourFiles) expect(await catalog.io.exists(f), f).toBe(true);
    expect(await readFile(beside, 'utf8')).toBe('not the table’s');
  }, 150_000);
});
