/**
 * Decoding of Lambda's Kafka event source mapping events (MSK `aws:kafka` and `SelfManagedKafka`).
 * A malformed event (not an ESM event at all) is a ValidationError for the whole batch; a malformed
 * record inside a valid event becomes a `RawRecord` with a `decodeError`, so it goes to the DLQ and
 * the rest of the batch goes on. Records of the common shape are decoded into the batch's columns
 * (esm-columns.ts, record-columns.ts) and read through BatchRecord flyweights; the others are decoded
 * one by one (decodeRecord) into plain RawRecords, with the same fields either way.
 */
import { ValidationError } from '../errors.js';
import {
  canonicalBase64Length,
  decodeIntoColumns,
  type GroupFallback,
  isPartition,
  mixesAlphabets,
} from './esm-columns.js';
import { isRawJson } from './event-json.js';
import { BatchRecord, offsetNumber, RecordColumns, type RecordStorage } from './record-columns.js';

export interface KafkaHeader {
  key: string;
  /** null for a header sent with a null value, which Kafka keeps distinct from an empty one. */
  value: Uint8Array | null;
}

/** One Kafka record as floe sees it: raw bytes, nothing parsed yet. */
export interface RawRecord {
  topic: string;
  partition: number;
  offset: bigint;
  /** Milliseconds since the epoch. */
  timestamp: number;
  timestampType: string;
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: KafkaHeader[];
  /** Provisioned-mode schema registry metadata, when the ESM decoded the payload. */
  keySchemaMetadata?: unknown;
  valueSchemaMetadata?: unknown;
  /** Set when the record itself could not be decoded (bad base64, headers, ...). */
  decodeError?: string;
  /** The record as delivered, for the DLQ when it could not be decoded. */
  original?: unknown;
}

/** `topic-partition@offset`: a record named in messages. */
export function recordLabel(record: RawRecord): string {
  return `${record.topic}-${record.partition}@${record.offset}`;
}

export interface DecodedEvent {
  eventSource: 'aws:kafka' | 'SelfManagedKafka';
  eventSourceArn?: string;
  /** In topic-partition then offset order; made on first read (the event is not needed by then). */
  readonly records: RawRecord[];
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64URL = /^[A-Za-z0-9_-]*={0,2}$/;

/**
 * Decodes base64 leniently about padding and trailing bits (AWS's own sample key is not canonical)
 * but strictly about the alphabet, so garbage is reported rather than silently skipped.
 * @throws ValidationError for characters outside the base64 alphabets
 */
export function decodeBase64(text: string, what: string, slab?: ByteSlab): Uint8Array {
  // Fast path for canonical text (what producers and the ESM send), one native call: Node's decoder
  // skips characters outside the alphabets, so a decode of exactly the length the text implies used
  // only alphabet characters. Anything else takes the strict path below, so errors stay the same.
  const expected = canonicalBase64Length(text);
  if (expected >= 0) {
    if (slab) {
      // Straight into the batch's one buffer: no Buffer per record.
      const { buffer, at } = slab.reserve(expected);
      if (buffer.write(text, at, expected, 'base64') === expected && !mixesAlphabets(text))
        return slab.take(expected);
    } else {
      const fast = Buffer.from(text, 'base64');
      if (fast.byteLength === expected && !mixesAlphabets(text)) {
        return new Uint8Array(fast.buffer, fast.byteOffset, fast.byteLength);
      }
    }
  }
  const compact = text.replace(/\s+/g, '');
  if (!BASE64.test(compact) && !BASE64URL.test(compact)) {
    throw new ValidationError(`${what} is not valid base64`);
  }
  if (compact.replace(/=+$/, '').length % 4 === 1)
    throw new ValidationError(`${what} is not valid base64 (bad length)`);
  const buf = Buffer.from(compact, BASE64.test(compact) ? 'base64' : 'base64url');
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

/**
 * The decoded bytes of one batch (keys, values, header values) in a few large buffers, handed out as
 * views: no Buffer, pool slice or copy per record. A view keeps its slab alive, as a pooled Buffer
 * keeps its pool.
 */
export class ByteSlab {
  /** The current slab and the first free byte in it (read after reserve()). */
  buffer = Buffer.allocUnsafe(0);
  at = 0;

  constructor(private readonly slabBytes = 1 << 20) {}

  /** Room for `n` bytes at `at` of `buffer` (taken only by take()). */
  reserve(n: number): { readonly buffer: Buffer; readonly at: number } {
    if (this.at + n > this.buffer.length) {
      this.buffer = Buffer.allocUnsafe(Math.max(this.slabBytes, n));
      this.at = 0;
    }
    return this;
  }

  /** The `n` bytes reserved (and written) at the current position, as a view. */
  take(n: number): Uint8Array {
    const view = new Uint8Array(this.buffer.buffer, this.buffer.byteOffset + this.at, n);
    this.at += n;
    return view;
  }
}

/** Header bytes in one pass; undefined when an element is not a byte (signed or unsigned). */
function headerBytes(value: unknown[], slab: ByteSlab): Uint8Array | undefined {
  const { buffer, at } = slab.reserve(value.length);
  const out = buffer;
  for (let i = 0; i < value.length; i++) {
    const b = value[i];
    // Java-based producers may deliver signed bytes; & 0xff maps them to unsigned.
    if (typeof b === 'number' && Number.isInteger(b) && b >= -128 && b <= 255) out[at + i] = b & 0xff;
    // A hole of a sparse array is 0, as `Uint8Array.from` reads one.
    else if (b === undefined && !(i in value)) out[at + i] = 0;
    else return undefined;
  }
  return slab.take(value.length);
}

/** The headers of the record being decoded (copied out at its exact length: one array per record). */
const scratch: KafkaHeader[] = [];

function decodeHeaders(raw: unknown, slab: ByteSlab): KafkaHeader[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new ValidationError('headers must be an array');
  if (raw.length === 0) return [];
  const out = scratch;
  out.length = 0;
  for (const h of raw) {
    if (h === null || typeof h !== 'object' || Array.isArray(h)) {
      throw new ValidationError('each header must be an object { name: [bytes] }');
    }
    // for-in over own keys: Object.entries' keys in its order, without an entries array per header.
    for (const key in h) {
      if (!Object.hasOwn(h, key)) continue;
      const value = (h as Record<string, unknown>)[key];
      if (value === null) {
        out.push({ key, value: null });
        continue;
      }
      const bytes = Array.isArray(value) ? headerBytes(value, slab) : undefined;
      if (!bytes) throw new ValidationError(`header '${key}' is not an array of bytes`);
      out.push({ key, value: bytes });
    }
  }
  const headers = out.slice();
  out.length = 0; // keep no record's headers alive
  return headers;
}

/** Kafka offsets are int64s ≥ 0 (the lineage and DLQ `offset` columns are Iceberg longs). */
const MAX_OFFSET = 2n ** 63n - 1n;
const DIGITS = /^\d+$/;

/** What a key `topic-partition` names: its partition text must be the digits of a partition number. */
function groupFallback(groupKey: string): GroupFallback {
  const dash = groupKey.lastIndexOf('-');
  const digits = dash >= 0 ? groupKey.slice(dash + 1) : '';
  const partition = DIGITS.test(digits) ? Number(digits) : -1;
  return {
    key: groupKey,
    topic: dash >= 0 ? groupKey.slice(0, dash) : groupKey,
    partition: isPartition(partition) ? partition : -1,
  };
}

/** A field as given, for messages: its JSON text (an exactly parsed number's own digits). */
function given(value: unknown): string {
  return value === undefined ? 'undefined' : JSON.stringify(value);
}

/**
 * A record's offset, or why it has none. floe's own parse (event-json.ts) hands a number that is not a
 * safe integer over as its text; a plain number past 2^53 was rounded by whoever parsed the event (the
 * Lambda runtime does, before the handler), so its value is not known.
 */
function offsetOf(offset: unknown): bigint | string {
  if (typeof offset === 'number') {
    if (Number.isSafeInteger(offset) && offset >= 0) return BigInt(offset);
    if (offset > Number.MAX_SAFE_INTEGER && Number.isInteger(offset))
      return `record offset ${offset} cannot be read exactly: it is past 2^53, and the event was parsed into doubles before floe saw it (the Lambda runtime parses it), which rounds such a number`;
  }
  const text = typeof offset === 'string' ? offset : isRawJson(offset) ? offset.rawJSON : undefined;
  if (text !== undefined && DIGITS.test(text) && BigInt(text) <= MAX_OFFSET) return BigInt(text);
  return `record offset ${given(offset)} is not a Kafka offset (an integer from 0 to 9223372036854775807)`;
}

/** A record's partition, or why it has none: its own, which must be the one its key names, else the key's. */
function partitionOf(r: Record<string, unknown>, group: GroupFallback): number | string {
  const partition = r.partition;
  const absent = partition === undefined || partition === null;
  if (!absent && !isPartition(partition))
    return `record partition ${given(partition)} is not a Kafka partition number (an integer from 0 to 2147483647)`;
  const topic = r.topic;
  if (topic !== undefined && topic !== null && typeof topic !== 'string')
    return `record topic ${given(topic)} is not a string`;
  const key = JSON.stringify(group.key);
  if (group.partition < 0)
    return `event.records[${key}] names no partition (its keys are "topic-partition"), so the record's cannot be checked against it`;
  if ((!absent && partition !== group.partition) || (typeof topic === 'string' && topic !== group.topic))
    return `record ${given(topic ?? group.topic)} partition ${given(absent ? group.partition : partition)} is under event.records[${key}], which names topic ${JSON.stringify(group.topic)} partition ${group.partition}`;
  return group.partition;
}

function decodeRecord(raw: unknown, group: GroupFallback, slab: ByteSlab): RawRecord {
  const r = (raw ?? {}) as Record<string, unknown>;
  const record: RawRecord = {
    topic: typeof r.topic === 'string' ? r.topic : group.topic,
    // Set below once the record is placed; -1 (no partition, no offset) when it cannot be, so that a
    // dead letter claims no offset that no valid record holds (its values as given are in `original`).
    partition: -1,
    offset: -1n,
    // Checked below (a malformed one makes the record a dead letter); 0 until then, and when absent.
    timestamp: Number.isSafeInteger(r.timestamp) ? (r.timestamp as number) : 0,
    timestampType: typeof r.timestampType === 'string' ? r.timestampType : 'NO_TIMESTAMP_TYPE',
    key: null,
    value: null,
    headers: [],
  };
  try {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
      throw new ValidationError('record is not an object');
    const partition = partitionOf(r, group);
    const offset = offsetOf(r.offset);
    // A partition of its own with an offset that is not one still names where the record came from.
    if (typeof partition === 'number') record.partition = partition;
    if (typeof offset === 'string') throw new ValidationError(offset);
    if (typeof partition === 'string') throw new ValidationError(partition);
    record.offset = offset;
    if (r.timestamp !== undefined && r.timestamp !== null && !Number.isSafeInteger(r.timestamp)) {
      // Lineage and the DLQ keep it as µs: a fraction or a magnitude past 2^53 ms has no exact µs.
      throw new ValidationError(
        `record timestamp ${given(r.timestamp)} is not an integer number of epoch milliseconds`,
      );
    }
    if (r.key !== undefined && r.key !== null) {
      if (typeof r.key !== 'string') throw new ValidationError('key must be a base64 string');
      record.key = decodeBase64(r.key, 'key', slab);
    }
    if (r.value !== undefined && r.value !== null) {
      if (typeof r.value !== 'string') throw new ValidationError('value must be a base64 string');
      record.value = decodeBase64(r.value, 'value', slab);
    }
    record.headers = decodeHeaders(r.headers, slab);
    if (r.keySchemaMetadata !== undefined) record.keySchemaMetadata = r.keySchemaMetadata;
    if (r.valueSchemaMetadata !== undefined) record.valueSchemaMetadata = r.valueSchemaMetadata;
  } catch (error) {
    record.decodeError = error instanceof Error ? error.message : String(error);
    record.original = raw;
  }
  return record;
}

export interface DecodeOptions {
  /**
   * false: every record becomes a plain RawRecord object (the reference the columnar decoding is
   * tested against). @default true
   */
  columns?: boolean;
  /**
   * Buffers to decode into, kept from the last decode with the same storage. Only for a caller that is
   * done with every record of that decode (the ingest handler: invocations run one at a time).
   */
  storage?: RecordStorage;
}

/** Topic-partition then offset order. */
function compareRecords(a: RawRecord, b: RawRecord): number {
  if (a.topic !== b.topic) return a.topic < b.topic ? -1 : 1;
  if (a.partition !== b.partition) return a.partition - b.partition;
  // As numbers where they are exact (a batch's records: no BigInt a record).
  const x = offsetNumber(a);
  const y = offsetNumber(b);
  if (!Number.isNaN(x) && !Number.isNaN(y)) return x < y ? -1 : x > y ? 1 : 0;
  return a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0;
}

/** Characters of a record's key and value text (0 for anything that is not one). */
function base64Chars(raw: unknown): number {
  if (raw === null || typeof raw !== 'object') return 0;
  const { key, value } = raw as { key?: unknown; value?: unknown };
  return (typeof key === 'string' ? key.length : 0) + (typeof value === 'string' ? value.length : 0);
}

/**
 * Decodes an ESM event into records, in topic-partition then offset order.
 * @throws ValidationError when the event is not a Kafka ESM event at all
 */
export function decodeEsmEvent(event: unknown, options: DecodeOptions = {}): DecodedEvent {
  if (event === null || typeof event !== 'object' || Array.isArray(event)) {
    throw new ValidationError('event is not a Kafka event source mapping event (not an object)');
  }
  const e = event as Record<string, unknown>;
  if (e.eventSource !== 'aws:kafka' && e.eventSource !== 'SelfManagedKafka') {
    throw new ValidationError(
      `event is not a Kafka event source mapping event: eventSource is ${JSON.stringify(e.eventSource)}, expected "aws:kafka" or "SelfManagedKafka"`,
    );
  }
  if (e.records === null || typeof e.records !== 'object' || Array.isArray(e.records)) {
    throw new ValidationError('event.records must be an object keyed "topic-partition"');
  }
  const groups = Object.entries(e.records as Record<string, unknown>);
  let count = 0;
  let text = 0;
  for (const [groupKey, list] of groups) {
    if (!Array.isArray(list)) throw new ValidationError(`event.records["${groupKey}"] must be an array`);
    count += list.length;
    if (options.columns === false) continue;
    for (let k = 0; k < list.length; k++) text += base64Chars(list[k]);
  }
  // Base64 is 4 characters for 3 bytes; a few header bytes a record to start with (grown when needed).
  const columns = new RecordColumns(
    options.columns === false ? 0 : count,
    Math.ceil(text * 0.75) + 16 * count,
    options.storage?.last,
  );
  if (options.storage) options.storage.last = columns;
  // Where each record went, in event order: a column slot (≥ 0), or plain record k (-1 - k). The
  // records themselves are made on first read (records below), once the caller may have let go of
  // the event: decoding allocates nearly nothing on the heap, so no collection copies the event.
  const order = new Int32Array(count);
  const plain: RawRecord[] = [];
  let slab: ByteSlab | undefined;
  let n = 0;
  for (const [groupKey, list] of groups) {
    const group = groupFallback(groupKey);
    const items = list as unknown[];
    for (let k = 0; k < items.length; k++) {
      const raw = items[k];
      if (options.columns !== false && decodeIntoColumns(raw, group, columns)) order[n++] = columns.count - 1;
      else {
        slab ??= new ByteSlab();
        plain.push(decodeRecord(raw, group, slab));
        order[n++] = -plain.length;
      }
    }
  }
  let records: RawRecord[] | undefined;
  return {
    eventSource: e.eventSource,
    eventSourceArn: typeof e.eventSourceArn === 'string' ? e.eventSourceArn : undefined,
    get records() {
      records ??= recordsOf(columns, order, plain);
      return records;
    },
  };
}

/** The records in topic-partition then offset order (sorted only when the event was not). */
function recordsOf(columns: RecordColumns, order: Int32Array, plain: readonly RawRecord[]): RawRecord[] {
  const records: RawRecord[] = new Array(order.length);
  let sorted = true;
  for (let n = 0; n < order.length; n++) {
    const i = order[n];
    const record = i >= 0 ? new BatchRecord(columns, i) : plain[-1 - i];
    if (sorted && n > 0 && compareRecords(records[n - 1], record) > 0) sorted = false;
    records[n] = record;
  }
  if (!sorted) records.sort(compareRecords);
  return records;
}
