/**
 * Generates the sample ESM events under events/ (run: npx tsx test/support/make-sample-events.ts).
 * Deterministic (seeded), so regenerating gives the same files.
 */
import { writeFileSync } from 'node:fs';

let seed = 42;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)];
const b64 = (s: string) => Buffer.from(s).toString('base64');
const bytes = (s: string) => [...Buffer.from(s)];

const countries = ['DE', 'FR', 'US', 'JP', 'BR', 'IN'];
const skus = ['SKU-1001', 'SKU-1002', 'SKU-2001', 'SKU-3005', 'SKU-4100'];

function order(id: number, day: number) {
  const ts = Date.UTC(
    2026,
    10,
    day,
    Math.floor(rand() * 24),
    Math.floor(rand() * 60),
    Math.floor(rand() * 60),
    Math.floor(rand() * 1000),
  );
  const lines = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => ({
    sku: pick(skus),
    qty: 1 + Math.floor(rand() * 4),
    unit_price: (Math.floor(rand() * 20000) / 100).toFixed(2),
  }));
  return {
    order_id: id,
    customer_id: 5000 + Math.floor(rand() * 200),
    order_ts: new Date(ts).toISOString(),
    amount: Number(lines.reduce((s, l) => s + Number(l.unit_price) * l.qty, 0).toFixed(2)),
    currency: 'EUR',
    country: pick(countries),
    status: pick(['NEW', 'PAID', 'SHIPPED']),
    shipping: {
      city: pick(['Berlin', 'Paris', 'Austin', 'Osaka']),
      postcode: String(10000 + Math.floor(rand() * 80000)),
    },
    lines,
  };
}

function event(
  batch: number,
  firstOffset: number,
  perPartition: number,
  days: number[],
  extra: Record<string, unknown[]> = {},
) {
  const records: Record<string, unknown[]> = {};
  let id = batch * 1000;
  for (let p = 0; p < 3; p++) {
    records[`orders-${p}`] = Array.from({ length: perPartition }, (_, i) => {
      const o = order(id++, pick(days));
      return {
        topic: 'orders',
        partition: p,
        offset: firstOffset + i,
        timestamp: Date.parse(o.order_ts) + 150,
        timestampType: 'CREATE_TIME',
        key: b64(String(o.order_id)),
        value: b64(JSON.stringify(o)),
        headers: [{ source: bytes('checkout-service') }, { 'trace-id': bytes(`t-${o.order_id}`) }],
      };
    });
  }
  for (const [k, v] of Object.entries(extra)) records[k] = [...(records[k] ?? []), ...v];
  return {
    eventSource: 'aws:kafka',
    eventSourceArn:
      'arn:aws:kafka:eu-central-1:123456789012:cluster/floe-demo/0f1e2d3c-aaaa-bbbb-cccc-123456789abc-1',
    bootstrapServers: 'b-1.floe-demo.abc123.c2.kafka.eu-central-1.amazonaws.com:9098',
    records,
  };
}

const bad = [
  {
    topic: 'orders',
    partition: 2,
    offset: 140,
    timestamp: 1795000000000,
    timestampType: 'CREATE_TIME',
    key: b64('bad-1'),
    value: b64('{"order_id": 99, "order_ts": '),
    headers: [],
  },
  {
    topic: 'orders',
    partition: 2,
    offset: 141,
    timestamp: 1795000000000,
    timestampType: 'CREATE_TIME',
    key: b64('bad-2'),
    value: b64(
      JSON.stringify({
        order_id: 'not-a-number',
        customer_id: 1,
        order_ts: '2026-11-20T10:00:00Z',
        amount: 1,
        currency: 'EUR',
        country: 'DE',
      }),
    ),
    headers: [],
  },
];

writeFileSync('events/orders-batch-1.json', `${JSON.stringify(event(1, 100, 40, [20, 21, 22]), null, 1)}\n`);
const b2 = event(2, 140, 40, [22, 23]);
(b2.records['orders-2'] as unknown[]).splice(0, 2, ...bad);
writeFileSync('events/orders-batch-2.json', `${JSON.stringify(b2, null, 1)}\n`);
