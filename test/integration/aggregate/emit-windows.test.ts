/**
 * `emit` on librdkafka's mock cluster: every window an aggregate table closes is produced once to the
 * result topic, keyed by group columns + window_start; a batch whose commit landed but whose emit never
 * ran (a crash between the two) re-emits, on redelivery, exactly the windows its snapshot closed, with
 * the same keys. The topic is checked against the table's closed rows.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeWindowProducers } from '../../../functions/core/aggregate/emit-windows.js';
import { ingestAggregateTable } from '../../../functions/core/ingest/ingest-aggregate.js';
import { windowKeyJson, windowValueJson } from '../../../functions/core/aggregate/window-json.js';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { decodeEsmEvent } from '../../../functions/core/records/esm-event.js';
import { batchIdOf, ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { parseRoutes, type TableRoute } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { kcatAvailable, type MockKafka, startMockKafka } from '../../support/kafka-broker.js';

const TOPIC = 'paid-per-user-minute';
const T0 = Date.UTC(2026, 10, 21, 12, 0, 0);

function eventOf(
  partition: number,
  firstOffset: number,
  items: { user: number; amount: number; sec: number }[],
) {
  return {
    eventSource: 'SelfManagedKafka',
    records: {
      [`orders-${partition}`]: items.map((it, i) => ({
        topic: 'orders',
        partition,
        offset: firstOffset + i,
        timestamp: T0,
        timestampType: 'CREATE_TIME',
        value: Buffer.from(
          JSON.stringify({
            user_id: it.user,
            amount: it.amount,
            order_ts: new Date(T0 + it.sec * 1000).toISOString(),
          }),
        ).toString('base64'),
        headers: [],
      })),
    },
  };
}

async function readTopic(
  bootstrapServers: string,
  expected: number,
): Promise<{ key: string; value: string }[]> {
  const kafka = new Kafka({
    brokers: bootstrapServers.split(','),
    clientId: 'emit-test',
    logLevel: logLevel.NOTHING,
  });
  const consumer = kafka.consumer({ groupId: `emit-test-${Date.now()}`, sessionTimeout: 6000 });
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  const out: { key: string; value: string }[] = [];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`read ${out.length} of ${expected} messages`)), 60_000);
    void consumer.run({
      eachMessage: async ({ message }) => {
        out.push({ key: String(message.key), value: String(message.value) });
        if (out.length >= expected) {
          clearTimeout(timer);
          resolve();
        }
      },
    });
  });
  // Anything beyond the expected count would be a duplicate emit: give it a moment to show up.
  await new Promise((r) => setTimeout(r, 1500));
  await consumer.disconnect();
  return out;
}

describe.skipIf(!kcatAvailable())('aggregate emit on the mock broker', () => {
  let broker: MockKafka;
  let dir: string;
  beforeAll(async () => {
    broker = await startMockKafka(1);
    dir = await mkdtemp(join(tmpdir(), 'floe-emit-'));
  });
  afterAll(async () => {
    await closeWindowProducers();
    await broker?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('produces each closed window once; a crash before emit re-emits with the same key', async () => {
    // Prepare
    const routes: TableRoute[] = parseRoutes([
      {
        topics: ['orders'],
        table: 'rt.paid_per_user_minute',
        schema: {
          type: 'struct',
          'schema-id': 0,
          fields: [
            { id: 1, name: 'user_id', required: true, type: 'long' },
            { id: 2, name: 'amount', required: true, type: 'long' },
            { id: 3, name: 'order_ts', required: true, type: 'timestamptz' },
          ],
        },
        aggregate: {
          sql: "SELECT user_id, SUM(amount) AS paid, COUNT(*) AS orders FROM orders GROUP BY user_id, TUMBLE(order_ts, INTERVAL '1' MINUTE)",
          allowedLatenessSeconds: 10,
          partitions: 2,
          emit: { topic: TOPIC, bootstrapServers: broker.bootstrapServers },
        },
      },
    ]);
    const catalog = new EmbeddedCatalog({ warehouse: join(dir, 'wh') });
    const options = { catalog, routes };
    const batches = [
      eventOf(0, 0, [
        { user: 1, amount: 5, sec: 5 },
        { user: 2, amount: 7, sec: 20 },
        { user: 1, amount: 1, sec: 70 },
      ]),
      eventOf(1, 0, [
        { user: 1, amount: 3, sec: 30 },
        { user: 2, amount: 2, sec: 95 },
      ]),
      // Both partitions were seen with batch 2: watermark min(70 s, 95 s) - 10 s = 60 s closed minute 0.
      eventOf(0, 3, [{ user: 3, amount: 4, sec: 150 }]),
      eventOf(1, 2, [
        { user: 1, amount: 9, sec: 200 },
        { user: 2, amount: 1, sec: 130 },
      ]),
    ];
    // Act: the first three batches as the handler runs them.
    for (const event of batches.slice(0, 3)) await ingestEvent(options, event);
    // The fourth commits (closing minutes 1 and 2) but "crashes" before its emit...
    const fourth = decodeEsmEvent(batches[3]).records;
    const crashed = await ingestAggregateTable(
      options,
      routes[0],
      routes[0].aggregate!,
      batchIdOf(fourth),
      fourth,
      routes,
    );
    expect(crashed.status).toBe('committed');
    expect(crashed.windowsClosed).toBeGreaterThan(0);
    // ...and the ESM redelivers it: a replay for the table, and the windows its snapshot closed are emitted.
    const redelivered = await ingestEvent(options, batches[3]);
    expect(redelivered.tables[0].status).toBe('nothing-to-commit');
    // A replay of an earlier batch that closed windows re-emits them too (same keys).
    await ingestEvent(options, batches[1]);

    // Assess
    const table = await catalog.loadTable(routes[0].table);
    const rows = await readScanRows(table, await planScan(table));
    const closed = rows.filter((r) => r.window_closed === true);
    const plan = routes[0].aggregate!.plan;
    // By hand: the watermark ends at min(150 s, 200 s) - 10 s = 140 s, so minutes 0 and 1 are closed
    // (minute 0: user 1 = 5 + 3, user 2 = 7; minute 1: user 1 = 1, user 2 = 2) and minute 2 is open.
    const expected = new Map(closed.map((r) => [windowKeyJson(plan, r), windowValueJson(plan, r)]));
    expect([...expected.keys()].sort()).toEqual(
      [
        '{"user_id":1,"window_start":"2026-11-21T12:00Z"}',
        '{"user_id":2,"window_start":"2026-11-21T12:00Z"}',
        '{"user_id":1,"window_start":"2026-11-21T12:01Z"}',
        '{"user_id":2,"window_start":"2026-11-21T12:01Z"}',
      ].sort(),
    );
    expect(JSON.parse(expected.get('{"user_id":1,"window_start":"2026-11-21T12:00Z"}')!)).toMatchObject({
      paid: 8,
      orders: 2,
    });
    expect(JSON.parse(expected.get('{"user_id":2,"window_start":"2026-11-21T12:01Z"}')!)).toMatchObject({
      paid: 2,
      orders: 1,
    });
    expect(rows.filter((r) => r.window_closed !== true)).toHaveLength(3); // minute 2: users 2 and 3, minute 3: user 1
    // Minute 0 was closed by batch 2, which was also replayed: its two windows come twice; the rest once.
    const messages = await readTopic(broker.bootstrapServers, expected.size + 2);
    expect(messages).toHaveLength(expected.size + 2);
    for (const m of messages) expect(m.value).toBe(expected.get(m.key));
    const counts = new Map<string, number>();
    for (const m of messages) counts.set(m.key, (counts.get(m.key) ?? 0) + 1);
    expect(counts.get('{"user_id":1,"window_start":"2026-11-21T12:00Z"}')).toBe(2);
    expect(counts.get('{"user_id":2,"window_start":"2026-11-21T12:01Z"}')).toBe(1);
    expect(new Set(counts.keys())).toEqual(new Set(expected.keys()));
  });
});
