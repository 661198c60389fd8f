/**
 * The live catalog under concurrent loads of one table, in process, on librdkafka's mock cluster: the
 * Kafka client is the real one, with its admin and cluster factories counted. 200 loads at once read
 * the watermarks at most twice and the tail once; a record produced afterwards is seen by the next
 * load (no answer older than the request); loads of an unchanged tail read nothing again.
 */
import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkaFromOptions, liveRouteFor, parseLiveArgs } from '../../../functions/cli/live-options.js';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { LiveCatalog } from '../../../functions/core/live/live-catalog.js';
import { kcatAvailable, type MockKafka, startMockKafka } from '../../support/kafka-broker.js';
import { kafkaClient, makeWarehouse, produce } from '../kafka/kafka-kit.js';
import { commitAll, TABLE } from './live-kit.js';

const ID = { namespace: ['app'], name: 'events' };

/**
 * Counts the client's admin clients (one per watermark read) and its clusters: an admin client opens
 * one, and so does each tail read, so tail reads = clusters − admins.
 */
function counted(kafka: Kafka): { admins: () => number; reads: () => number } {
  let admins = 0;
  let clusters = 0;
  const admin = kafka.admin.bind(kafka);
  kafka.admin = (...args) => {
    admins++;
    return admin(...args);
  };
  const record = kafka as unknown as Record<symbol, (...args: unknown[]) => unknown>;
  const symbol = Object.getOwnPropertySymbols(kafka).find(
    (s) => s.description === 'private:Kafka:createCluster',
  );
  if (symbol === undefined) throw new Error('kafkajs no longer has its createCluster symbol');
  const create = record[symbol]!.bind(kafka);
  record[symbol] = (...args: unknown[]) => {
    clusters++;
    return create(...args);
  };
  return { admins: () => admins, reads: () => clusters - admins };
}

describe.skipIf(!kcatAvailable())('the live catalog under concurrent loads', () => {
  let broker: MockKafka;

  beforeAll(async () => {
    broker = await startMockKafka(1);
  });
  afterAll(async () => {
    await broker?.stop();
  });

  it('shares one tail read among 200 loads, and still shows a record produced before the next load', async () => {
    // Prepare: 40 records committed, 2,000 in the tail
    const topic = `flight-${randomUUID()}`;
    const { dir, schemaFile } = await makeWarehouse();
    const producer = kafkaClient(broker.bootstrapServers);
    await produce(producer, topic, 0, 40);
    await commitAll(broker.bootstrapServers, topic, dir, `g-${randomUUID()}`, ['--schema', schemaFile]);
    await produce(producer, topic, 40, 2_000, 500);
    const values = parseLiveArgs(
      ['--warehouse', dir, '--table', TABLE, '--bootstrap-servers', broker.bootstrapServers],
      'serve',
    );
    const kafka = await kafkaFromOptions(values);
    const counts = counted(kafka);
    const catalog = new EmbeddedCatalog({ warehouse: dir });
    const live = new LiveCatalog({ catalog, kafka, routeFor: (table) => liveRouteFor(values, table) });
    const addedRecords = (md: Awaited<ReturnType<LiveCatalog['loadTable']>>['metadata']) =>
      md.snapshots.find((s) => s['snapshot-id'] === md['current-snapshot-id'])?.summary['added-records'];

    // Act: 200 loads at once
    const first = await Promise.all(Array.from({ length: 200 }, () => live.loadTable(ID)));
    // Assess
    expect(new Set(first.map((l) => l.metadataLocation)).size).toBe(1);
    expect(addedRecords(first[0]!.metadata)).toBe('2000');
    expect(counts.admins()).toBeLessThanOrEqual(2);
    expect(counts.reads()).toBe(1);

    // Act: one more record, then 200 loads again
    await produce(producer, topic, 2_040, 1);
    const second = await Promise.all(Array.from({ length: 200 }, () => live.loadTable(ID)));
    // Assess: every load sees it; one more read
    expect(second.map((l) => addedRecords(l.metadata))).toEqual(second.map(() => '2001'));
    expect(counts.reads()).toBe(2);

    // Act: the same tail once more
    const third = await Promise.all(Array.from({ length: 50 }, () => live.loadTable(ID)));
    // Assess: the watermarks are read again, the tail is not
    expect(new Set(third.map((l) => l.metadataLocation))).toEqual(new Set([second[0]!.metadataLocation]));
    expect(counts.reads()).toBe(2);
  });
});
