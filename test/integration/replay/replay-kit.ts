/**
 * Shared by the replay integration tests: source records with keys, binary headers and CreateTime
 * timestamps; a table ingested from them by `floe backfill`; and the target topic read back whole.
 */
import { CompressionTypes, type Kafka } from 'kafkajs';
import { expect } from 'vitest';
import { type ReadRecord, readRanges } from '../../../functions/core/kafka/read-ranges.js';
import { BINARY_HEADER, exitOf, spawnFloe } from '../kafka/kafka-kit.js';

/** CreateTime of record n: a fixed past time plus n seconds, so it differs from the time it was produced. */
export const BASE_TIME_MS = Date.parse('2026-01-02T03:04:05.000Z');
export const timestampOf = (id: number) => BASE_TIME_MS + id * 1000;
export const keyOf = (id: number) => (id % 7 === 0 ? null : `key-${id}`);

/** Records `first..first+count-1` to partition id % 4, value `{"id":n,"name":"name-n"}`. */
export async function produceSource(
  kafka: Kafka,
  topic: string,
  first: number,
  count: number,
): Promise<void> {
  const producer = kafka.producer({ allowAutoTopicCreation: true });
  await producer.connect();
  try {
    for (let start = first; start < first + count; start += 200) {
      const n = Math.min(200, first + count - start);
      await producer.send({
        topic,
        acks: -1,
        compression: CompressionTypes.GZIP,
        messages: Array.from({ length: n }, (_, i) => {
          const id = start + i;
          return {
            partition: id % 4,
            key: keyOf(id),
            value: JSON.stringify({ id, name: `name-${id}` }),
            timestamp: String(timestampOf(id)),
            headers: { bin: BINARY_HEADER, seq: String(id) },
          };
        }),
      });
    }
  } finally {
    await producer.disconnect();
  }
}

/** `floe backfill` of a topic's whole history into the table; fails the test unless it exits 0. */
export async function backfill(
  bootstrapServers: string,
  topic: string,
  warehouse: string,
  table: string,
  schemaFile: string,
  ...extra: string[]
): Promise<void> {
  const p = spawnFloe([
    'backfill',
    '--bootstrap-servers',
    bootstrapServers,
    '--topic',
    topic,
    '--warehouse',
    warehouse,
    '--table',
    table,
    '--schema',
    schemaFile,
    '--batch-size',
    '500',
    ...extra,
  ]);
  const { code } = await exitOf(p);
  expect(code, p.output()).toBe(0);
}

/** Every record of the topic, per partition in offset order. */
export async function readTopic(kafka: Kafka, topic: string): Promise<Map<number, ReadRecord[]>> {
  const admin = kafka.admin();
  await admin.connect();
  let offsets: { partition: number; low: string; high: string }[];
  try {
    offsets = await admin.fetchTopicOffsets(topic);
  } finally {
    await admin.disconnect();
  }
  const out = new Map<number, ReadRecord[]>(offsets.map((o) => [o.partition, []]));
  await readRanges({
    kafka,
    ranges: offsets.map((o) => ({
      topic,
      partition: o.partition,
      start: BigInt(o.low),
      end: BigInt(o.high),
    })),
    onRecords: async (records) => {
      for (const r of records) out.get(r.partition)!.push(r);
    },
  });
  return out;
}

export const headerText = (r: ReadRecord, key: string): string | undefined => {
  const h = r.headers.find((x) => x.key === key);
  return h?.value === null || h === undefined ? undefined : Buffer.from(h.value).toString('utf8');
};

/**
 * What a replayed record must be for source record `id` of `topic`: on OUT partition id % 4, its key,
 * `bin`/`seq` headers, CreateTime, a `floe-source` naming it, and the row (or, live, the original value).
 */
export function checkReplayed(r: ReadRecord, topic: string, live = false): number {
  const source = headerText(r, 'floe-source');
  expect(source, 'floe-source header').toBeDefined();
  const [srcTopic, srcPartition] = source!.split('/');
  expect(srcTopic).toBe(topic);
  const value = JSON.parse(Buffer.from(r.value!).toString('utf8')) as { id: number; name: string };
  const id = value.id;
  expect(value).toEqual({ id, name: `name-${id}` });
  if (live) expect(Buffer.from(r.value!).toString()).toBe(JSON.stringify({ id, name: `name-${id}` }));
  expect(Number(srcPartition)).toBe(id % 4);
  expect(r.partition).toBe(id % 4);
  expect(r.key === null ? null : Buffer.from(r.key).toString()).toBe(keyOf(id));
  expect(r.timestampMs).toBe(timestampOf(id));
  expect(Buffer.from(r.headers.find((h) => h.key === 'bin')!.value!).equals(BINARY_HEADER)).toBe(true);
  expect(headerText(r, 'seq')).toBe(String(id));
  return id;
}

/**
 * Every id in `expected` exactly once over the target, each source partition's records in increasing
 * source offset order; returns the ids seen per source topic.
 */
export function checkExactlyOnceInOrder(
  target: Map<number, ReadRecord[]>,
  expected: Map<string, number[]>,
  live: (topic: string, id: number) => boolean = () => false,
): void {
  const seen = new Map<string, number[]>();
  const lastOffset = new Map<string, bigint>();
  for (const records of target.values()) {
    for (const r of records) {
      const source = headerText(r, 'floe-source')!;
      const [topic, partition, offset] = source.split('/');
      const id = Number(JSON.parse(Buffer.from(r.value!).toString()).id);
      checkReplayed(r, topic, live(topic, id));
      const k = `${topic}/${partition}`;
      const prev = lastOffset.get(k);
      expect(prev === undefined || BigInt(offset) > prev, `${source} after ${k}@${prev}`).toBe(true);
      lastOffset.set(k, BigInt(offset));
      seen.set(topic, [...(seen.get(topic) ?? []), id]);
    }
  }
  for (const [topic, ids] of expected) {
    expect(
      [...(seen.get(topic) ?? [])].sort((a, b) => a - b),
      topic,
    ).toEqual([...ids].sort((a, b) => a - b));
  }
  expect([...seen.keys()].sort()).toEqual([...expected.keys()].sort());
}
