/**
 * The common case of esm-event.ts' record decoding, straight into a batch's columns
 * (record-columns.ts): a record whose fields are all as the ESM sends them (a safe-integer offset, the
 * topic and partition its key names, canonical base64, headers of byte arrays, no schema registry
 * metadata). Anything else answers false with the columns as they were, and the record is decoded by
 * decodeRecord, which explains what is wrong; for a record this takes, both give the same fields
 * (test/unit/ingest/esm-columns.test.ts).
 */
import { RecordColumns } from './record-columns.js';
import { decodeShortBase64, SHORT_BASE64 } from './short-base64.js';

/** Kafka partitions are int32s ≥ 0 (the lineage and DLQ `partition` columns are Iceberg ints). */
export function isPartition(p: unknown): p is number {
  return Number.isInteger(p) && (p as number) >= 0 && (p as number) <= 0x7fffffff;
}

/** The strict path refuses a text mixing `+/` with `-_`; so must the fast one. */
export function mixesAlphabets(text: string): boolean {
  const standard = text.indexOf('+') >= 0 || text.indexOf('/') >= 0;
  return standard && (text.indexOf('-') >= 0 || text.indexOf('_') >= 0);
}

/** The decoded length of canonical base64 text (a multiple of 4 characters), else -1. */
export function canonicalBase64Length(text: string): number {
  const len = text.length;
  if (len % 4 !== 0) return -1;
  const pad = len === 0 ? 0 : text.charCodeAt(len - 1) !== 61 ? 0 : text.charCodeAt(len - 2) === 61 ? 2 : 1;
  return (len / 4) * 3 - pad;
}

/**
 * A group's key `topic-partition` (a topic may hold '-', a partition never does): the topic and
 * partition it names, which its records must carry (or lack, and take these). partition -1: the key
 * names none.
 */
export interface GroupFallback {
  key: string;
  topic: string;
  partition: number;
}

/**
 * Node's own base64 write, which `buffer.write(text, at, n, 'base64')` calls once it has checked its
 * arguments and looked the encoding up (~10 ns of a ~60 ns call).
 */
interface NativeBase64 {
  base64Write(text: string, offset: number, length: number): number;
}

/** Undocumented, so checked: a Node without it takes write() (the same bytes, a little slower). */
const NATIVE_BASE64 = typeof (Buffer.prototype as Partial<NativeBase64>).base64Write === 'function';

/** Canonical base64 decoded at cols.used (not yet taken); its length, or -1 for anything else. */
function writeBase64(cols: RecordColumns, text: unknown): number {
  if (typeof text !== 'string') return -1;
  if (text.length <= SHORT_BASE64)
    return decodeShortBase64(text, cols.reserve((text.length >> 2) * 3), cols.used);
  const expected = canonicalBase64Length(text);
  if (expected < 0) return -1;
  // at + expected is inside the buffer (reserved), as write() would check.
  const bytes = cols.reserve(expected) as Buffer & NativeBase64;
  const written = NATIVE_BASE64
    ? bytes.base64Write(text, cols.used, expected)
    : bytes.write(text, cols.used, expected, 'base64');
  if (written !== expected || mixesAlphabets(text)) return -1;
  return expected;
}

/** A key or value (base64 text, or absent) taken into starts[i], ends[i]; false for anything else. */
function takeBase64(
  cols: RecordColumns,
  text: unknown,
  starts: Int32Array,
  ends: Int32Array,
  i: number,
): boolean {
  if (text === undefined || text === null) {
    starts[i] = -1;
    return true;
  }
  const n = writeBase64(cols, text);
  if (n < 0) return false;
  starts[i] = cols.used;
  cols.used += n;
  ends[i] = cols.used;
  return true;
}

/**
 * A header's byte array written at `at` of `out`; false when an element is not a byte. Java-based
 * producers may deliver signed bytes (the store maps them to unsigned, as & 0xff would); a hole of a
 * sparse array is 0, as decodeHeaders has it.
 */
function writeHeaderBytes(out: Uint8Array, at: number, value: unknown[]): boolean {
  for (let i = 0; i < value.length; i++) {
    const b = value[i];
    if (typeof b === 'number' && Number.isInteger(b) && b >= -128 && b <= 255) out[at + i] = b;
    else if (b === undefined && !(i in value)) out[at + i] = 0;
    else return false;
  }
  return true;
}

/**
 * Object.hasOwn's test, in the form V8 folds away in a for-in over the same object (Object.hasOwn is a
 * call a header).
 */
const hasOwn = Object.prototype.hasOwnProperty;

/** Headers appended to cols (their bytes taken); false for anything but an array of byte-array objects. */
function writeHeaders(cols: RecordColumns, raw: unknown): boolean {
  if (raw === undefined || raw === null) return true;
  if (!Array.isArray(raw)) return false;
  for (let k = 0; k < raw.length; k++) {
    const h: unknown = raw[k];
    if (h === null || typeof h !== 'object' || Array.isArray(h)) return false;
    for (const key in h) {
      if (!hasOwn.call(h, key)) continue;
      const value = (h as Record<string, unknown>)[key];
      if (value === null) {
        cols.pushHeader(key, -1, -1);
        continue;
      }
      if (!Array.isArray(value)) return false;
      const at = cols.used;
      const end = at + value.length;
      if (!writeHeaderBytes(cols.reserve(value.length), at, value)) return false;
      cols.pushHeader(key, at, end);
      cols.used = end;
    }
  }
  return true;
}

/** Gives back what a record that was not taken wrote. */
function undo(cols: RecordColumns, used: number, headers: number): false {
  cols.used = used;
  cols.headerCount = headers;
  return false;
}

/**
 * Decodes one record of the event into the next slot of `cols`; false (the columns as they were)
 * when it is not of the common shape (see the file comment).
 */
export function decodeIntoColumns(raw: unknown, group: GroupFallback, cols: RecordColumns): boolean {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return false;
  const r = raw as Record<string, unknown>;
  const offset = r.offset;
  if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0) return false;
  // The record's partition and topic are the ones its key names (the key's partition is valid or -1).
  const p = r.partition;
  const partition = group.partition;
  if (partition < 0 || (p !== undefined && p !== null && (p !== partition || Object.is(p, -0)))) return false;
  const t = r.topic;
  if (t !== undefined && t !== null && t !== group.topic) return false;
  const ts = r.timestamp;
  let timestamp = 0;
  if (ts !== undefined && ts !== null) {
    if (!Number.isSafeInteger(ts)) return false;
    timestamp = ts as number;
  }
  if (r.keySchemaMetadata !== undefined || r.valueSchemaMetadata !== undefined) return false;
  const i = cols.count;
  const usedBefore = cols.used;
  const headersBefore = cols.headerCount;
  if (
    !takeBase64(cols, r.key, cols.keyStart, cols.keyEnd, i) ||
    !takeBase64(cols, r.value, cols.valueStart, cols.valueEnd, i)
  )
    return undo(cols, usedBefore, headersBefore);
  if (!writeHeaders(cols, r.headers)) return undo(cols, usedBefore, headersBefore);
  cols.headerEnd[i] = cols.headerCount;
  cols.topic[i] = RecordColumns.indexIn(cols.topics, group.topic);
  cols.timestampType[i] = RecordColumns.indexIn(
    cols.timestampTypes,
    typeof r.timestampType === 'string' ? r.timestampType : 'NO_TIMESTAMP_TYPE',
  );
  cols.partition[i] = partition;
  cols.offset[i] = offset + 0; // -0 as 0, as BigInt(-0) is
  cols.timestamp[i] = timestamp;
  cols.count = i + 1;
  return true;
}
