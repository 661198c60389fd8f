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
  /** Headers held, their keys (an index into the distinct `headerKeys`), and their values' byte ranges (start -1: null). */
  headerCount = 0;
  readonly headerKeys: string[] = [];
  headerKey: Int32Array;
  headerStart: Int32Array;
  headerStop: Int32Array;
  /** The distinct header keys' indexes (most batches have a handful, all headers one of them). */
  private readonly headerKeyIndex = new Map<string, number>();

  /**
   * Room for `capacity` records and (to start with) `bytes` bytes: the buffers of `reuse` where they
   * are large enough (its records must never be read again: every slot is written before it is read,
   * and only slots below `count` are), else new ones.
   */
  constructor(capacity: number, bytes: number, reuse?: RecordColumns) {
    const ints = (from: Int32Array | undefined, n: number) =>
      from !== undefined && from.length >= n ? from : new Int32Array(n);
    const doubles = (from: Float64Array | undefined) =>
      from !== undefined && from.length >= capacity ? from : new Float64Array(capacity);
    const room = Math.max(bytes, 64);
    this.bytes = reuse !== undefined && reuse.bytes.length >= room ? reuse.bytes : Buffer.allocUnsafe(room);
    this.topic = ints(reuse?.topic, capacity);
    this.timestampType = ints(reuse?.timestampType, capacity);
    this.partition = ints(reuse?.partition, capacity);
    this.offset = doubles(reuse?.offset);
    this.timestamp = doubles(reuse?.timestamp);
    this.keyStart = ints(reuse?.keyStart, capacity);
    this.keyEnd = ints(reuse?.keyEnd, capacity);
    this.valueStart = ints(reuse?.valueStart, capacity);
    this.valueEnd = ints(reuse?.valueEnd, capacity);
    this.headerEnd = ints(reuse?.headerEnd, capacity);
    // A header a record to start with (grown by doubling).
    this.headerKey = ints(reuse?.headerKey, Math.max(capacity, 64));
    this.headerStart = ints(reuse?.headerStart, Math.max(capacity, 64));
    this.headerStop = ints(reuse?.headerStop, Math.max(capacity, 64));
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
      this.headerKey = grown(this.headerKey);
      this.headerStart = grown(this.headerStart);
      this.headerStop = grown(this.headerStop);
    }
    this.headerKey[h] = this.headerKeyOf(key, h);
    this.headerStart[h] = start;
    this.headerStop[h] = end;
    this.headerCount = h + 1;
  }

  /** The index of a header key in headerKeys (added when new); `h` the header it is for. */
  private headerKeyOf(key: string, h: number): number {
    if (h > 0) {
      // Mostly the key of the header before (a batch's records carry the same headers).
      const last = this.headerKey[h - 1];
      if (this.headerKeys[last] === key) return last;
    }
    let k = this.headerKeyIndex.get(key);
    if (k === undefined) {
      k = this.headerKeys.length;
      this.headerKeys.push(key);
      this.headerKeyIndex.set(key, k);
    }
    return k;
  }

  /** The key of header h. */
  headerKeyAt(h: number): string {
    return this.headerKeys[this.headerKey[h]];
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

/**
 * The buffers one decode hands to the next (decodeEsmEvent's `storage`), for a caller whose batches
 * run one after the other and are done with when the next is decoded: a Lambda handler. A 6 MB
 * batch's ~4 MiB of byte and column buffers then stay the same from batch to batch. Made new each
 * time, they outlive the batch's scavenges (the batch holds them throughout), so they are freed only
 * by the next mark-compact, and every batch until then adds its own: ~4 MiB of peak RSS a batch.
 */
export class RecordStorage {
  /** The columns of the last decode that used this storage: the next takes their buffers. */
  last: RecordColumns | undefined;
}

const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * A record's offset as a number when that is exact (a BatchRecord's always is), else NaN (read
 * `offset` then). A BatchRecord's is read from its batch's column, without a BigInt.
 */
export function offsetNumber(record: RawRecord): number {
  if (record instanceof BatchRecord) return record.columns.offset[record.index];
  const offset = record.offset;
  return offset <= MAX_EXACT && offset >= -MAX_EXACT ? Number(offset) : Number.NaN;
}

/** An array twice as long with the same first half. */
function grown(a: Int32Array): Int32Array {
  const out = new Int32Array(a.length * 2);
  out.set(a);
  return out;
}

/** A record of a RecordColumns batch, read through its columns (see the file comment). */
export class BatchRecord implements RawRecord {
  /**
   * The offset as a BigInt, made on first read: the batch's own checks (order, batch id, offsets
   * committed) read it as a number (offsetNumber), so most records never make one.
   */
  private bigOffset: bigint | undefined = undefined;

  constructor(
    readonly columns: RecordColumns,
    readonly index: number,
  ) {}

  get offset(): bigint {
    this.bigOffset ??= BigInt(this.columns.offset[this.index]);
    return this.bigOffset;
  }

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
      out[h - from] = { key: c.headerKeyAt(h), value: start < 0 ? null : c.view(start, c.headerStop[h]) };
    }
    return out;
  }
}
