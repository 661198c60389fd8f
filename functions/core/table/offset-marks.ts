/**
 * What a table keeps of the records behind its committed offsets, so a redelivery can be told from a
 * different record at the same offset (a topic deleted and recreated, a cluster replaced, a failover to
 * a mirror: offsets start again from 0). An offset alone cannot say it: "inside a committed range" would
 * skip the new records as replays and lose them.
 *
 * For each committed range, a mark of its first and last record (offset, timestamp, and a 32-bit
 * FNV-1a hash of key, value and headers) and the highest record timestamp the range holds. Summary text
 * (`floe.offset-marks`, carried forward like the ranges): JSON, topic → partition → the partition's
 * range marks joined by `;` in offset order, each `first,last,maxTimestamp` with a mark as
 * `offset:timestamp:hash`:
 *
 *     {"orders":{"0":"0:1764900000000:9f3a01c2,41999:1764900360000:0b11e7aa,1764900360000"}}
 *
 * About 60 bytes a range. Marks merge as their ranges merge (the merged range keeps the outer marks and
 * the highest of the highest timestamps), so they stay one per range. A range committed before marks
 * existed has none: it is checked by its offsets alone, as before.
 */
import { ValidationError } from '../errors.js';
import {
  decodeByTopicPartition,
  type OffsetRange,
  type OffsetRanges,
  rangeIndexOf,
} from './offset-ranges.js';

/** One record as its mark sees it (a RawRecord is one). */
export interface MarkedRecord {
  offset: bigint;
  /** Milliseconds since the epoch (-1 when the producer gave none). */
  timestamp: number;
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: readonly { key: string; value: Uint8Array | null }[];
}

/** The identity of one record at one offset. */
export interface RecordMark {
  offset: bigint;
  timestamp: number;
  /** recordHash: 8 lowercase hex digits. */
  hash: string;
}

/** What a committed range keeps of its records: the first and the last, and the highest timestamp. */
export interface RangeMarks {
  first: RecordMark;
  last: RecordMark;
  maxTimestamp: number;
}

/** topic → partition → range marks in offset order, at most one per committed range. */
export type OffsetMarks = Map<string, Map<number, RangeMarks[]>>;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const encoder = new TextEncoder();

function hashByte(h: number, byte: number): number {
  return Math.imul(h ^ byte, FNV_PRIME);
}

function hashLength(h: number, n: number): number {
  let out = h;
  for (let s = 0; s < 32; s += 8) out = hashByte(out, (n >>> s) & 0xff);
  return out;
}

/** A present field hashes its length before its bytes (so no two field splits hash alike); null is a tag. */
function hashField(h: number, bytes: Uint8Array | null): number {
  if (bytes === null) return hashByte(h, 0);
  let out = hashLength(hashByte(h, 1), bytes.length);
  for (let i = 0; i < bytes.length; i++) out = hashByte(out, bytes[i]);
  return out;
}

/**
 * 32-bit FNV-1a of a record's key, value and headers, as 8 hex digits. A null header value hashes as
 * an empty one: not every delivery path keeps them apart (an ESM event's header arrays), and the same
 * record must hash the same whichever path brought it.
 */
export function recordHash(record: Pick<MarkedRecord, 'key' | 'value' | 'headers'>): string {
  let h = FNV_OFFSET;
  h = hashField(h, record.key);
  h = hashField(h, record.value);
  h = hashLength(h, record.headers.length);
  for (const header of record.headers) {
    h = hashField(h, encoder.encode(header.key));
    h = hashField(h, header.value ?? EMPTY);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}

const EMPTY = new Uint8Array(0);

/** A record's mark. */
export function markOf(record: MarkedRecord): RecordMark {
  return { offset: record.offset, timestamp: record.timestamp, hash: recordHash(record) };
}

/**
 * The marks a batch's records commit with: per topic-partition, its lowest- and highest-offset record
 * (only these two are hashed) and its highest timestamp. Records whose offset could not be read (below
 * 0) mark nothing, as they commit nothing.
 */
export function marksOf(
  records: readonly (MarkedRecord & { topic: string; partition: number })[],
): OffsetMarks {
  type Span = { first: MarkedRecord; last: MarkedRecord; maxTimestamp: number };
  const spans = new Map<string, Map<number, Span>>();
  let span: Span | undefined;
  let topic = '';
  let partition = -1;
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    if (r.offset < 0n) continue;
    if (span === undefined || r.topic !== topic || r.partition !== partition) {
      topic = r.topic;
      partition = r.partition;
      let parts = spans.get(topic);
      if (parts === undefined) {
        parts = new Map();
        spans.set(topic, parts);
      }
      span = parts.get(partition);
      if (span === undefined) {
        span = { first: r, last: r, maxTimestamp: r.timestamp };
        parts.set(partition, span);
        continue;
      }
    }
    if (r.offset < span.first.offset) span.first = r;
    if (r.offset > span.last.offset) span.last = r;
    if (r.timestamp > span.maxTimestamp) span.maxTimestamp = r.timestamp;
  }
  const out: OffsetMarks = new Map();
  for (const [t, parts] of spans) {
    const marks = new Map<number, RangeMarks[]>();
    for (const [p, s] of parts) {
      marks.set(p, [{ first: markOf(s.first), last: markOf(s.last), maxTimestamp: s.maxTimestamp }]);
    }
    out.set(t, marks);
  }
  return out;
}

/** Two range marks as one: the outer marks, the higher of the highest timestamps. */
function joinMarks(a: RangeMarks, b: RangeMarks): RangeMarks {
  return {
    first: b.first.offset < a.first.offset ? b.first : a.first,
    last: b.last.offset > a.last.offset ? b.last : a.last,
    maxTimestamp: Math.max(a.maxTimestamp, b.maxTimestamp),
  };
}

/**
 * The marks of `ranges` (the committed ranges after a change): every mark of `sets` that lies in one of
 * them, those in the same range joined into one. Marks outside every range (their range was moved to
 * another epoch) are dropped.
 */
export function mergeMarks(ranges: OffsetRanges, ...sets: OffsetMarks[]): OffsetMarks {
  const out: OffsetMarks = new Map();
  for (const [topic, parts] of ranges) {
    const mine = new Map<number, RangeMarks[]>();
    for (const [partition, list] of parts) {
      const byRange = new Map<number, RangeMarks>();
      for (const set of sets) {
        for (const m of set.get(topic)?.get(partition) ?? []) {
          const k = rangeIndexOf(list, m.first.offset);
          if (k < 0 || m.last.offset > list[k][1]) continue;
          const had = byRange.get(k);
          byRange.set(k, had === undefined ? m : joinMarks(had, m));
        }
      }
      if (byRange.size > 0)
        mine.set(
          partition,
          [...byRange].sort((a, b) => a[0] - b[0]).map(([, m]) => m),
        );
    }
    if (mine.size > 0) out.set(topic, mine);
  }
  return out;
}

/** The marks of each of `ranges`, aligned with them (undefined: a range committed without marks). */
export function marksByRange(
  ranges: readonly OffsetRange[],
  marks: readonly RangeMarks[] | undefined,
): (RangeMarks | undefined)[] {
  const out: (RangeMarks | undefined)[] = new Array(ranges.length).fill(undefined);
  for (const m of marks ?? []) {
    const k = rangeIndexOf(ranges, m.first.offset);
    if (k >= 0) out[k] = m;
  }
  return out;
}

function encodeMark(m: RecordMark): string {
  return `${m.offset}:${m.timestamp}:${m.hash}`;
}

/** The summary text of marks (see the file comment); topics and partitions in order, so it is stable. */
export function encodeOffsetMarks(marks: OffsetMarks): string {
  const out: Record<string, Record<string, string>> = {};
  for (const topic of [...marks.keys()].sort()) {
    const parts = marks.get(topic)!;
    const text: Record<string, string> = {};
    for (const p of [...parts.keys()].sort((a, b) => a - b)) {
      const list = parts.get(p)!;
      if (list.length > 0)
        text[String(p)] = list
          .map((m) => `${encodeMark(m.first)},${encodeMark(m.last)},${m.maxTimestamp}`)
          .join(';');
    }
    if (Object.keys(text).length > 0) out[topic] = text;
  }
  return JSON.stringify(out);
}

const MARK = '(\\d+):(-?\\d+):([0-9a-f]{8})';
const RANGE_MARKS = new RegExp(`^${MARK},${MARK},(-?\\d+)$`);

function decodeRangeMarks(text: string, where: string): RangeMarks {
  const m = RANGE_MARKS.exec(text);
  if (!m || BigInt(m[1]) > BigInt(m[4])) throw new ValidationError(`${where}: bad range marks '${text}'`);
  return {
    first: { offset: BigInt(m[1]), timestamp: Number(m[2]), hash: m[3] },
    last: { offset: BigInt(m[4]), timestamp: Number(m[5]), hash: m[6] },
    maxTimestamp: Number(m[7]),
  };
}

/**
 * Reads a summary's marks.
 * @throws ValidationError for text floe did not write (`what` names the property in the message)
 */
export function decodeOffsetMarks(text: string, what = 'offset marks'): OffsetMarks {
  return decodeByTopicPartition(text, what, (value, where) => {
    if (typeof value !== 'string') throw new ValidationError(`${where}: not a string`);
    return value === '' ? undefined : value.split(';').map((t) => decodeRangeMarks(t, where));
  });
}
