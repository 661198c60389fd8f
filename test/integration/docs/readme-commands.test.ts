/**
 * Every command a README shows runs: each ```sh / ```bash block of README.md and of every README under
 * functions/, infra/ and test/ is run with bash (`set -eo pipefail`), a README's blocks in order in one
 * temporary folder of its own, as a reader following it would. The folder holds a link to the clone's
 * events/; `floe` on PATH is the clone's CLI on the pinned Node 22 (the run's bundle, test/support/floe-cli.ts,
 * else functions/cli/bin.mjs). A README that names
 * `localhost:9092` gets a librdkafka mock cluster in its place, its topic `orders` holding the sample
 * orders of events/orders-batch-*.json, and `8181` is swapped for a free port. A block that cannot run
 * here says why in a `<!-- not run: reason -->` line right before its fence.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompressionTypes, Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { floeNodeArgs, PINNED_NODE } from '../../support/floe-cli.js';
import { findFreePort } from '../../support/free-port.js';
import { kcatAvailable, type MockKafka, startMockKafka } from '../../support/kafka-broker.js';
import {
  allFencedBlocks,
  COMMAND_LANGUAGES,
  type FencedBlock,
  REPO_ROOT,
} from '../../support/readme-blocks.js';

const README_BROKER = 'localhost:9092';
const README_PORT = /\b8181\b/g;
const BLOCK_TIMEOUT_MS = 90_000;

const commandBlocks = allFencedBlocks().filter((block) => COMMAND_LANGUAGES.has(block.language));
const runnable = commandBlocks.filter((block) => block.notRun === undefined);
const byFile = new Map<string, FencedBlock[]>();
for (const block of runnable) byFile.set(block.file, [...(byFile.get(block.file) ?? []), block]);
const needsKafka = runnable.some((block) => block.code.includes(README_BROKER));
const hasKcat = needsKafka ? kcatAvailable() : true;

/** One folder for the whole file: the `floe` on PATH and Node's compile cache, shared by every README. */
const shared = mkdtempSync(join(tmpdir(), 'floe-readme-'));
const binDir = join(shared, 'bin');
mkdirSync(binDir);
writeFileSync(join(binDir, 'floe'), `#!/bin/sh\nexec "${PINNED_NODE}" ${floeEntry()} "$@"\n`);
chmodSync(join(binDir, 'floe'), 0o755);

/** The Node arguments of the `floe` on PATH, quoted for sh: the bundle when built, else the clone's bin.mjs. */
function floeEntry(): string {
  const args = floeNodeArgs();
  return `"${args.length === 1 ? args[0] : join(REPO_ROOT, 'functions/cli/bin.mjs')}"`;
}

/** The environment a reader's shell would have, without settings that would send floe elsewhere. */
function readerEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(FLOE_|AWS_|KAFKA)/.test(name)),
  );
  return {
    ...env,
    PATH: `${binDir}:${process.env.PATH ?? ''}`,
    NODE_COMPILE_CACHE: join(shared, 'compile-cache'),
  };
}

interface BlockRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

/** Runs one block in its own process group, then ends whatever it left running (a `floe serve &`). */
function runBlock(code: string, cwd: string): Promise<BlockRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `set -eo pipefail\n${code}`], {
      cwd,
      env: readerEnv(),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-20_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const endGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // the group is gone already
      }
    };
    const timer = setTimeout(endGroup, BLOCK_TIMEOUT_MS);
    child.once('error', reject);
    child.once('close', (exitCode, signal) => {
      clearTimeout(timer);
      endGroup();
      resolve({ code: exitCode, signal, output });
    });
  });
}

/** The sample orders of events/orders-batch-*.json, produced to `topic` at their own partitions. */
async function produceSampleOrders(bootstrapServers: string, topic: string): Promise<number> {
  interface EsmRecord {
    partition: number;
    key?: string | null;
    value?: string | null;
    headers?: Record<string, number[]>[];
  }
  const records = ['orders-batch-1.json', 'orders-batch-2.json'].flatMap((name) => {
    const event = JSON.parse(readFileSync(join(REPO_ROOT, 'events', name), 'utf8')) as {
      records: Record<string, EsmRecord[]>;
    };
    return Object.values(event.records).flat();
  });
  const kafka = new Kafka({ brokers: bootstrapServers.split(','), logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ allowAutoTopicCreation: true });
  await producer.connect();
  try {
    await producer.send({
      topic,
      acks: -1,
      compression: CompressionTypes.None,
      messages: records.map((record) => ({
        partition: record.partition,
        key: record.key ? Buffer.from(record.key, 'base64') : null,
        value: record.value ? Buffer.from(record.value, 'base64') : null,
        headers: Object.fromEntries(
          (record.headers ?? []).flatMap((header) =>
            Object.entries(header).map(([name, bytes]) => [name, Buffer.from(bytes)]),
          ),
        ),
      })),
    });
  } finally {
    await producer.disconnect();
  }
  return records.length;
}

const brokers: MockKafka[] = [];

afterAll(async () => {
  await Promise.all(brokers.map((broker) => broker.stop()));
  rmSync(shared, { recursive: true, force: true });
});

describe('README command blocks', () => {
  it('each run here, or say why not', () => {
    // Act
    const notRun = commandBlocks.filter((block) => block.notRun !== undefined);
    console.info(
      `[readme] ${runnable.length} command blocks run; ${notRun.length} not run:\n  ${notRun
        .map((block) => `${block.file}:${block.line} — ${block.notRun}`)
        .join('\n  ')}`,
    );

    // Assess
    expect(runnable.length).toBeGreaterThan(10);
    expect(notRun.filter((block) => block.notRun === '').map((b) => `${b.file}:${b.line}`)).toEqual([]);
    expect(runnable.filter((block) => block.code.trim() === '').map((b) => `${b.file}:${b.line}`)).toEqual(
      [],
    );
  });

  for (const [file, blocks] of byFile) {
    const kafka = blocks.some((block) => block.code.includes(README_BROKER));
    describe.skipIf(kafka && !hasKcat)(file, () => {
      const cwd = mkdtempSync(join(shared, 'reader-'));
      symlinkSync(join(REPO_ROOT, 'events'), join(cwd, 'events'));
      const swap = { broker: README_BROKER, port: '8181' };
      const substitute = (code: string) =>
        code.replaceAll(README_BROKER, swap.broker).replace(README_PORT, swap.port);

      beforeAll(async () => {
        swap.port = String(await findFreePort());
      });

      it.runIf(kafka)('has a broker whose topic orders holds the sample orders', async () => {
        const broker = await startMockKafka(1);
        brokers.push(broker);
        swap.broker = broker.bootstrapServers;
        expect(await produceSampleOrders(broker.bootstrapServers, 'orders')).toBe(240);
      });

      for (const block of blocks) {
        it(`runs the block at line ${block.line}`, async () => {
          // Act
          const result = await runBlock(substitute(block.code), cwd);

          // Assess
          const report = `${block.file}:${block.line} exited ${result.code ?? result.signal}:\n${block.code}\n--- output ---\n${result.output}`;
          expect(result.code, report).toBe(0);
        });
      }
    });
  }
});

describe('npm start, the README’s first command', () => {
  it('is floe demo, which adds nothing when run twice', async () => {
    // Prepare
    const scripts = (
      JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
        scripts: Record<string, string>;
      }
    ).scripts;
    const cwd = mkdtempSync(join(shared, 'start-'));
    symlinkSync(join(REPO_ROOT, 'events'), join(cwd, 'events'));

    // Act
    const first = await runBlock('floe demo', cwd);
    const second = await runBlock('floe demo', cwd);

    // Assess
    expect(scripts.start).toBe('tsx functions/cli/main.ts demo');
    expect(first.code, first.output).toBe(0);
    expect(first.output).toContain('=== the table');
    expect(first.output).toContain('=== a pruned scan');
    expect(first.output).toMatch(/files: \d+ in table → \d+ after partition pruning/);
    expect(second.code, second.output).toBe(0);
    expect(second.output).not.toMatch(/\b[1-9]\d* rows in/);
    expect(second.output).toContain('nothing new (replay skipped)');
  });
});
