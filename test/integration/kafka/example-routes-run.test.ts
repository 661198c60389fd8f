/**
 * `floe run --routes events/routes/orders-by-country.json` against a real Kafka-protocol broker
 * (librdkafka's mock cluster through kcat): the sample orders, produced with their headers, are split
 * into the three tables the example file's `when` conditions name. Expected rows are counted from the
 * sample event itself.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { kcatAvailable, type MockKafka, startMockKafka } from '../../support/kafka-broker.js';
import { exitOf, kafkaClient, spawnFloe } from './kafka-kit.js';

const EVENTS = path.resolve(import.meta.dirname, '../../../events');

interface SampleRecord {
  value: Buffer;
  key: Buffer | null;
  headers: Record<string, Buffer>;
  order?: { country: string; status: string };
}

/** The sample orders as Kafka records: value and key bytes, headers, and the order as a reader sees it. */
function sampleOrders(): SampleRecord[] {
  const event = JSON.parse(readFileSync(path.join(EVENTS, 'orders-batch-1.json'), 'utf8'));
  return Object.values(event.records as Record<string, { value: string; key?: string; headers: object[] }[]>)
    .flat()
    .map((r) => {
      const value = Buffer.from(r.value, 'base64');
      let order: SampleRecord['order'];
      try {
        order = JSON.parse(value.toString('utf8'));
      } catch {
        order = undefined;
      }
      const headers = Object.fromEntries(
        r.headers.flatMap((h) => Object.entries(h).map(([k, bytes]) => [k, Buffer.from(bytes as number[])])),
      );
      return { value, key: r.key ? Buffer.from(r.key, 'base64') : null, headers, order };
    });
}

describe.skipIf(!kcatAvailable())('floe run --routes with an example routes file', () => {
  let broker: MockKafka;
  beforeAll(async () => {
    broker = await startMockKafka(1);
  });
  afterAll(async () => {
    await broker?.stop();
  });

  it('orders-by-country.json: one topic feeds three tables by their `when`', async () => {
    // Prepare
    const records = sampleOrders();
    const producer = kafkaClient(broker.bootstrapServers).producer();
    await producer.connect();
    await producer.send({
      topic: 'orders',
      messages: records.map(({ key, value, headers }) => ({ key, value, headers })),
    });
    await producer.disconnect();
    const warehouse = path.join(await mkdtemp(path.join(tmpdir(), 'floe-routes-')), 'wh');
    const orders = records.filter((r) => r.order !== undefined);
    const eu = orders.filter((r) => ['DE', 'FR'].includes(r.order!.country)).length;
    const checkout = orders.filter(
      (r) => r.headers.source?.toString('utf8') === 'checkout-service' && r.order!.status === 'PAID',
    ).length;

    // Act
    const floe = spawnFloe([
      'run',
      '--bootstrap-servers',
      broker.bootstrapServers,
      '--topics',
      'orders',
      '--group',
      'example-routes',
      '--warehouse',
      warehouse,
      '--routes',
      path.join(EVENTS, 'routes', 'orders-by-country.json'),
      '--starting-position',
      'trim-horizon',
      '--batching-window-ms',
      '100',
      '--exit-when-idle',
      '1500',
    ]);
    const { code } = await exitOf(floe);

    // Assess
    expect(code, floe.output()).toBe(0);
    const catalog = new EmbeddedCatalog({ warehouse });
    const count = async (name: string) => {
      const table = await catalog.loadTable({ namespace: ['sales'], name });
      return (await readScanRows(table, await planScan(table))).length;
    };
    expect(await count('orders_eu')).toBe(eu);
    expect(await count('orders_rest')).toBe(orders.length - eu);
    expect(await count('checkout_orders')).toBe(checkout);
    expect(checkout).toBeGreaterThan(0);
  });
});
