/**
 * The live view when the cluster under a table is replaced (librdkafka's mock cluster, stopped, and a
 * new empty one started with 300 new records at offsets the table committed from the old one): the
 * view must not hide them as "committed". `floe scan --live` shows them with a warning naming the
 * partitions, and the live snapshot `floe serve --live` serves says which partitions in its summary.
 * With the original cluster (the same records) nothing changes: no duplicate, no warning.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { kcatAvailable, type MockKafka, startMockKafka } from '../../support/kafka-broker.js';
import { kafkaClient, makeWarehouse, produce } from '../kafka/kafka-kit.js';
import { commitAll, idsOf, readServed, scanLive, startServe } from './live-kit.js';

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe.skipIf(!kcatAvailable())('the live view after the cluster was replaced', () => {
  const brokers: MockKafka[] = [];
  afterAll(async () => {
    for (const b of brokers) await b.stop();
  });

  it('shows the new cluster records as the tail with a warning, and changes nothing on the same cluster', async () => {
    // Prepare: 1,200 records (300 per partition) committed from the old cluster
    const topic = `live-${randomUUID()}`;
    const { dir, schemaFile } = await makeWarehouse();
    const old = await startMockKafka(1);
    brokers.push(old);
    await produce(kafkaClient(old.bootstrapServers), topic, 0, 1_200);
    await commitAll(old.bootstrapServers, topic, dir, `g-${randomUUID()}`, ['--schema', schemaFile]);

    // Act: the live view on the same cluster
    const same = await scanLive(old.bootstrapServers, dir);

    // Assess: the committed rows once, nothing hot, no warning
    expect(idsOf(same.rows)).toEqual(range(0, 1_200));
    expect(same.output).not.toMatch(/not those the table committed/);

    // Prepare: the cluster replaced by an empty one; ids 5000-5299 at offsets 0-74 of each partition
    await old.stop();
    const fresh = await startMockKafka(1);
    brokers.push(fresh);
    await produce(kafkaClient(fresh.bootstrapServers), topic, 5_000, 300);

    // Act
    const live = await scanLive(fresh.bootstrapServers, dir);

    // Assess: the 1,200 committed rows and the 300 new ones, each once; a warning per partition
    expect(idsOf(live.rows)).toEqual([...range(0, 1_200), ...range(5_000, 5_300)]);
    for (const p of [0, 1, 2, 3]) {
      expect(live.output).toContain(
        `warning: ${topic}/${p}: the broker's records are not those the table committed`,
      );
    }
    expect(live.output).toMatch(/hot: 300 record\(s\) from Kafka/);

    // Prepare: the new cluster grows past the committed offsets (400 per partition): the record at
    // each committed range's last offset (299) is there, and is another one
    await produce(kafkaClient(fresh.bootstrapServers), topic, 6_000, 1_300);

    // Act
    const grown = await scanLive(fresh.bootstrapServers, dir);

    // Assess: every new record once, the mismatch told by the record at offset 299
    expect(idsOf(grown.rows)).toEqual([...range(0, 1_200), ...range(5_000, 5_300), ...range(6_000, 7_300)]);
    expect(grown.output).toContain(
      `warning: ${topic}/0: the broker's records are not those the table committed (offset 299 holds`,
    );

    // Act: the live snapshot floe serve --live serves
    const served = await startServe(dir, ['--live', '--bootstrap-servers', fresh.bootstrapServers]);
    try {
      const { table, rows } = await readServed(served.uri);
      // Assess
      expect(idsOf(rows)).toEqual([...range(0, 1_200), ...range(5_000, 5_300), ...range(6_000, 7_300)]);
      const snapshot = table.metadata.snapshots.find(
        (s) => s['snapshot-id'] === table.metadata['current-snapshot-id'],
      )!;
      expect(JSON.parse(snapshot.summary['floe.live.identity-mismatch'])).toEqual({ [topic]: [0, 1, 2, 3] });
    } finally {
      await served.stop();
    }
  }, 300_000);
});
