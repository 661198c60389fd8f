/**
 * Random change streams for CDC tests: a source table (a plain in-memory model) changed by random
 * inserts, updates and deletes over a small key space, published as Debezium envelopes or upsert
 * records on Kafka partitions by key, and delivered in random ESM batches — some of them delivered
 * again, some overlapping what was already delivered (a redelivery after a failed invocation).
 */
import fc from 'fast-check';
import type { Schema } from '../../functions/core/spec/types.js';

export const CDC_TOPIC = 'src.public.items';
export const KAFKA_PARTITIONS = 3;

/** The source table: id (key), region (a partition column in one layout), amount, note. */
export const ITEMS_SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'region', required: true, type: 'string' },
    { id: 3, name: 'amount', required: false, type: 'long' },
    { id: 4, name: 'note', required: false, type: 'string' },
  ],
};

export interface ItemRow {
  id: number;
  region: string;
  amount: number | null;
  note: string | null;
}

export type CdcTestMode = 'debezium' | 'upsert';

/** One abstract step; interpreted against the model so the stream is one a real source could emit. */
export interface Step {
  id: number;
  /** 0–9: how the step acts on a present key (update / delete / snapshot re-read), or inserts. */
  action: number;
  region: string;
  amount: number | null;
  note: string | null;
  /** Adds a record that is no change (heartbeat, or a tombstone after a delete). */
  noise: boolean;
}

export interface StreamRecord {
  partition: number;
  offset: number;
  key: string | null;
  value: string | null;
}

export interface Delivery {
  /** Records [from, to) of the stream. */
  from: number;
  to: number;
}

export const stepArb: fc.Arbitrary<Step> = fc.record({
  id: fc.integer({ min: 1, max: 6 }),
  action: fc.integer({ min: 0, max: 9 }),
  region: fc.constantFrom('EU', 'US', 'APAC'),
  amount: fc.option(fc.integer({ min: -1000, max: 1000 }), { nil: null }),
  note: fc.option(fc.constantFrom('a', 'b', 'gift', ''), { nil: null }),
  noise: fc.boolean(),
});

/** Cut points and replays: each number picks how far a delivery goes and where it starts. */
export const deliveryPlanArb = fc.array(
  fc.record({ advance: fc.integer({ min: 0, max: 12 }), rewind: fc.integer({ min: 0, max: 6 }) }),
  { minLength: 1, maxLength: 7 },
);

/** The records of a stream, and the model's state after each record (index i: after records [0, i]). */
export interface Stream {
  records: StreamRecord[];
  states: Map<number, ItemRow>[];
}

const key = (id: number) => JSON.stringify({ id });

/** Builds the Kafka records of a stream of steps in `mode`, tracking the source table after each. */
export function buildStream(steps: Step[], mode: CdcTestMode): Stream {
  const model = new Map<number, ItemRow>();
  const records: StreamRecord[] = [];
  const states: Map<number, ItemRow>[] = [];
  const offsets = new Array<number>(KAFKA_PARTITIONS).fill(0);
  const emit = (id: number, value: unknown) => {
    const partition = id % KAFKA_PARTITIONS;
    records.push({
      partition,
      offset: offsets[partition]++,
      key: key(id),
      value: value === null ? null : JSON.stringify(value),
    });
    states.push(new Map(model));
  };
  for (const s of steps) {
    const before = model.get(s.id) ?? null;
    const row: ItemRow = { id: s.id, region: s.region, amount: s.amount, note: s.note };
    const deletes = before !== null && s.action >= 7;
    if (deletes) model.delete(s.id);
    else model.set(s.id, row);
    if (mode === 'upsert') {
      // Upsert values leave the key to the Kafka key half of the time.
      const value = s.noise ? { region: row.region, amount: row.amount, note: row.note } : row;
      emit(s.id, deletes ? null : value);
      continue;
    }
    const op = before === null ? (s.action < 2 ? 'r' : 'c') : deletes ? 'd' : s.action < 2 ? 'r' : 'u';
    emit(s.id, {
      op,
      before: op === 'u' || op === 'd' ? before : null,
      after: deletes ? null : row,
      ts_ms: 1,
    });
    if (s.noise) {
      if (deletes)
        emit(s.id, null); // Debezium's tombstone after a delete
      else emit(s.id, { ts_ms: 2 }); // a heartbeat-shaped value
    }
  }
  return { records, states };
}

/** Turns a plan into deliveries: each goes `advance` past the furthest point, starting `rewind` before it. */
export function planDeliveries(total: number, plan: { advance: number; rewind: number }[]): Delivery[] {
  const out: Delivery[] = [];
  let delivered = 0;
  for (const p of plan) {
    const to = Math.min(total, delivered + p.advance);
    const from = Math.max(0, delivered - p.rewind);
    if (to > from) out.push({ from, to });
    delivered = Math.max(delivered, to);
  }
  if (delivered < total) out.push({ from: delivered, to: total });
  return out;
}

/** An ESM event holding records [from, to) of the stream. */
export function esmEvent(records: StreamRecord[], delivery: Delivery): unknown {
  const groups: Record<string, unknown[]> = {};
  for (const r of records.slice(delivery.from, delivery.to)) {
    const group = `${CDC_TOPIC}-${r.partition}`;
    groups[group] ??= [];
    groups[group].push({
      topic: CDC_TOPIC,
      partition: r.partition,
      offset: r.offset,
      timestamp: 1_795_000_000_000 + r.offset,
      timestampType: 'CREATE_TIME',
      key: r.key === null ? null : Buffer.from(r.key).toString('base64'),
      value: r.value === null ? null : Buffer.from(r.value).toString('base64'),
      headers: [],
    });
  }
  return { eventSource: 'aws:kafka', records: groups };
}

/** A row as a comparable string (ids and amounts as plain numbers). */
export function itemKey(row: Record<string, unknown>): string {
  const n = (v: unknown) => (v === null || v === undefined ? 'null' : String(v));
  return `${n(row.id)}|${n(row.region)}|${n(row.amount)}|${n(row.note)}`;
}

/** The model's rows as sorted comparable strings. */
export function modelKeys(state: Map<number, ItemRow>): string[] {
  return [...state.values()].map((r) => itemKey({ ...r })).sort();
}

/**
 * The model after the records of `delivered` were ingested, in any order and any number of times:
 * per key, the state its newest delivered change left (keys stay on one Kafka partition, and floe's
 * `_kafka` lineage keeps a late change from undoing a newer one). Debezium's tombstones and
 * heartbeat-shaped values change nothing. Rows as `itemKey` strings, sorted.
 */
export function modelAfter(stream: Stream, mode: CdcTestMode, delivered: ReadonlySet<number>): string[] {
  const newest = new Map<number, number>();
  for (const i of delivered) {
    const { key, value } = stream.records[i];
    if (key === null) continue;
    if (mode === 'debezium' && (value === null || !('op' in (JSON.parse(value) as object)))) continue;
    const id = (JSON.parse(key) as { id: number }).id;
    if ((newest.get(id) ?? -1) < i) newest.set(id, i);
  }
  return [...newest]
    .flatMap(([id, i]) => {
      const row = stream.states[i].get(id);
      return row ? [itemKey({ ...row })] : [];
    })
    .sort();
}
