/**
 * `floe kafka-serve` at scale, in front of librdkafka's mock cluster (3 brokers, through kcat): 100
 * kafkajs consumers at once, each its own group, read a table's cold range (every record once, the
 * endpoint's peak RSS bounded); a Fetch asking for 2 GiB gets an answer capped whatever it asks;
 * kcat starting inside a cached batch gets exactly its offsets on (librdkafka skips the records before
 * them); and a Produce of partitions led by several brokers is split and lands on each.
 *
 * The table is written in this process (ingestEvent on the embedded catalog the CLI opens with
 * --warehouse): topic `small` (4 partitions × 250 records) for the consumers, topic `big` (one
 * partition, ~6 MB) for the capped fetch. The cluster holds filler at the same offsets, so a record
 * reaching a client as the table's JSON can only have come from the table.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { connect } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { MAX_COLD_RESPONSE_BYTES } from '../../../functions/core/kafka/serve/cold-batches.js';
import {
  decodeFetchResponse,
  encodeFetchRequest,
} from '../../../functions/core/kafka/serve/fetch-messages.js';
import { Decoder } from '../../../functions/core/kafka/serve/kafkajs-protocol.js';
import { FrameReader, framed } from '../../../functions/core/kafka/serve/wire.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { kcatAvailable, type MockKafka, startMockKafka } from '../../support/kafka-broker.js';
import { jsonEvent } from '../../support/json-event.js';
import { exitOf, type FloeProcess, kafkaClient, spawnFloe } from './kafka-kit.js';

const require = createRequire(import.meta.url);
const fetchV11 = require('kafkajs/src/protocol/requests/fetch/v11/response') as {
  decode(raw: Buffer): Promise<{ responses: { partitions: { messages: { offset: string }[] }[] }[] }>;
};

const id = randomUUID().slice(0, 8);
const SMALL = `small-${id}`;
const BIG = `big-${id}`;
const PER_PARTITION = 250;
const BIG_RECORDS = 1_500;
const CONSUMERS = 100;
const ROUTE: TableRoute = {
  table: { namespace: ['app'], name: 'scale' },
  topics: [SMALL, BIG],
  kafkaLineage: true,
  properties: {},
  schema: {
    type: 'struct',
    'schema-id': 0,
    fields: [
      { id: 1, name: 'id', required: true, type: 'long' },
      { id: 2, name: 'name', required: false, type: 'string' },
    ],
  },
};

/** The serve process's peak RSS in MiB (VmHWM of /proc). */
function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1]) / 1024;
}

async function rawFetch(endpoint: string, topic: string, offset: bigint, maxBytes: number): Promise<Buffer> {
  const [host, port] = endpoint.split(':');
  const socket = connect({ host, port: Number(port) });
  const header = Buffer.alloc(10);
  header.writeInt16BE(1, 0);
  header.writeInt16BE(11, 2);
  header.writeInt32BE(7, 4);
  header.writeInt16BE(0, 8);
  const body = encodeFetchRequest(11, {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [
      {
        topic,
        partitions: [
          { partition: 0, currentLeaderEpoch: -1, fetchOffset: offset, logStartOffset: -1n, maxBytes },
        ],
      },
    ],
    forgotten: [],
    rackId: '',
  });
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

describe.skipIf(!kcatAvailable())('floe kafka-serve at scale', () => {
  let cluster: MockKafka;
  let serve: FloeProcess;
  let endpoint: string;

  beforeAll(async () => {
    cluster = await startMockKafka(3);
    const warehouse = join(await mkdtemp(join(tmpdir(), 'floe-serve-scale-')), 'wh');
    const options = { catalog: new EmbeddedCatalog({ warehouse }), routes: [ROUTE] };
    for (let partition = 0; partition < 4; partition++) {
      const values = Array.from({ length: PER_PARTITION }, (_, i) => ({
        id: partition * 1_000 + i,
        name: `n${i}`,
      }));
      await ingestEvent(options, jsonEvent(SMALL, values, { partition }));
    }
    const pad = 'p'.repeat(4_000);
    for (let start = 0; start < BIG_RECORDS; start += 750) {
      const values = Array.from({ length: 750 }, (_, i) => ({ id: start + i, name: `${start + i}${pad}` }));
      await ingestEvent(options, jsonEvent(BIG, values, { firstOffset: start }));
    }
    const producer = kafkaClient(cluster.bootstrapServers).producer({ allowAutoTopicCreation: true });
    await producer.connect();
    try {
      await producer.send({
        topic: SMALL,
        acks: -1,
        messages: Array.from({ length: 4 * PER_PARTITION }, (_, i) => ({
          partition: i % 4,
          value: 'filler',
        })),
      });
      await producer.send({ topic: BIG, acks: -1, messages: [{ partition: 0, value: 'filler' }] });
    } finally {
      await producer.disconnect();
    }
    serve = spawnFloe([
      'kafka-serve',
      '--warehouse',
      warehouse,
      '--table',
      'app.scale',
      '--bootstrap-servers',
      cluster.bootstrapServers,
      '--port',
      '0',
      '--cache-mb',
      '16',
    ]);
    await serve.waitFor(/Kafka endpoint 127\.0\.0\.1:\d+/, 1, 30_000);
    endpoint = /Kafka endpoint (127\.0\.0\.1:\d+)/.exec(serve.output())![1];
  }, 60_000);
  afterAll(async () => {
    serve?.child.kill('SIGTERM');
    if (serve) await exitOf(serve, 10_000).catch(() => undefined);
    await cluster?.stop();
  });

  it('100 concurrent consumers each read every record of the cold range once; the endpoint stays bounded', async () => {
    // Prepare
    const kafka = kafkaClient(endpoint);
    const consumers = Array.from({ length: CONSUMERS }, () =>
      kafka.consumer({ groupId: `g-${randomUUID()}`, maxWaitTimeInMs: 100 }),
    );
    const seen = consumers.map(() => [] as string[]);
    // Act
    try {
      await Promise.all(
        consumers.map(async (consumer, c) => {
          await consumer.connect();
          await consumer.subscribe({ topic: SMALL, fromBeginning: true });
          await new Promise<void>((resolve, reject) => {
            const timer = setTimeout(
              () => reject(new Error(`consumer ${c}: only ${seen[c].length}`)),
              60_000,
            );
            consumer
              .run({
                eachMessage: async ({ partition, message }) => {
                  seen[c].push(`${partition}:${message.offset}:${message.value?.toString()}`);
                  if (seen[c].length >= 4 * PER_PARTITION) {
                    clearTimeout(timer);
                    resolve();
                  }
                },
              })
              .catch(reject);
          });
        }),
      );
    } finally {
      await Promise.all(consumers.map((c) => c.disconnect().catch(() => undefined)));
    }
    // Assess
    const want: string[] = [];
    for (let p = 0; p < 4; p++)
      for (let i = 0; i < PER_PARTITION; i++)
        want.push(`${p}:${i}:${JSON.stringify({ id: p * 1_000 + i, name: `n${i}` })}`);
    for (const s of seen) expect([...s].sort()).toEqual([...want].sort());
    const rss = peakRssMb(serve.child.pid!);
    console.log(`kafka-serve peak RSS after ${CONSUMERS} consumers: ${rss.toFixed(0)} MiB`);
    expect(rss).toBeLessThan(450);
  }, 90_000);

  it('a Fetch asking for 2 GiB gets at most the cap, from the batch holding its offset on', async () => {
    // Act
    const raw = await rawFetch(endpoint, BIG, 237n, 2 ** 31 - 1);
    // Assess
    const answer = await fetchV11.decode(raw);
    const offsets = answer.responses[0].partitions[0].messages.map((m) => Number(m.offset));
    const bytes = decodeFetchResponse(11, new Decoder(raw)).topics[0].partitions[0].records?.length ?? 0;
    expect(offsets[0]).toBeLessThanOrEqual(237);
    expect(offsets).toContain(237);
    expect(offsets).toEqual(Array.from({ length: offsets.length }, (_, i) => offsets[0] + i));
    expect(bytes).toBeGreaterThan(MAX_COLD_RESPONSE_BYTES / 2);
    expect(offsets.length).toBeLessThan(BIG_RECORDS - 237);
    expect(bytes).toBeLessThanOrEqual(MAX_COLD_RESPONSE_BYTES + 128 * 1024);
  });

  it('kcat starting inside a cached batch gets exactly the offsets from its own on', async () => {
    // Act
    const { stdout } = await promisify(execFile)(
      'kcat',
      ['-C', '-b', endpoint, '-t', BIG, '-p', '0', '-o', '237', '-c', '5', '-q', '-f', '%o\\n'],
      { timeout: 30_000 },
    );
    // Assess
    expect(stdout.split('\n').filter(Boolean)).toEqual(['237', '238', '239', '240', '241']);
  });

  it('splits a Produce of partitions led by several brokers, and each lands on its leader', async () => {
    // Prepare
    const topic = `split-${id}`;
    const producer = kafkaClient(endpoint).producer({ allowAutoTopicCreation: true });
    await producer.connect();
    // Act
    try {
      await producer.send({
        topic,
        acks: -1,
        messages: [0, 1, 2, 3].map((partition) => ({ partition, value: `to-${partition}` })),
      });
    } finally {
      await producer.disconnect();
    }
    const admin = kafkaClient(cluster.bootstrapServers).admin();
    await admin.connect();
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] }).finally(() => admin.disconnect());
    const leaders = new Set(metadata.topics[0].partitions.map((p) => p.leader));
    // Assess
    const { stdout } = await promisify(execFile)(
      'kcat',
      ['-C', '-b', cluster.bootstrapServers, '-t', topic, '-o', 'beginning', '-e', '-q', '-f', '%p %s\\n'],
      { timeout: 30_000 },
    );
    expect(leaders.size).toBeGreaterThan(1);
    expect(stdout.split('\n').filter(Boolean).sort()).toEqual(['0 to-0', '1 to-1', '2 to-2', '3 to-3']);
  });
});
