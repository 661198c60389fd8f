/**
 * The batch former: consumed Kafka messages → events in exactly the shape Lambda's event source mapping
 * (ESM) delivers for self-managed Kafka, so `floe run` and `floe backfill` feed the very code path the
 * Lambda runs (decodeEsmEvent → ingestEvent). Pure: no client, no clock.
 *
 * Limits are the ESM's: at most `batchSize` records (≤ 10,000) and at most 6 MB of JSON per event.
 * The ESM batching window is the caller's business (it decides when to stop collecting messages).
 */
import { ValidationError } from '../errors.js';

/** The ESM's hard limits. */
export const ESM_MAX_BATCH_SIZE = 10_000;
export const ESM_MAX_PAYLOAD_BYTES = 6 * 1024 * 1024;
/** The ESM's default batch size for Kafka sources, and its default batching window. */
export const ESM_DEFAULT_BATCH_SIZE = 100;
export const ESM_DEFAULT_BATCHING_WINDOW_MS = 500;

export type TimestampType = 'CREATE_TIME' | 'LOG_APPEND_TIME';

/** One message as a Kafka client delivers it (client-neutral, so any client can feed the former). */
export interface ConsumedMessage {
  topic: string;
  partition: number;
  /** Decimal text: Kafka offsets are int64s, past what a JS number holds exactly. */
  offset: string;
  /** Milliseconds since the epoch. */
  timestamp: number;
  timestampType: TimestampType;
  key: Uint8Array | null;
  value: Uint8Array | null;
  /** In the order the broker holds them; a name may repeat. */
  headers: { key: string; value: Uint8Array }[];
}

/** One record of an ESM event: base64 key and value (omitted when null, as the ESM does). */
export interface EsmRecord {
  topic: string;
  partition: number;
  offset: number | string;
  timestamp: number;
  timestampType: TimestampType;
  key?: string;
  value?: string;
  headers: Record<string, number[]>[];
}

export interface EsmEvent {
  eventSource: 'SelfManagedKafka';
  bootstrapServers: string;
  records: Record<string, EsmRecord[]>;
}

/** The first and last offset an event holds for one topic-partition. */
export interface PartitionSpan {
  topic: string;
  partition: number;
  first: bigint;
  last: bigint;
  /**
   * Where the consumer's reading for this span started (≤ `first`): every offset from here to `last`
   * is in the event or holds nothing a consumer delivers (a transaction marker, an aborted or
   * compacted-away record). Set by the Kafka consumers, which know their fetch position; see
   * functions/core/ingest/span-starts.ts for how a table uses it.
   */
  from?: bigint;
}

export interface FormedEvent {
  event: EsmEvent;
  records: number;
  /** UTF-8 length of `JSON.stringify(event)`: what the ESM measures against its 6 MB. */
  bytes: number;
  spans: PartitionSpan[];
}

export interface BatchLimits {
  /** Records per event, 1..10,000. */
  batchSize: number;
  /** JSON bytes per event. @default 6 MB */
  maxPayloadBytes?: number;
}

/** @throws ValidationError for a batch size outside the ESM's 1..10,000 */
export function checkBatchSize(batchSize: number, what = 'batch size'): number {
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > ESM_MAX_BATCH_SIZE) {
    throw new ValidationError(
      `${what} must be an integer from 1 to ${ESM_MAX_BATCH_SIZE} (the ESM's limit), got ${batchSize}`,
    );
  }
  return batchSize;
}

/** The ESM's record: a number offset while it is exact, else its decimal text (the decoder takes both). */
export function toEsmRecord(message: ConsumedMessage): EsmRecord {
  const offset = Number(message.offset);
  const record: EsmRecord = {
    topic: message.topic,
    partition: message.partition,
    offset: Number.isSafeInteger(offset) ? offset : message.offset,
    timestamp: message.timestamp,
    timestampType: message.timestampType,
    headers: message.headers.map((h) => ({ [h.key]: Array.from(h.value) })),
  };
  if (message.key !== null) record.key = Buffer.from(message.key).toString('base64');
  if (message.value !== null) record.value = Buffer.from(message.value).toString('base64');
  return record;
}

function envelopeBytes(bootstrapServers: string): number {
  return Buffer.byteLength(
    JSON.stringify({ eventSource: 'SelfManagedKafka', bootstrapServers, records: {} }),
    'utf8',
  );
}

/** An event under construction, with its exact JSON size kept up to date. */
class EventBuilder {
  readonly event: EsmEvent;
  bytes: number;
  records = 0;
  private readonly spans = new Map<string, PartitionSpan>();

  constructor(bootstrapServers: string) {
    this.event = { eventSource: 'SelfManagedKafka', bootstrapServers, records: {} };
    this.bytes = envelopeBytes(bootstrapServers);
  }

  /** JSON bytes `record` would add: its text, a comma, and a new `"key":[...]` group when needed. */
  cost(groupKey: string, recordBytes: number): number {
    const group = this.event.records[groupKey];
    if (group) return recordBytes + 1;
    const groups = this.spans.size;
    return recordBytes + Buffer.byteLength(JSON.stringify(groupKey), 'utf8') + 3 + (groups > 0 ? 1 : 0);
  }

  add(groupKey: string, record: EsmRecord, cost: number, offset: bigint): void {
    const group = this.event.records[groupKey];
    if (group) group.push(record);
    else this.event.records[groupKey] = [record];
    this.bytes += cost;
    this.records += 1;
    const span = this.spans.get(groupKey);
    if (!span)
      this.spans.set(groupKey, {
        topic: record.topic,
        partition: record.partition,
        first: offset,
        last: offset,
      });
    else {
      if (offset < span.first) span.first = offset;
      if (offset > span.last) span.last = offset;
    }
  }

  finish(): FormedEvent {
    return { event: this.event, records: this.records, bytes: this.bytes, spans: [...this.spans.values()] };
  }
}

/**
 * Marks where each event's span starts, for events formed from one fetch of one partition that
 * started at `fetchedFrom`: the first event from there, each next one right after the one before
 * (the fetch's messages are contiguous but for offsets that hold no deliverable record).
 */
export function markFetchStarts(events: readonly FormedEvent[], fetchedFrom: bigint | undefined): void {
  let from = fetchedFrom;
  for (const formed of events) {
    const span = formed.spans.length === 1 ? formed.spans[0] : undefined;
    if (!span || from === undefined || from > span.first) return;
    span.from = from;
    from = span.last + 1n;
  }
}

/** An event's span starts as ingestEvent takes them (topic → partition → offset), when it has any. */
export function spanStartsOf(formed: FormedEvent): Map<string, Map<number, bigint>> | undefined {
  const out = new Map<string, Map<number, bigint>>();
  for (const s of formed.spans) {
    if (s.from === undefined) continue;
    const parts = out.get(s.topic) ?? new Map<number, bigint>();
    parts.set(s.partition, s.from);
    out.set(s.topic, parts);
  }
  return out.size > 0 ? out : undefined;
}

/**
 * Splits messages, in the order given (per partition, offset order), into ESM events of at most
 * `batchSize` records and `maxPayloadBytes` of JSON. A single record larger than the payload cap gets an
 * event of its own: the ESM could never deliver it, but floe runs in-process and dropping it would lose
 * data (the caller may warn).
 * @throws ValidationError for limits outside the ESM's
 */
export function formEsmEvents(
  bootstrapServers: string,
  messages: readonly ConsumedMessage[],
  limits: BatchLimits,
): FormedEvent[] {
  const batchSize = checkBatchSize(limits.batchSize);
  const maxBytes = limits.maxPayloadBytes ?? ESM_MAX_PAYLOAD_BYTES;
  const out: FormedEvent[] = [];
  let current = new EventBuilder(bootstrapServers);
  for (const message of messages) {
    const record = toEsmRecord(message);
    const recordBytes = Buffer.byteLength(JSON.stringify(record), 'utf8');
    const groupKey = `${message.topic}-${message.partition}`;
    let cost = current.cost(groupKey, recordBytes);
    if (current.records > 0 && (current.records >= batchSize || current.bytes + cost > maxBytes)) {
      out.push(current.finish());
      current = new EventBuilder(bootstrapServers);
      cost = current.cost(groupKey, recordBytes);
    }
    current.add(groupKey, record, cost, BigInt(message.offset));
  }
  if (current.records > 0) out.push(current.finish());
  return out;
}
