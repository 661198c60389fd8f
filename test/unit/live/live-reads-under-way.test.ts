/**
 * `LiveCatalog.readsUnderWay`: a load that gave up waiting for a broker that does not answer leaves
 * its Kafka read running (the client's own retries); the count says so until the read settles, which
 * is how `floe serve` knows, at its stop, that the process would wait for it. The Kafka client is a
 * stand-in whose admin connects only when the test lets it (a broker that does not answer, made
 * certain); the table is a real one in the embedded catalog.
 */
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { LiveCatalog } from '../../../functions/core/live/live-catalog.js';
import { KafkaUnavailableError } from '../../../functions/core/live/serve-errors.js';
import { parseRoutes } from '../../../functions/core/routing/routes.js';
import { ORDERS_ID, SIMPLE_SCHEMA, tempWarehouse } from '../../support/tables.js';

/** A Kafka client whose admin connects once `answer` is called; the topic then has no partitions. */
function silentKafka() {
  let answer: () => void = () => undefined;
  const answered = new Promise<void>((resolve) => {
    answer = resolve;
  });
  let disconnected: () => void = () => undefined;
  const disconnect = new Promise<void>((resolve) => {
    disconnected = resolve;
  });
  const admin = {
    connect: () => answered,
    fetchTopicOffsets: async () => [],
    disconnect: async () => disconnected(),
  };
  return { kafka: { admin: () => admin } as unknown as Kafka, answer, disconnect };
}

describe('LiveCatalog.readsUnderWay', () => {
  let warehouse: Awaited<ReturnType<typeof tempWarehouse>>;
  let catalog: EmbeddedCatalog;

  beforeAll(async () => {
    warehouse = await tempWarehouse();
    catalog = warehouse.catalog;
    await catalog.createTable(ORDERS_ID, { schema: SIMPLE_SCHEMA });
  });
  afterAll(() => warehouse.cleanup());

  it('counts a read whose load gave up until the read settles', async () => {
    // Prepare: a live catalog over a broker that does not answer, with a short time limit
    const { kafka, answer, disconnect } = silentKafka();
    const [route] = parseRoutes([{ table: 'sales.orders', topics: ['orders'] }]);
    const live = new LiveCatalog({ catalog, kafka, routeFor: async () => route!, timeoutMs: 20 });

    // Act: a load that gives up
    await expect(live.loadTable(ORDERS_ID)).rejects.toThrow(KafkaUnavailableError);

    // Assess: its read still runs, and is counted until it settled
    expect(live.readsUnderWay()).toBe(1);
    answer();
    await disconnect;
    await new Promise((resolve) => setImmediate(resolve));
    expect(live.readsUnderWay()).toBe(0);
  });
});
