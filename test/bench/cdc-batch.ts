/**
 * Debezium change events for the orders table (the plain envelope, `schemas.enable=false`): a batch of
 * creates, and a later batch that updates some of those keys, deletes some and creates new ones — so
 * its commit needs both a data file and an equality-delete file.
 */
import { type OrderMessage, makeOrderMessages } from './orders-batch.js';

type Order = Record<string, unknown>;

function envelope(op: 'c' | 'u' | 'd', before: Order | null, after: Order | null, tsMs: number): string {
  return JSON.stringify({
    before,
    after,
    op,
    ts_ms: tsMs,
    source: { connector: 'postgresql', db: 'shop', schema: 'public', table: 'orders', lsn: tsMs },
  });
}

/** Re-keys order messages as Debezium events (key `{"order_id": n}`). */
function asChange(
  m: OrderMessage,
  op: 'c' | 'u' | 'd',
  before: Order | null,
  after: Order | null,
): OrderMessage {
  const orderId = (after ?? before)?.order_id;
  return {
    ...m,
    key: JSON.stringify({ order_id: orderId }),
    value: envelope(op, before, after, m.timestampMs),
  };
}

/**
 * Two batches on the same partitions: `creates` inserts `records` orders; `changes` updates every
 * second one (status → SHIPPED), deletes every fifth and inserts `records / 5` new ones.
 */
export function makeCdcMessages(
  records: number,
  partitions: number,
): {
  creates: OrderMessage[];
  changes: OrderMessage[];
} {
  const orders = makeOrderMessages({ records, partitions, seed: 11 });
  const creates = orders.map((m) => asChange(m, 'c', null, JSON.parse(m.value) as Order));
  const fresh = makeOrderMessages({
    records: Math.floor(records / 5),
    partitions,
    seed: 12,
    firstOrderId: 9_000_000,
  });
  const changed: OrderMessage[] = [];
  orders.forEach((m, i) => {
    const before = JSON.parse(m.value) as Order;
    if (i % 5 === 0) changed.push(asChange(m, 'd', before, null));
    else if (i % 2 === 0) changed.push(asChange(m, 'u', before, { ...before, status: 'SHIPPED' }));
  });
  for (const m of fresh) changed.push(asChange(m, 'c', null, JSON.parse(m.value) as Order));
  // Offsets continue per partition after the creates batch, in this order.
  const perPartition = new Array<number>(partitions).fill(0);
  const changes = changed.map((m, i) => {
    const partition = i % partitions;
    return { ...m, partition, index: perPartition[partition]++ };
  });
  return { creates, changes };
}
