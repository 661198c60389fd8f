/**
 * `floe run` when the cluster under a table is replaced (librdkafka's mock cluster, stopped, and a new
 * empty one started): the new cluster's records arrive at offsets the table committed from the old one.
 * floe must neither skip them as replays nor append them silently: it exits ≠ 0 naming the topic and
 * partitions, commits no group offset, and leaves the table as it was. After `floe rebase-offsets` they
 * land exactly once, and a true redelivery (a new group reading them again) is skipped.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import { kcatAvailable, type MockKafka, startMockKafka } from '../../support/kafka-broker.js';
import { exitOf, kafkaClient, makeWarehouse, produce, readLanded, spawnFloe } from './kafka-kit.js';

const TABLE = 'app.events';

async function groupOffsets(bootstrap: string, groupId: string, topic: string): Promise<bigint[]> {
  const admin = kafkaClient(bootstrap).admin();
  await admin.connect();
  try {
    const [t] = await admin.fetchOffsets({ groupId, topics: [topic] });
    return t.partitions.sort((a, b) => a.partition - b.partition).map((p) => BigInt(p.offset));
  } finally {
    await admin.disconnect();
  }
}

async function headSnapshot(warehouse: string): Promise<bigint | undefined> {
  const loaded = await new EmbeddedCatalog({ warehouse }).loadTable({ namespace: ['app'], name: 'events' });
  return currentSnapshot(loaded.metadata)?.['snapshot-id'];
}

describe.skipIf(!kcatAvailable())('floe run after the cluster was replaced', () => {
  const brokers: MockKafka[] = [];
  afterAll(async () => {
    for (const b of brokers) await b.stop();
  });

  const runArgs = (bootstrap: string, topic: string, dir: string, schemaFile: string, group: string) => [
    'run',
    '--bootstrap-servers',
    bootstrap,
    '--topics',
    topic,
    '--group',
    group,
    '--warehouse',
    dir,
    '--table',
    TABLE,
    '--schema',
    schemaFile,
    '--starting-position',
    'trim-horizon',
    '--batch-size',
    '100',
    '--batching-window-ms',
    '100',
    '--session-timeout-ms',
    '6000',
    '--exit-when-idle',
    '1500',
  ];

  it('refuses the new records, then lands them once after rebase-offsets; a redelivery is skipped', async () => {
    // Prepare: 1,200 records (300 per partition) ingested from the old cluster, which then goes away
    const topic = `ev-${randomUUID()}`;
    const group = `g-${randomUUID()}`;
    const { dir, schemaFile } = await makeWarehouse();
    const old = await startMockKafka(1);
    brokers.push(old);
    await produce(kafkaClient(old.bootstrapServers), topic, 0, 1_200);
    const first = spawnFloe(runArgs(old.bootstrapServers, topic, dir, schemaFile, group));
    expect((await exitOf(first)).code, first.output()).toBe(0);
    await old.stop();
    const before = await headSnapshot(dir);
    const fresh = await startMockKafka(1);
    brokers.push(fresh);
    // ids 5000-5299: 75 per partition, at offsets 0-74 of the new cluster
    await produce(kafkaClient(fresh.bootstrapServers), topic, 5_000, 300);

    // Act
    const refused = spawnFloe(runArgs(fresh.bootstrapServers, topic, dir, schemaFile, group));
    const refusedExit = await exitOf(refused);

    // Assess: exit ≠ 0 naming the topic and partitions; no group offset; the table as it was
    expect(refusedExit.code, refused.output()).not.toBe(0);
    expect(refused.output()).toContain(`${topic}/`);
    expect(refused.output()).toMatch(
      /records inside the table's committed offsets are not the records it committed/,
    );
    expect(refused.output()).toMatch(
      new RegExp(`floe rebase-offsets <catalog> --table app\\.events --topic ${topic} --partitions \\d`),
    );
    expect(await groupOffsets(fresh.bootstrapServers, group, topic)).toEqual([-1n, -1n, -1n, -1n]);
    expect(await headSnapshot(dir)).toBe(before);
    expect((await readLanded(dir, TABLE)).length).toBe(1_200);

    // Act: the documented way on
    const rebase = spawnFloe(['rebase-offsets', '--warehouse', dir, '--table', TABLE, '--topic', topic]);
    const rebaseExit = await exitOf(rebase);
    const landed = spawnFloe(runArgs(fresh.bootstrapServers, topic, dir, schemaFile, group));
    const landedExit = await exitOf(landed);
    // a true redelivery: another group reads the same 300 records again
    const again = spawnFloe(runArgs(fresh.bootstrapServers, topic, dir, schemaFile, `g-${randomUUID()}`));
    const againExit = await exitOf(again);

    // Assess: the 300 exactly once beside the 1,200; the group at the new cluster's high watermarks
    expect(rebaseExit.code, rebase.output()).toBe(0);
    expect(rebase.output()).toMatch(/now epoch 2/);
    expect(landedExit.code, landed.output()).toBe(0);
    expect(againExit.code, again.output()).toBe(0);
    const ids = (await readLanded(dir, TABLE)).map((r) => Number(r.id)).sort((a, b) => a - b);
    const expected = [
      ...Array.from({ length: 1_200 }, (_, i) => i),
      ...Array.from({ length: 300 }, (_, i) => 5_000 + i),
    ];
    expect(ids).toEqual(expected);
    expect(await groupOffsets(fresh.bootstrapServers, group, topic)).toEqual([75n, 75n, 75n, 75n]);
  }, 420_000);
});
