/**
 * Shared by the Kafka integration tests: producing test records with kafkajs, running the floe CLI as
 * a child process on the pinned Node 22, and reading what landed with DuckDB (a reader no one here wrote).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompressionTypes, Kafka, logLevel } from 'kafkajs';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { readCommittedOffsets } from '../../../functions/core/table/source-offsets.js';
import { floeNodeArgs, PINNED_NODE } from '../../support/floe-cli.js';
import { duckdbQuery, liveEntries, sqlString } from '../../support/readers.js';

export const SCHEMA = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'name', required: false, type: 'string' },
  ],
};

/** A warehouse folder and a schema file for the table the CLI creates. */
export async function makeWarehouse(): Promise<{ dir: string; schemaFile: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-kafka-'));
  const schemaFile = join(dir, 'schema.json');
  await writeFile(schemaFile, JSON.stringify(SCHEMA));
  return { dir: join(dir, 'wh'), schemaFile };
}

export function kafkaClient(bootstrapServers: string): Kafka {
  return new Kafka({
    brokers: bootstrapServers.split(','),
    clientId: 'floe-test',
    logLevel: logLevel.NOTHING,
  });
}

/** The bytes every record carries in its `bin` header: all 256 byte values would do; these cover the edges. */
export const BINARY_HEADER = Buffer.from([0, 1, 127, 128, 254, 255]);

/**
 * Produces records `first..first+count-1` (value `{"id": n}`), round-robin over 4 partitions, in
 * gzip-compressed batches; every 7th record has no key. A plain producer, acks all: the mock cluster
 * supports no idempotent producer, and exactly once must not rest on one.
 */
export async function produce(
  kafka: Kafka,
  topic: string,
  first: number,
  count: number,
  chunk = 100,
): Promise<void> {
  const producer = kafka.producer({ allowAutoTopicCreation: true });
  await producer.connect();
  try {
    for (let start = first; start < first + count; start += chunk) {
      const n = Math.min(chunk, first + count - start);
      await producer.send({
        topic,
        acks: -1,
        compression: CompressionTypes.GZIP,
        messages: Array.from({ length: n }, (_, i) => {
          const id = start + i;
          return {
            partition: id % 4,
            key: id % 7 === 0 ? null : `key-${id}`,
            value: JSON.stringify({ id, name: `name-${id}` }),
            headers: { bin: BINARY_HEADER, seq: String(id) },
          };
        }),
      });
    }
  } finally {
    await producer.disconnect();
  }
}

export interface FloeProcess {
  child: ChildProcess;
  output: () => string;
  /** Resolves once the output matches `times` times, or rejects when the process exits or the time runs out. */
  waitFor: (pattern: RegExp, times?: number, timeoutMs?: number) => Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Runs `floe <args>` on the pinned Node 22 in one process (test/support/floe-cli.ts: the bundled CLI,
 * or tsx's loader in the same process; the tsx CLI would run floe in a child of its own, which a
 * SIGKILL to the parent leaves running).
 */
export function spawnFloe(args: string[], env: NodeJS.ProcessEnv = {}): FloeProcess {
  const child = spawn(PINNED_NODE, [...floeNodeArgs(), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, KAFKAJS_NO_PARTITIONER_WARNING: '1', ...env },
  });
  let text = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    text += chunk.toString('utf8');
    for (const l of listeners) l();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      for (const l of listeners) l();
      resolve({ code, signal });
    }),
  );
  const count = (pattern: RegExp) => (text.match(new RegExp(pattern.source, 'g')) ?? []).length;
  const waitFor = (pattern: RegExp, times = 1, timeoutMs = 90_000) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (count(pattern) >= times) {
          cleanup();
          resolve();
        } else if (child.exitCode !== null || child.signalCode !== null) {
          cleanup();
          reject(new Error(`floe exited before ${pattern}:\n${text}`));
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`no ${pattern} within ${timeoutMs} ms:\n${text}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      check();
    });
  return { child, output: () => text, waitFor, exited };
}

/** Bounds a wait on a child (not a timed assertion: the test fails with the output if it hangs). */
export async function exitOf(
  p: FloeProcess,
  timeoutMs = 150_000,
): Promise<{ code: number | null; signal: string | null }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`floe did not exit within ${timeoutMs} ms:\n${p.output()}`)),
      timeoutMs,
    );
  });
  try {
    const exit = await Promise.race([p.exited, timeout]);
    // The CLI's exit guard turns a leaked socket or timer into an exit with this line: still a bug.
    if (/^floe: bug: /m.test(p.output())) throw new Error(`floe left something open:\n${p.output()}`);
    return exit;
  } finally {
    clearTimeout(timer);
    if (p.child.exitCode === null && p.child.signalCode === null && p.child.pid !== undefined) {
      p.child.kill('SIGKILL');
    }
  }
}

export interface LandedRow {
  id: bigint;
  partition: number;
  offset: bigint;
  key: Uint8Array | null;
  bin: Uint8Array | null;
  seq: string | null;
}

/** Every live row of the table, read by DuckDB from its Parquet files. */
export async function readLanded(warehouse: string, table: string): Promise<LandedRow[]> {
  const [namespace, name] = table.split('.');
  const loaded = await new EmbeddedCatalog({ warehouse }).loadTable({ namespace: [namespace], name });
  const paths = (await liveEntries(loaded))
    .filter((e) => e.data_file.content === 0)
    .map((e) => sqlString(e.data_file.file_path.replace(/^file:\/\//, '')));
  if (paths.length === 0) return [];
  const rows = await duckdbQuery(
    `select id, _kafka.partition as partition, _kafka."offset" as "offset", _kafka.key as key,
            list_filter(_kafka.headers, h -> h.key = 'bin')[1].value as bin,
            decode(list_filter(_kafka.headers, h -> h.key = 'seq')[1].value) as seq
     from read_parquet([${paths.join(',')}])`,
  );
  return rows.map((r) => ({
    id: BigInt(r.id as bigint),
    partition: Number(r.partition),
    offset: BigInt(r.offset as bigint),
    key: (r.key as Uint8Array | null) ?? null,
    bin: (r.bin as Uint8Array | null) ?? null,
    seq: (r.seq as string | null) ?? null,
  }));
}

/**
 * The table's committed offsets for a topic read in order from 0: partition → last offset (inclusive).
 * Committed offsets are ranges; a partition ingested in order is the one range [0, last], and anything
 * else (a hole, a start past 0) fails here, saying what the table holds.
 */
export async function tableOffsets(
  warehouse: string,
  table: string,
  topic: string,
): Promise<Map<number, bigint>> {
  const [namespace, name] = table.split('.');
  const loaded = await new EmbeddedCatalog({ warehouse }).loadTable({ namespace: [namespace], name });
  const out = new Map<number, bigint>();
  for (const [partition, ranges] of readCommittedOffsets(loaded.metadata).get(topic) ?? []) {
    if (ranges.length !== 1 || ranges[0][0] !== 0n) {
      throw new Error(
        `${topic}/${partition}: expected one range from 0, the table holds ${JSON.stringify(ranges.map((r) => r.map(String)))}`,
      );
    }
    out.set(partition, ranges[0][1]);
  }
  return out;
}

/** Every id exactly once, each row carrying its record's key and header bytes. */
export function checkExactlyOnce(rows: LandedRow[], count: number): void {
  const ids = rows.map((r) => Number(r.id)).sort((a, b) => a - b);
  const expected = Array.from({ length: count }, (_, i) => i);
  if (ids.length !== count || ids.some((id, i) => id !== expected[i])) {
    const seen = new Map<number, number>();
    for (const id of ids) seen.set(id, (seen.get(id) ?? 0) + 1);
    const dup = [...seen].filter(([, n]) => n > 1).slice(0, 5);
    const missing = expected.filter((id) => !seen.has(id)).slice(0, 5);
    throw new Error(
      `expected ids 0..${count - 1} once each, got ${ids.length} rows; duplicates ${JSON.stringify(dup)}, missing ${JSON.stringify(missing)}`,
    );
  }
  for (const r of rows) {
    const id = Number(r.id);
    if (r.partition !== id % 4) throw new Error(`id ${id} landed from partition ${r.partition}`);
    const key = r.key === null ? null : Buffer.from(r.key).toString();
    if (key !== (id % 7 === 0 ? null : `key-${id}`)) throw new Error(`id ${id} has key ${key}`);
    if (r.bin === null || !Buffer.from(r.bin).equals(BINARY_HEADER))
      throw new Error(`id ${id} lost its binary header`);
    if (r.seq !== String(id)) throw new Error(`id ${id} has seq header ${r.seq}`);
  }
}
