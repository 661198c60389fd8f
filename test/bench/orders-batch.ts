/**
 * A deterministic MSK event source mapping batch of realistic JSON orders (the shape of
 * events/orders-batch-*.json, scaled up to the ESM's limits: 10,000 records, just under 6 MB), and the
 * same records as NDJSON for the DuckDB anchor.
 *
 * The values are generated once; `makeOrdersEvent` re-wraps them at any first offset, so repeated
 * ingests into one table are new batches (not replays the table would skip).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseSchema } from '../../functions/core/spec/schema.js';
import type { Schema } from '../../functions/core/spec/types.js';
import { seededRandom } from '../support/seeded-random.js';

export const ORDERS_TOPIC = 'orders';
export const ORDERS_SCHEMA_PATH = fileURLToPath(new URL('../../events/orders.schema.json', import.meta.url));

/** The orders table schema of the sample events (without `_kafka`, which the route adds). */
export function readOrdersSchema(): Schema {
  return parseSchema(JSON.parse(readFileSync(ORDERS_SCHEMA_PATH, 'utf8')), ORDERS_SCHEMA_PATH);
}

const COUNTRIES = ['DE', 'FR', 'US', 'JP', 'BR', 'IN', 'NL', 'ES', 'IT', 'PL', 'SE', 'CA'];
const CITIES = ['Berlin', 'Paris', 'Austin', 'Osaka', 'São Paulo', 'Pune', 'Utrecht', 'Sevilla', 'Torino'];
const STATUSES = ['NEW', 'PAID', 'SHIPPED', 'DELIVERED', 'CANCELLED'];
const CHANNELS = ['web', 'ios', 'android', 'pos'];
const CURRENCIES = ['EUR', 'USD', 'JPY', 'BRL'];

/** One Kafka record of the batch before framing: key, value and headers as the producer sent them. */
export interface OrderMessage {
  partition: number;
  /** Position within its partition (the offset is firstOffset + index). */
  index: number;
  timestampMs: number;
  key: string;
  value: string;
  headers: { name: string; value: string }[];
}

export interface OrdersBatchOptions {
  records: number;
  partitions: number;
  seed: number;
  /** First order id: consecutive batches can continue the sequence. @default 1_000_000 */
  firstOrderId?: number;
}

/**
 * The messages of one batch, round-robin over partitions. The values carry a few fields the table
 * does not map (channel, coupon), as real producers' payloads do.
 */
export function makeOrderMessages(options: OrdersBatchOptions): OrderMessage[] {
  const rand = seededRandom(options.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const base = Date.UTC(2026, 10, 20);
  const perPartition = new Array<number>(options.partitions).fill(0);
  const out: OrderMessage[] = [];
  for (let i = 0; i < options.records; i++) {
    const orderId = (options.firstOrderId ?? 1_000_000) + i;
    const ts = base + Math.floor(rand() * 7 * 86_400_000);
    const lines = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => ({
      sku: `SKU-${1000 + Math.floor(rand() * 9000)}`,
      qty: 1 + Math.floor(rand() * 4),
      unit_price: (Math.floor(rand() * 20_000) / 100).toFixed(2),
    }));
    const amount = lines.reduce((s, l) => s + Math.round(Number(l.unit_price) * 100) * l.qty, 0) / 100;
    const value = {
      order_id: orderId,
      customer_id: 5000 + Math.floor(rand() * 200_000),
      order_ts: new Date(ts).toISOString(),
      amount: Number(amount.toFixed(2)),
      currency: pick(CURRENCIES),
      country: pick(COUNTRIES),
      status: rand() < 0.05 ? null : pick(STATUSES),
      shipping:
        rand() < 0.1 ? null : { city: pick(CITIES), postcode: String(10_000 + Math.floor(rand() * 80_000)) },
      lines,
      channel: pick(CHANNELS),
      // Absent (not null) when unused, as most producers serialise optional fields.
      ...(rand() < 0.2 ? { coupon: `SAVE${Math.floor(rand() * 50)}` } : {}),
    };
    const partition = i % options.partitions;
    out.push({
      partition,
      index: perPartition[partition]++,
      timestampMs: ts + 150 + Math.floor(rand() * 500),
      key: String(orderId),
      value: JSON.stringify(value),
      headers: [
        {
          name: 'trace-id',
          value: Math.floor(rand() * 2 ** 32)
            .toString(16)
            .padStart(8, '0'),
        },
      ],
    });
  }
  return out;
}

/** An MSK ESM event (as Lambda delivers it: base64 key/value, headers as byte arrays). */
export interface EsmEvent {
  eventSource: 'aws:kafka';
  eventSourceArn: string;
  bootstrapServers: string;
  records: Record<string, unknown[]>;
}

const bytesOf = (text: string): number[] => [...Buffer.from(text)];

/** Frames the messages as an MSK ESM event whose offsets start at `firstOffset` in every partition. */
export function makeOrdersEvent(messages: OrderMessage[], firstOffset: number): EsmEvent {
  const records: Record<string, unknown[]> = {};
  for (const m of messages) {
    const group = `${ORDERS_TOPIC}-${m.partition}`;
    records[group] ??= [];
    records[group].push({
      topic: ORDERS_TOPIC,
      partition: m.partition,
      offset: firstOffset + m.index,
      timestamp: m.timestampMs,
      timestampType: 'CREATE_TIME',
      key: Buffer.from(m.key).toString('base64'),
      value: Buffer.from(m.value).toString('base64'),
      headers: m.headers.map((h) => ({ [h.name]: bytesOf(h.value) })),
    });
  }
  return {
    eventSource: 'aws:kafka',
    eventSourceArn: 'arn:aws:kafka:eu-central-1:123456789012:cluster/floe-bench/0f1e2d3c-1',
    bootstrapServers: 'b-1.floe-bench.abc123.c2.kafka.eu-central-1.amazonaws.com:9098',
    records,
  };
}

/**
 * A message array's event text at offset 0, cut around each record's offset (only the offsets differ
 * from event to event). Kept as bytes: as JS strings, 20,000 of them would be live heap a Lambda's
 * process does not have, which every mark-compact of the bench process would mark.
 */
interface Framing {
  /** The text without the offsets' digits. */
  bytes: Buffer;
  /** Per record, in text order: where its offset's digits go in `bytes`, and where the text up to the next record's ends. */
  offsetAt: Int32Array;
  ends: Int32Array;
  /** Per record: its index in its partition (the offset is firstOffset + index). */
  indices: Int32Array;
}

const framings = new WeakMap<OrderMessage[], Framing>();

function framing(messages: OrderMessage[]): Framing {
  const known = framings.get(messages);
  if (known) return known;
  const text = JSON.stringify(makeOrdersEvent(messages, 0));
  if (Buffer.byteLength(text) !== text.length)
    throw new Error('ordersEventText: the event text is not ASCII');
  // The records in text order (grouped by partition, as makeOrdersEvent groups them).
  const order = [...messages.keys()];
  const groups = [...new Set(messages.map((m) => m.partition))];
  order.sort(
    (a, b) => groups.indexOf(messages[a].partition) - groups.indexOf(messages[b].partition) || a - b,
  );
  const n = messages.length;
  const offsetAt = new Int32Array(n);
  const ends = new Int32Array(n);
  const indices = new Int32Array(n);
  const pieces: string[] = [];
  let from = 0; // in text
  let length = 0; // of the pieces
  for (let k = 0; k < n; k++) {
    const m = messages[order[k]];
    const key = `{"topic":"${ORDERS_TOPIC}","partition":${m.partition},"offset":`;
    const at = text.indexOf(key, from);
    const digits = at + key.length;
    const after = digits + String(m.index).length;
    // Up to the next record's text (the comma, or the next group's opening), or to the event's end.
    const next = k + 1 < n ? text.indexOf('{"topic":', after) - 1 : text.length - 2;
    pieces.push(text.slice(from, digits), text.slice(after, next));
    offsetAt[k] = length + (digits - from);
    length += digits - from + (next - after);
    ends[k] = length;
    indices[k] = m.index;
    from = next;
  }
  pieces.push(text.slice(from));
  const f: Framing = { bytes: Buffer.from(pieces.join(''), 'latin1'), offsetAt, ends, indices };
  framings.set(messages, f);
  // The cut must give back the text it was cut from, at any offset's number of digits.
  for (const offset of [0, 987_654_321]) {
    if (ordersEventText(messages, offset) !== JSON.stringify(makeOrdersEvent(messages, offset))) {
      framings.delete(messages);
      throw new Error(`ordersEventText differs from JSON.stringify(makeOrdersEvent(…, ${offset}))`);
    }
  }
  return f;
}

let textBuffer = Buffer.alloc(0);

/**
 * `JSON.stringify(makeOrdersEvent(messages, firstOffset))`, built the way a Lambda's runtime gets its
 * event: as bytes (outside the JS heap), decoded into one string. Building 10,000 record objects and
 * stringifying them would leave ~20 MiB of young garbage (some of it promoted) in the process right
 * before the batch is timed, which no Lambda process ever holds: its event text arrives from the
 * Runtime API (aws-lambda-ric makes one string of the body and JSON.parses it). Here the garbage is the
 * offsets' digits.
 */
export function ordersEventText(messages: OrderMessage[], firstOffset: number): string {
  const { bytes, offsetAt, ends, indices } = framing(messages);
  const n = indices.length;
  const size = bytes.length + n * 17;
  // One buffer for every event, grown when needed: a fresh 6 MB one per event would be external memory
  // V8 counts toward its next mark-compact, which a Lambda's runtime does not allocate.
  if (textBuffer.length < size) textBuffer = Buffer.allocUnsafeSlow(size);
  const out = textBuffer;
  let at = 0;
  let from = 0;
  for (let k = 0; k < n; k++) {
    at += bytes.copy(out, at, from, offsetAt[k]);
    at += out.write(String(firstOffset + indices[k]), at, 'latin1');
    from = offsetAt[k];
    at += bytes.copy(out, at, from, ends[k]);
    from = ends[k];
  }
  at += bytes.copy(out, at, from, bytes.length);
  // utf8, as the runtime's string: Node makes large latin1 strings external (V8 then counts their bytes
  // toward its next mark-compact), a UTF-8 decoding is a heap string
  return out.toString('utf8', 0, at);
}

/**
 * The same records as NDJSON for the DuckDB anchor: the order fields plus a `_kafka` object with the
 * lineage floe adds (topic, partition, offset, timestamp, timestamp type, key, headers), so both sides
 * parse, type and write the same columns.
 */
export function makeOrdersNdjson(messages: OrderMessage[], firstOffset: number): string {
  const lines: string[] = [];
  for (const m of messages) {
    const kafka = {
      topic: ORDERS_TOPIC,
      partition: m.partition,
      offset: firstOffset + m.index,
      timestamp: new Date(m.timestampMs).toISOString(),
      timestamp_type: 'CREATE_TIME',
      key: m.key,
      headers: m.headers.map((h) => ({ key: h.name, value: h.value })),
    };
    // Splice `_kafka` into the value's text: the order fields stay byte-for-byte what the producer sent.
    lines.push(`${m.value.slice(0, -1)},"_kafka":${JSON.stringify(kafka)}}`);
  }
  return `${lines.join('\n')}\n`;
}
