/**
 * The merged view of an append table on a real Kafka-protocol broker (librdkafka's mock cluster):
 * records produced after the last commit appear at once in `floe scan --live` and through
 * `floe serve --live` (floe's REST client + scan; the tail files by DuckDB); after the next commit the
 * view is the same, without duplicates, and the served table has no live snapshot left to add.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kcatAvailable, type MockKafka, startMockKafka } from '../../support/kafka-broker.js';
import { duckdbQuery, sqlString } from '../../support/readers.js';
import { kafkaClient, makeWarehouse, produce } from '../kafka/kafka-kit.js';
import { commitAll, idsOf, readServed, scanLive, startServe, tailFiles } from './live-kit.js';

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe.skipIf(!kcatAvailable())('the live view of an append table', () => {
  let broker: MockKafka;

  beforeAll(async () => {
    broker = await startMockKafka(1);
  });
  afterAll(async () => {
    await broker?.stop();
  });

  it('shows the Kafka tail at once, through scan --live and floe serve, and the same rows after it commits', async () => {
    // Prepare: 40 records committed, 20 more only in Kafka
    const topic = `live-${randomUUID()}`;
    const group = `g-${randomUUID()}`;
    const { dir, schemaFile } = await makeWarehouse();
    const kafka = kafkaClient(broker.bootstrapServers);
    await produce(kafka, topic, 0, 40);
    await commitAll(broker.bootstrapServers, topic, dir, group, ['--schema', schemaFile]);
    await produce(kafka, topic, 40, 20);

    // Act + Assess: scan --live
    const live = await scanLive(broker.bootstrapServers, dir);
    expect(idsOf(live.rows)).toEqual(range(0, 60));
    expect(live.output).toMatch(/hot: 20 record\(s\) from Kafka \(.*read up to 15/);
    expect(live.output).toMatch(/→ 20 row\(s\)/);
    const filtered = await scanLive(broker.bootstrapServers, dir, ['--where', 'id >= 35 and id < 45']);
    expect(idsOf(filtered.rows)).toEqual(range(35, 45));

    // Act + Assess: floe serve --live, read by floe's REST client and scan
    const served = await startServe(dir, ['--live', '--bootstrap-servers', broker.bootstrapServers]);
    try {
      const { table, rows } = await readServed(served.uri);
      expect(idsOf(rows)).toEqual(range(0, 60));
      const snapshot = table.metadata.snapshots.find(
        (s) => s['snapshot-id'] === table.metadata['current-snapshot-id'],
      )!;
      expect(snapshot.summary['floe.live']).toBe('true');
      expect(snapshot.summary.operation).toBe('append');
      expect(snapshot.summary['added-records']).toBe('20');
      expect(snapshot.summary['total-records']).toBe('60');
      expect(table.metadata.refs?.main?.['snapshot-id']).toBe(snapshot['snapshot-id']);
      expect(BigInt(snapshot['sequence-number'])).toBe(BigInt(table.metadata['last-sequence-number']));
      // The tail files, by DuckDB
      const files = await tailFiles(table);
      expect(files.length).toBeGreaterThan(0);
      const tail = await duckdbQuery(
        `select id from read_parquet([${files.map((f) => sqlString(f.path)).join(',')}]) order by id`,
      );
      expect(tail.map((r) => Number(r.id))).toEqual(range(40, 60));
      // Loading again with the same tail reuses the cache folder
      const again = await readServed(served.uri);
      expect(again.table.metadataLocation).toBe(table.metadataLocation);
    } finally {
      await served.stop();
    }

    // Act: the tail commits
    await commitAll(broker.bootstrapServers, topic, dir, group, []);
    // Assess: the same rows, no duplicate, nothing hot
    const after = await scanLive(broker.bootstrapServers, dir);
    expect(idsOf(after.rows)).toEqual(range(0, 60));
    expect(after.output).toMatch(/hot: 0 record\(s\) from Kafka/);
    const servedAfter = await startServe(dir, ['--live', '--bootstrap-servers', broker.bootstrapServers]);
    try {
      const { table, rows } = await readServed(servedAfter.uri);
      expect(idsOf(rows)).toEqual(range(0, 60));
      expect(table.metadata.snapshots.some((s) => s.summary['floe.live'] === 'true')).toBe(false);
    } finally {
      await servedAfter.stop();
    }
  });

  it('serves the committed table unchanged without --live and refuses writes with 403', async () => {
    const topic = `plain-${randomUUID()}`;
    const { dir, schemaFile } = await makeWarehouse();
    const kafka = kafkaClient(broker.bootstrapServers);
    await produce(kafka, topic, 0, 8);
    await commitAll(broker.bootstrapServers, topic, dir, `g-${randomUUID()}`, ['--schema', schemaFile]);
    await produce(kafka, topic, 8, 4);
    const served = await startServe(dir, []);
    try {
      const { table, rows } = await readServed(served.uri);
      expect(idsOf(rows)).toEqual(range(0, 8));
      expect(table.metadataLocation).toMatch(/\/metadata\/v\d+\.metadata\.json$/);
      const config = (await (await fetch(`${served.uri}/v1/config`)).json()) as { endpoints: string[] };
      expect(config.endpoints).toContain('GET /v1/{prefix}/namespaces/{namespace}/tables/{table}');
      expect(await (await fetch(`${served.uri}/v1/namespaces`)).json()).toEqual({ namespaces: [['app']] });
      const refused = await fetch(`${served.uri}/v1/namespaces/app/tables/events`, {
        method: 'POST',
        body: JSON.stringify({ requirements: [], updates: [] }),
      });
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { error: unknown }).error).toMatchObject({
        code: 403,
        type: 'ForbiddenException',
      });
      const drop = await fetch(`${served.uri}/v1/namespaces/app/tables/events`, { method: 'DELETE' });
      expect(drop.status).toBe(403);
    } finally {
      await served.stop();
    }
  });
});
