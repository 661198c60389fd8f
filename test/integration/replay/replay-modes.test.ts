/**
 * `floe replay` beyond the default: `--partitioning key` sends each record where Kafka's default
 * partitioner puts its key (per source partition still in offset order), and a CDC (upsert) table
 * replays its current rows — one record per live row, at the offset of the change that produced it.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyPartition } from '../../../functions/core/kafka/replay-producer.js';
import { kcatAvailable, type MockKafka, startMockKafka } from '../../support/kafka-broker.js';
import { exitOf, kafkaClient, makeWarehouse, spawnFloe } from '../kafka/kafka-kit.js';
import { backfill, headerText, produceSource, readTopic, timestampOf } from './replay-kit.js';

const TABLE = 'app.modes';

describe.skipIf(!kcatAvailable())('floe replay partitioning and CDC tables', () => {
  let broker: MockKafka;

  beforeAll(async () => {
    broker = await startMockKafka(3);
  });
  afterAll(async () => {
    await broker?.stop();
  });

  const replay = (warehouse: string, out: string, ...extra: string[]) =>
    spawnFloe([
      'replay',
      '--warehouse',
      warehouse,
      '--table',
      TABLE,
      '--bootstrap-servers',
      broker.bootstrapServers,
      '--to-topic',
      out,
      ...extra,
    ]);

  it('--partitioning key: each record on its key partition, each source partition in offset order', async () => {
    // Prepare
    const topic = `key-${randomUUID()}`;
    const out = `out-${randomUUID()}`;
    const { dir, schemaFile } = await makeWarehouse();
    const kafka = kafkaClient(broker.bootstrapServers);
    await produceSource(kafka, topic, 0, 300);
    await backfill(broker.bootstrapServers, topic, dir, TABLE, schemaFile);
    // Act
    const p = replay(dir, out, '--partitioning', 'key', '--batch-size', '50');
    const { code } = await exitOf(p);
    // Assess
    expect(code, p.output()).toBe(0);
    expect(p.output()).toMatch(/done: 300 rows produced/);
    const ids: number[] = [];
    for (const [partition, records] of await readTopic(kafka, out)) {
      const last = new Map<string, bigint>();
      for (const r of records) {
        const [, srcPartition, offset] = headerText(r, 'floe-source')!.split('/');
        const id = Number(JSON.parse(Buffer.from(r.value!).toString()).id);
        ids.push(id);
        expect(partition).toBe(r.key === null ? id % 4 : keyPartition(r.key, 4));
        expect(r.timestampMs).toBe(timestampOf(id));
        expect(last.get(srcPartition) ?? -1n).toBeLessThan(BigInt(offset));
        last.set(srcPartition, BigInt(offset));
      }
    }
    expect(ids.sort((a, b) => a - b)).toEqual(Array.from({ length: 300 }, (_, i) => i));
  });

  it('an upsert table replays its current rows at the offsets of the changes that made them', async () => {
    // Prepare: ids 0..79, then new names for ids 0..39 (no Kafka key: the value holds the id)
    const topic = `cdc-${randomUUID()}`;
    const out = `out-${randomUUID()}`;
    const { dir, schemaFile } = await makeWarehouse();
    const kafka = kafkaClient(broker.bootstrapServers);
    const producer = kafka.producer({ allowAutoTopicCreation: true });
    await producer.connect();
    const send = (ids: number[], name: (id: number) => string) =>
      producer.send({
        topic,
        acks: -1,
        messages: ids.map((id) => ({ partition: id % 4, value: JSON.stringify({ id, name: name(id) }) })),
      });
    await send(
      Array.from({ length: 80 }, (_, i) => i),
      (id) => `v1-${id}`,
    );
    await send(
      Array.from({ length: 40 }, (_, i) => i),
      (id) => `v2-${id}`,
    );
    await producer.disconnect();
    await backfill(
      broker.bootstrapServers,
      topic,
      dir,
      TABLE,
      schemaFile,
      '--mode',
      'upsert',
      '--identifier',
      'id',
    );
    // Act
    const p = replay(dir, out);
    const { code } = await exitOf(p);
    // Assess: 80 records; an updated id's record is its v2 change (offset 20 + id/4 in its partition)
    expect(code, p.output()).toBe(0);
    expect(p.output()).toMatch(/done: 80 rows produced/);
    const seen = new Map<number, string>();
    for (const [partition, records] of await readTopic(kafka, out)) {
      const offsets = records.map((r) => BigInt(headerText(r, 'floe-source')!.split('/')[2]));
      expect(offsets).toEqual([...offsets].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      for (const r of records) {
        const value = JSON.parse(Buffer.from(r.value!).toString()) as { id: number; name: string };
        const offset = Number(headerText(r, 'floe-source')!.split('/')[2]);
        expect(partition).toBe(value.id % 4);
        expect(offset).toBe(value.id < 40 ? 20 + Math.floor(value.id / 4) : Math.floor(value.id / 4));
        seen.set(value.id, value.name);
      }
    }
    expect(seen.size).toBe(80);
    for (const [id, name] of seen) expect(name).toBe(id < 40 ? `v2-${id}` : `v1-${id}`);
  });
});
