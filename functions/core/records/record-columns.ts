/**
 * A decoded ESM batch held as columns: one typed array per record field (partition, offset,
 * timestamp, and where each key, value and header value lies in the batch's one byte buffer), with
 * the record objects the rest of floe reads (`RawRecord`) as flyweights over them (`BatchRecord`: the
 * columns, an index, the offset). A record is three fields on the heap instead of ~500 bytes of
 * objects (the record, a view per key and value, an array and an object and a view per header), so
 * the garbage collector has next to nothing to copy while the batch is mapped, written and committed;
 * the fast path (mapping/fast/*) reads the columns themselves.
 *
 * Only records decoded in full by the common shape take a slot here (esm-columns.ts); any other
 * (a bad field, non-canonical base64, schema registry metadata) stays a plain RawRecord.
 */
import type { KafkaHeader, RawRecord } from './esm-event.js';

export class RecordColumns {
  /** Records held. */
  count = 0;
  /** Keys, values and header values of the batch; a range [start, end) per byte string. */
  bytes: Buffer;
  /** Bytes of `bytes` in use. */
  used = 0;
  /** The distinct topics and timestamp types, and each record's index into them. */
  readonly topics: string[] = [];
  readonly timestampTypes: string[] = [];
  readonly topic: Int32Array;
  readonly timestampType: Int32Array;
  readonly partition: Int32Array;
  /** Kafka offsets (every one a safe integer: others stay plain records). */
  readonly offset: Float64Array;
  /** Epoch milliseconds (safe integers). */
  readonly timestamp: Float64Array;
  /** Byte ranges of keys and values; start -1: null. */
  readonly keyStart: Int32Array;
  readonly keyEnd: Int32Array;
  readonly valueStart: Int32Array;
  readonly valueEnd: Int32Array;
  /** Record i's headers are headers [headerEnd[i - 1] (0 for the first), headerEnd[i]). */
  readonly headerEnd: Int32Array;
  /** Headers held, their keys, and their values' byte ranges (start -1: null). */
  headerCount = 0;
  headerKeys: string[] = [];
  headerStart: Int32Array;
  headerStop: Int32Array;

  /** Room for `capacity` records and (to start with) `bytes` bytes. */
  constructor(capacity: number, bytes: number) {
    this.bytes = Buffer.allocUnsafe(Math.max(bytes, 64));
    this.topic = new Int32Array(capacity);
    this.timestampType = new Int32Array(capacity);
    this.partition = new Int32Array(capacity);
    this.offset = new Float64Array(capacity);
    this.timestamp = new Float64Array(capacity);
    this.keyStart = new Int32Array(capacity);
    this.keyEnd = new Int32Array(capacity);
    this.valueStart = new Int32Array(capacity);
    this.valueEnd = new Int32Array(capacity);
    this.headerEnd = new Int32Array(capacity);
    // A header a record to start with (grown by doubling).
    this.headerStart = new Int32Array(Math.max(capacity, 64));
    this.headerStop = new Int32Array(Math.max(capacity, 64));
  }

  /** `bytes`, grown to hold `n` more bytes past `used` (ranges stay valid: they are not views). */
  reserve(n: number): Buffer {
    const need = this.used + n;
    if (need > this.bytes.length) {
      const grown = Buffer.allocUnsafe(Math.max(need, this.bytes.length * 2));
      this.bytes.copy(grown, 0, 0, this.used);
      this.bytes = grown;
    }
    return this.bytes;
  }

  /** Appends a header of the record being decoded (its value's range, start -1 for null). */
  pushHeader(key: string, start: number, end: number): void {
    const h = this.headerCount;
    if (h === this.headerStart.length) {
      const start2 = new Int32Array(h * 2);
      start2.set(this.headerStart);
      this.headerStart = start2;
      const stop2 = new Int32Array(h * 2);
      stop2.set(this.headerStop);
      this.headerStop = stop2;
    }
    this.headerKeys[h] = key;
    this.headerStart[h] = start;
    this.headerStop[h] = end;
    this.headerCount = h + 1;
  }

  /** Index of a string in `list`, added when new (a batch has a handful of topics and types). */
  static indexIn(list: string[], s: string): number {
    for (let k = list.length - 1; k >= 0; k--) if (list[k] === s) return k;
    list.push(s);
    return list.length - 1;
  }

  /** A view of bytes [start, end). */
  view(start: number, end: number): Uint8Array {
    return new Uint8Array(this.bytes.buffer, this.bytes.byteOffset + start, end - start);
  }

  /** First header of record i. */
  headersFrom(i: number): number {
    return i === 0 ? 0 : this.headerEnd[i - 1];
  }
}

/** A record of a RecordColumns batch, read through its columns (see the file comment). */
export class BatchRecord implements RawRecord {
  constructor(
    readonly columns: RecordColumns,
    readonly index: number,
    readonly offset: bigint,
  ) {}

  get topic(): string {
    return this.columns.topics[this.columns.topic[this.index]];
  }

  get partition(): number {
    return this.columns.partition[this.index];
  }

  get timestamp(): number {
    return this.columns.timestamp[this.index];
  }

  get timestampType(): string {
    return this.columns.timestampTypes[this.columns.timestampType[this.index]];
  }

  get key(): Uint8Array | null {
    const c = this.columns;
    const start = c.keyStart[this.index];
    return start < 0 ? null : c.view(start, c.keyEnd[this.index]);
  }

  get value(): Uint8Array | null {
    const c = this.columns;
    const start = c.valueStart[this.index];
    return start < 0 ? null : c.view(start, c.valueEnd[this.index]);
  }

  get headers(): KafkaHeader[] {
    const c = this.columns;
    const from = c.headersFrom(this.index);
    const to = c.headerEnd[this.index];
    const out: KafkaHeader[] = new Array(to - from);
    for (let h = from; h < to; h++) {
      const start = c.headerStart[h];
      out[h - from] = { key: c.headerKeys[h], value: start < 0 ? null : c.view(start, c.headerStop[h]) };
    }
    return out;
  }
}
