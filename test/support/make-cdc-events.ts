/**
 * Generates the CDC sample ESM events under events/ (run: npx tsx test/support/make-cdc-events.ts):
 * Debezium (PostgreSQL connector, JSON without schemas, decimal.handling.mode=string) change events
 * of a `shop.public.orders` table, keyed by `{"order_id": N}` and spread over 3 Kafka partitions by
 * key, as Debezium does.
 *   batch 1: a snapshot of 4 existing orders (op r), 8 new orders (c), 3 price updates (u) — one of
 *            them to an order created in the same batch;
 *   batch 2: 6 price/status updates, 3 cancellations (d, each followed by its tombstone), 2 new
 *            orders, and a heartbeat on the connector's heartbeat topic.
 * Deterministic, so regenerating gives the same files. The expected final state is in the test.
 */
import { writeFileSync } from 'node:fs';

const TOPIC = 'shop.public.orders';
const HEARTBEAT_TOPIC = '__debezium-heartbeat.shop';
const PARTITIONS = 3;
const b64 = (s: string) => Buffer.from(s).toString('base64');

interface Order {
  order_id: number;
  customer_id: number;
  order_ts: string;
  amount: string;
  currency: string;
  status: string;
}

const orders = new Map<number, Order>();
let clock = Date.UTC(2026, 10, 24, 9, 0, 0);
let lsn = 24_023_128;
let txId = 780;

function newOrder(id: number): Order {
  return {
    order_id: id,
    customer_id: 5000 + ((id * 37) % 200),
    order_ts: new Date(clock - (id % 5) * 3_600_000).toISOString(),
    amount: (((id * 1931) % 40000) / 100 + 5).toFixed(2),
    currency: 'EUR',
    status: 'NEW',
  };
}

type Op = 'r' | 'c' | 'u' | 'd';

interface Pending {
  topic: string;
  partition: number;
  key: string | null;
  value: string | null;
  timestamp: number;
}

function envelope(op: Op, before: Order | null, after: Order | null, snapshot: string) {
  clock += 1500;
  lsn += 328;
  txId += op === 'r' ? 0 : 1;
  return {
    before,
    after,
    source: {
      version: '2.7.3.Final',
      connector: 'postgresql',
      name: 'shop',
      ts_ms: clock - 40,
      snapshot,
      db: 'shop',
      sequence: `["${lsn - 328}","${lsn}"]`,
      schema: 'public',
      table: 'orders',
      txId,
      lsn,
      xmin: null,
    },
    op,
    ts_ms: clock,
    transaction: null,
  };
}

function change(op: Op, id: number, edit?: (o: Order) => void, snapshot = 'false'): Pending[] {
  const before = orders.get(id) ?? null;
  let after: Order | null = null;
  if (op === 'r' || op === 'c') after = newOrder(id);
  if (op === 'u') {
    after = { ...before! };
    edit?.(after);
  }
  if (after) orders.set(id, after);
  else orders.delete(id);
  const key = JSON.stringify({ order_id: id });
  const partition = id % PARTITIONS;
  const value = envelope(op, op === 'u' || op === 'd' ? before : null, after, snapshot);
  const out: Pending[] = [
    { topic: TOPIC, partition, key: b64(key), value: b64(JSON.stringify(value)), timestamp: clock },
  ];
  // Debezium's tombstone after a delete lets log compaction drop the key.
  if (op === 'd') out.push({ topic: TOPIC, partition, key: b64(key), value: null, timestamp: clock });
  return out;
}

const nextOffset = new Map<string, number>();

function event(pending: Pending[]) {
  const records: Record<string, unknown[]> = {};
  for (const p of pending) {
    const group = `${p.topic}-${p.partition}`;
    const offset = nextOffset.get(group) ?? (p.topic === TOPIC ? 500 : 0);
    nextOffset.set(group, offset + 1);
    records[group] ??= [];
    records[group].push({
      topic: p.topic,
      partition: p.partition,
      offset,
      timestamp: p.timestamp,
      timestampType: 'CREATE_TIME',
      key: p.key,
      value: p.value,
      headers: [],
    });
  }
  return {
    eventSource: 'aws:kafka',
    eventSourceArn:
      'arn:aws:kafka:eu-central-1:123456789012:cluster/floe-demo/0f1e2d3c-aaaa-bbbb-cccc-123456789abc-1',
    bootstrapServers: 'b-1.floe-demo.abc123.c2.kafka.eu-central-1.amazonaws.com:9098',
    records,
  };
}

const reprice = (amount: string) => (o: Order) => {
  o.amount = amount;
};

const batch1: Pending[] = [
  ...[1, 2, 3, 4].flatMap((id, i) => change('r', id, undefined, i === 3 ? 'last' : 'true')),
  ...[5, 6, 7, 8, 9, 10, 11, 12].flatMap((id) => change('c', id)),
  ...change('u', 2, reprice('19.90')),
  ...change('u', 7, reprice('120.00')),
  ...change('u', 7, (o) => {
    o.amount = '99.50';
    o.status = 'PAID';
  }),
];
writeFileSync('events/orders-cdc-1.json', `${JSON.stringify(event(batch1), null, 1)}\n`);

const batch2: Pending[] = [
  ...change('u', 1, (o) => {
    o.status = 'PAID';
  }),
  ...change('u', 3, reprice('42.00')),
  ...change('d', 4),
  ...change('u', 5, (o) => {
    o.status = 'SHIPPED';
  }),
  ...change('d', 8),
  ...change('c', 13),
  ...change('u', 9, reprice('7.25')),
  ...change('u', 12, reprice('310.10')),
  ...change('d', 10),
  ...change('c', 14),
  ...change('u', 13, reprice('64.00')),
  {
    topic: HEARTBEAT_TOPIC,
    partition: 0,
    key: b64('{"serverName":"shop"}'),
    value: b64(`{"ts_ms":${clock}}`),
    timestamp: clock,
  },
];
writeFileSync('events/orders-cdc-2.json', `${JSON.stringify(event(batch2), null, 1)}\n`);

const final = [...orders.values()].sort((a, b) => a.order_id - b.order_id);
process.stdout.write(
  `final state: ${final.length} orders\n${final.map((o) => JSON.stringify(o)).join('\n')}\n`,
);
