/**
 * `floe kafka-serve` in front of a real Kafka-protocol cluster (librdkafka's mock through kcat), read by
 * two clients no one here wrote (kcat/librdkafka and a kafkajs consumer group). The table is ingested
 * from one cluster; the endpoint stands in front of a SECOND, fresh cluster whose early offsets hold
 * filler records (the mock cannot delete records: `--cold-below P:O` stands in for retention). So a
 * record below O that reaches a client with its original key, headers and timestamp can only have come
 * from the table. The mock creates every topic with 4 partitions; the records go to partitions 0 and 1.
 * The route keeps the original value bytes (`kafkaValue`), and the values are JSON a re-encoding would
 * change (key order, spacing), so a value that reaches a client as produced came from `_kafka.value`;
 * the records that failed are served from the dead-letter table at their own offsets.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { connect } from 'node:net';
import { promisify } from 'node:util';
import type { Kafka, KafkaMessage } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  decodeFetchResponse,
  encodeFetchRequest,
} from '../../../functions/core/kafka/serve/fetch-messages.js';
import { Decoder } from '../../../functions/core/kafka/serve/kafkajs-protocol.js';
import { FrameReader, framed } from '../../../functions/core/kafka/serve/wire.js';
import { kcatAvailable, type MockKafka, startMockKafka } from '../../support/kafka-broker.js';
import { exitOf, type FloeProcess, kafkaClient, makeWarehouse, SCHEMA, spawnFloe } from './kafka-kit.js';

const TABLE = 'app.timeline';
const COLD_BELOW = 10;
const PER_PARTITION = 20;
/** Partition 1's first records go to another table (`when`): the table holds partition 1 from offset 3. */
const P1_SKIPPED = 3;
/** Partition 0's record at offset 5 is not even UTF-8: a dead letter, served from the DLQ table. */
const P0_DEAD = 5;
/** Partition 1's record at offset 6 is not JSON: a dead letter too. */
const P1_DEAD = 6;
const BASE_MS = Date.UTC(2026, 0, 1);

interface Original {
  partition: number;
  offset: number;
  key: string | null;
  seq: string;
  timestampMs: number;
  value: Buffer;
  /** Taken by the other route (a `skip` header). */
  skipped: boolean;
}

function originals(): Original[] {
  const out: Original[] = [];
  for (const partition of [0, 1]) {
    for (let offset = 0; offset < PER_PARTITION; offset++) {
      const id = partition * 100 + offset;
      const value =
        partition === 0 && offset === P0_DEAD
          ? Buffer.from([0xff, 0xfe, 0x00, 0x80, id])
          : partition === 1 && offset === P1_DEAD
            ? Buffer.from(`not json ${id}`)
            : Buffer.from(`{"name": "name-${id}",  "id": ${id}}`);
      out.push({
        partition,
        offset,
        key: offset % 7 === 3 ? null : `key-${id}`,
        seq: `${partition}-${offset}`,
        timestampMs: BASE_MS + partition * 1_000 + offset,
        value,
        skipped: partition === 1 && offset < P1_SKIPPED,
      });
    }
  }
  return out;
}

/** Produces records per partition in one batch each, so offsets follow the order given. */
async function kcatLines(endpoint: string, topic: string): Promise<string[]> {
  const { stdout } = await promisify(execFile)(
    'kcat',
    ['-C', '-b', endpoint, '-t', topic, '-o', 'beginning', '-e', '-q', '-f', '%p %o %k %h %T %s\\n'],
    // latin1: one character per byte, so values that are not UTF-8 compare byte for byte.
    { timeout: 30_000, maxBuffer: 16 * 1024 * 1024, encoding: 'latin1' },
  );
  return stdout.split('\n').filter(Boolean);
}

/** A record as a kafkajs consumer got it, in `line`'s form. */
const seenLine = (partition: number, message: KafkaMessage) =>
  `${partition} ${message.offset} ${message.key?.toString() ?? ''} seq=${message.headers?.seq?.toString()},h2=${message.headers?.h2?.toString()} ${message.timestamp} ${message.value?.toString('latin1')}`;

const line = (r: Original) =>
  `${r.partition} ${r.offset} ${r.key ?? ''} seq=${r.seq},h2=x ${r.timestampMs} ${r.value.toString('latin1')}`;

async function produceRecords(kafka: Kafka, topic: string, records: Original[], filler = 0): Promise<void> {
  const producer = kafka.producer({ allowAutoTopicCreation: true });
  await producer.connect();
  try {
    for (const partition of [0, 1]) {
      const fill = Array.from({ length: filler }, (_, i) => ({
        partition,
        key: 'filler',
        value: `filler-${i}`,
        timestamp: String(BASE_MS - 7_200_000),
      }));
      const real = records
        .filter((r) => r.partition === partition)
        .map((r) => ({
          partition,
          key: r.key,
          value: r.value,
          headers: r.skipped ? { seq: r.seq, h2: 'x', skip: 'y' } : { seq: r.seq, h2: 'x' },
          timestamp: String(r.timestampMs),
        }));
      await producer.send({ topic, acks: -1, messages: [...fill, ...real] });
    }
  } finally {
    await producer.disconnect();
  }
}

/** One request/answer over a fresh connection to the endpoint (header v1). */
async function rawRequest(endpoint: string, apiKey: number, version: number, body: Buffer): Promise<Buffer> {
  const [host, port] = endpoint.split(':');
  const socket = connect({ host, port: Number(port) });
  const header = Buffer.alloc(10);
  header.writeInt16BE(apiKey, 0);
  header.writeInt16BE(version, 2);
  header.writeInt32BE(77, 4);
  header.writeInt16BE(0, 8);
  try {
    return await new Promise<Buffer>((resolve, reject) => {
      const reader = new FrameReader();
      socket.on('data', (chunk: Buffer) => {
        const [frame] = reader.push(chunk);
        if (frame) resolve(frame.subarray(4));
      });
      socket.on('error', reject);
      socket.on('close', () => reject(new Error('closed before an answer')));
      socket.write(framed(Buffer.concat([header, body])));
    });
  } finally {
    socket.destroy();
  }
}

describe.skipIf(!kcatAvailable())('floe kafka-serve: the whole timeline through one Kafka endpoint', () => {
  let first: MockKafka;
  let second: MockKafka;
  let serve: FloeProcess;
  let endpoint: string;
  let warehouse: string;
  const topic = `timeline-${randomUUID()}`;
  const records = originals();
  // What a client must see: every record but the other table's (dead letters included).
  const expected = records.filter((r) => !r.skipped);

  beforeAll(async () => {
    [first, second] = await Promise.all([startMockKafka(3), startMockKafka(3)]);
    const { dir, schemaFile } = await makeWarehouse();
    warehouse = dir;
    const routesFile = join(dirname(schemaFile), 'routes.json');
    await writeFile(
      routesFile,
      // The skipped records go to another table: not this table's, nor its dead letters.
      JSON.stringify([
        {
          table: TABLE,
          topics: [topic],
          schema: SCHEMA,
          kafkaValue: true,
          when: { header: 'skip', exists: false },
        },
        { table: 'app.skipped', topics: [topic], schema: SCHEMA, when: { header: 'skip', exists: true } },
      ]),
    );
    const a = kafkaClient(first.bootstrapServers);
    await produceRecords(a, topic, records);
    const backfill = spawnFloe([
      'backfill',
      '--bootstrap-servers',
      first.bootstrapServers,
      '--topic',
      topic,
      '--warehouse',
      dir,
      '--routes',
      routesFile,
      '--from',
      'earliest',
      '--to',
      'latest',
    ]);
    expect((await exitOf(backfill)).code, backfill.output()).toBe(0);
    const b = kafkaClient(second.bootstrapServers);
    await produceRecords(
      b,
      topic,
      records.filter((r) => r.offset >= COLD_BELOW),
      COLD_BELOW,
    );
    serve = spawnFloe([
      'kafka-serve',
      '--warehouse',
      dir,
      '--table',
      TABLE,
      '--bootstrap-servers',
      second.bootstrapServers,
      '--port',
      '0',
      '--cold-below',
      `0:${COLD_BELOW},1:${COLD_BELOW}`,
    ]);
    await serve.waitFor(/Kafka endpoint 127\.0\.0\.1:\d+/, 1, 30_000);
    endpoint = /Kafka endpoint (127\.0\.0\.1:\d+)/.exec(serve.output())![1];
  });
  afterAll(async () => {
    serve?.child.kill('SIGTERM');
    if (serve) await exitOf(serve, 10_000).catch(() => undefined);
    await Promise.all([first?.stop(), second?.stop()]);
  });

  it('kcat reads every record once, in offset order, with its original offset, key, headers and timestamp', async () => {
    // Act
    const lines = await kcatLines(endpoint, topic);
    // Assess
    const want = expected.map(line);
    for (const p of [0, 1]) {
      expect(lines.filter((l) => l.startsWith(`${p} `))).toEqual(want.filter((l) => l.startsWith(`${p} `)));
    }
  });

  it('--cold-below committed serves every committed offset from the table, then reads on from the cluster', async () => {
    // Prepare
    const committed = spawnFloe([
      'kafka-serve',
      '--warehouse',
      warehouse,
      '--table',
      TABLE,
      '--bootstrap-servers',
      second.bootstrapServers,
      '--port',
      '0',
    ]);
    try {
      await committed.waitFor(/Kafka endpoint 127\.0\.0\.1:\d+/, 1, 30_000);
      const at = /Kafka endpoint (127\.0\.0\.1:\d+)/.exec(committed.output())![1];
      // Act
      const lines = await kcatLines(at, topic);
      // Assess: the table and its dead letters hold offsets 0-19 of both partitions (the filtered ones
      // aside), the second cluster's copies of 0-9 are filler, so every line is the table's.
      const want = expected.map(line);
      for (const p of [0, 1]) {
        expect(lines.filter((l) => l.startsWith(`${p} `))).toEqual(want.filter((l) => l.startsWith(`${p} `)));
      }
    } finally {
      committed.child.kill('SIGTERM');
      await exitOf(committed, 10_000).catch(() => undefined);
    }
  });

  it('answers a lookup by time in the cold part from the table, whose timestamps the cluster does not have', async () => {
    // Prepare: the second cluster's offsets 0-9 are filler stamped two hours before BASE_MS, so it
    // answers every T in BASE_MS..BASE_MS+10 with offset 10; the table holds the records' own stamps.
    const admin = kafkaClient(endpoint).admin();
    const cluster = kafkaClient(second.bootstrapServers).admin();
    await Promise.all([admin.connect(), cluster.connect()]);
    try {
      // Act
      const byTime = async (ms: number) =>
        new Map((await admin.fetchTopicOffsetsByTimestamp(topic, ms)).map((p) => [p.partition, p.offset]));
      const [early, letter, p1, live] = await Promise.all(
        [BASE_MS + 4, BASE_MS + P0_DEAD, BASE_MS + 1_005, BASE_MS + 15].map(byTime),
      );
      const clusterLive = await cluster.fetchTopicOffsetsByTimestamp(topic, BASE_MS + 15);
      // Assess: partition 1's table starts at P1_SKIPPED; offset P0_DEAD is a dead letter; past the
      // cold part the cluster's answer stands (the mock cluster answers a time lookup with "none",
      // which kafkajs turns into the partition's end)
      expect([early.get(0), early.get(1)]).toEqual(['4', String(P1_SKIPPED)]);
      expect(letter.get(0)).toBe(String(P0_DEAD));
      expect(p1.get(1)).toBe('5');
      expect(live.get(0)).toBe(clusterLive.find((p) => p.partition === 0)?.offset);
    } finally {
      await Promise.all([admin.disconnect(), cluster.disconnect()]);
    }
  });

  it('a kafkajs consumer group reads the same timeline from the beginning', async () => {
    // Prepare
    const kafka = kafkaClient(endpoint);
    const consumer = kafka.consumer({ groupId: `g-${randomUUID()}`, maxWaitTimeInMs: 100 });
    const seen: string[] = [];
    // Act
    await consumer.connect();
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`only ${seen.length} records:\n${seen.join('\n')}`)),
          60_000,
        );
        consumer
          .run({
            eachMessage: async ({ partition, message }) => {
              seen.push(seenLine(partition, message));
              if (seen.length >= expected.length) {
                clearTimeout(timer);
                resolve();
              }
            },
          })
          .catch(reject);
      });
    } finally {
      await consumer.disconnect();
    }
    // Assess
    const want = expected.map(line);
    for (const p of [0, 1]) {
      expect(seen.filter((l) => l.startsWith(`${p} `))).toEqual(want.filter((l) => l.startsWith(`${p} `)));
    }
  });

  it('a consumer group that commits offsets, stops inside the cold part and resumes sees every record once', async () => {
    // Prepare: a group whose first member reads partition by partition up to STOP (cold) and commits
    const STOP = 6;
    const groupId = `g-${randomUUID()}`;
    const kafka = kafkaClient(endpoint);
    // The mock cluster holds the second member's join for the session timeout less a second after the
    // first left (kafkajs's default: 30 s); the resume from committed offsets is the same with 6 s.
    const first = kafka.consumer({ groupId, maxWaitTimeInMs: 100, sessionTimeout: 6_000 });
    const before: string[] = [];
    const stopped = new Set<number>();
    // Act: read up to STOP on both partitions, committing each record's next offset, then leave
    await first.connect();
    try {
      await first.subscribe({ topic, fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`stuck after:\n${before.join('\n')}`)), 60_000);
        first
          .run({
            autoCommit: false,
            eachMessage: async ({ partition, message }) => {
              if (stopped.has(partition)) return;
              if (Number(message.offset) >= STOP) {
                stopped.add(partition);
                first.pause([{ topic, partitions: [partition] }]);
                if (stopped.size === 2) {
                  clearTimeout(timer);
                  resolve();
                }
                return;
              }
              before.push(seenLine(partition, message));
              await first.commitOffsets([{ topic, partition, offset: String(Number(message.offset) + 1) }]);
            },
          })
          .catch(reject);
      });
    } finally {
      await first.disconnect();
    }
    // Act: a new member of the same group resumes from the committed offsets
    const second = kafka.consumer({ groupId, maxWaitTimeInMs: 100, sessionTimeout: 6_000 });
    const after: string[] = [];
    const rest = expected.filter((r) => r.offset >= STOP).length;
    await second.connect();
    try {
      await second.subscribe({ topic, fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`only ${after.length} of ${rest}:\n${after.join('\n')}`)),
          60_000,
        );
        second
          .run({
            eachMessage: async ({ partition, message }) => {
              after.push(seenLine(partition, message));
              if (after.length >= rest) {
                clearTimeout(timer);
                resolve();
              }
            },
          })
          .catch(reject);
      });
    } finally {
      await second.disconnect();
    }
    // Assess: the two members together saw the timeline once, in order, split at STOP
    const want = expected.map(line);
    const seen = [...before, ...after];
    for (const p of [0, 1]) {
      expect(seen.filter((l) => l.startsWith(`${p} `))).toEqual(want.filter((l) => l.startsWith(`${p} `)));
    }
    expect(before.every((l) => Number(l.split(' ')[1]) < STOP)).toBe(true);
  });

  it('answers ApiVersions of an unknown version with UNSUPPORTED_VERSION, and a fetch below the table with OFFSET_OUT_OF_RANGE', async () => {
    // Act
    const versions = await rawRequest(endpoint, 18, 99, Buffer.alloc(0));
    const fetch = await rawRequest(
      endpoint,
      1,
      4,
      encodeFetchRequest(4, {
        replicaId: -1,
        maxWaitMs: 0,
        minBytes: 0,
        maxBytes: 1_000_000,
        isolationLevel: 0,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [
          {
            topic,
            partitions: [
              {
                partition: 1,
                currentLeaderEpoch: -1,
                fetchOffset: 0n,
                logStartOffset: -1n,
                maxBytes: 100_000,
              },
            ],
          },
        ],
        forgotten: [],
        rackId: '',
      }),
    );
    // Assess
    expect(versions.readInt16BE(0)).toBe(35);
    const answer = decodeFetchResponse(4, new Decoder(fetch));
    expect(answer.topics[0].partitions[0].errorCode).toBe(1);
  });
});
