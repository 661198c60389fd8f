/**
 * The entries of an index data file read straight from its Arrow columns, for a view read whole
 * (view-cache.ts): each column is turned into values once (a file path or topic once per run of
 * equal values), and no row object or IndexEntry is made per
 * live row. A cold view of 1M entries spent most of its time building row objects and then entries
 * from them, only for KeyView to take their fields apart again.
 *
 * Positions, seqs and offsets are read as numbers from the long columns' words (a bigint per value
 * was most of the columns' cost), and a live entry is handed to the fold as one reused row object.
 * Rows rowEntry would refuse (a required column null: written by someone else) are skipped the same way.
 */
import * as arrow from 'apache-arrow';
import type { FileIO } from '../io/file-io.js';
import { readColumnValues } from '../data/arrow/arrow-to-values.js';
import type { DataBatch } from '../data/parquet/read/data-batch.js';
import { openDataFile } from '../data/parquet/read/read-data-file.js';
import type { Value } from '../spec/types.js';
import type { IndexEntry } from './index-entries.js';
import { INDEX_SCHEMA } from './index-table.js';
import type { FoldResult, LiveRow, RowChunk } from './key-view.js';

/** The entries of one batch of a file, column by column (INDEX_SCHEMA's). */
export interface EntryColumns {
  length: number;
  key: Value[] | undefined;
  path: Value[] | undefined;
  pos: Longs | undefined;
  live: Value[] | undefined;
  seq: Longs | undefined;
  topic: Value[] | undefined;
  partition: Value[] | undefined;
  offset: Longs | undefined;
}

/** A long column, read as a number (no bigint made: the fold's common case) or as a bigint. */
interface Longs {
  num(i: number): number | null;
  big(i: number): bigint | null;
}

/**
 * The index file at `location` as columns, one set a batch.
 * @throws NotFoundError / TransientIOError / ValidationError as readDataFile
 */
export async function readEntryColumns(io: FileIO, location: string): Promise<EntryColumns[]> {
  const file = await openDataFile(io, location);
  try {
    const batches = await file.readBatches(INDEX_SCHEMA);
    return batches.map((batch) => columnsOf(batch));
  } finally {
    file.close();
  }
}

const field = (name: string) => INDEX_SCHEMA.fields.find((f) => f.name === name)!;

function columnsOf(batch: DataBatch): EntryColumns {
  const values = (name: string, runs = false) => {
    const f = field(name);
    const data = batch.columns.get(f.id);
    if (data === undefined) return undefined;
    return (runs && runTexts(data)) || readColumnValues(f.type, data, f.name);
  };
  const longs = (name: string) => {
    const data = batch.columns.get(field(name).id);
    return data === undefined ? undefined : longsOf(data, name);
  };
  return {
    length: batch.length,
    key: values('key'),
    path: values('file_path', true),
    pos: longs('pos'),
    live: values('live'),
    seq: longs('seq'),
    topic: values('topic', true),
    partition: values('partition'),
    offset: longs('offset'),
  };
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const WORD = 2 ** 32;

/**
 * A long column: a plain 64-bit one read as numbers from its 32-bit halves (exact up to 2^53; past
 * that the number is no safe integer, and the fold refuses it as it refuses the bigint), any other
 * layout through readColumnValues (which says what is wrong with it).
 */
function longsOf(data: arrow.Data, name: string): Longs {
  const values: unknown = data.values;
  if (
    LITTLE_ENDIAN &&
    values instanceof BigInt64Array &&
    data.offset === 0 &&
    data.typeId === arrow.Type.Int
  ) {
    const words = new Int32Array(values.buffer, values.byteOffset, values.length * 2);
    const bitmap = data.nullCount === 0 ? undefined : data.nullBitmap;
    const valid = (i: number) => bitmap === undefined || ((bitmap[i >> 3]! >> (i & 7)) & 1) === 1;
    return {
      num: (i) => (valid(i) ? words[2 * i + 1]! * WORD + (words[2 * i]! >>> 0) : null),
      big: (i) => (valid(i) ? values[i]! : null),
    };
  }
  const all = readColumnValues('long', data, name);
  return {
    num: (i) => {
      const v = all[i];
      return typeof v === 'bigint' ? Number(v) : null;
    },
    big: (i) => {
      const v = all[i];
      return typeof v === 'bigint' ? v : null;
    },
  };
}

/**
 * A plain UTF-8 column without nulls read as one string per run of equal bytes (compared with the
 * previous value's, not decoded again): a 1M-entry index names a few hundred paths a million times.
 * Undefined for any other layout (readColumnValues reads it, and says what is wrong with it). No
 * library call does this: Arrow's and readColumnValues's readers decode every value.
 */
function runTexts(data: arrow.Data): Value[] | undefined {
  const offsets: unknown = data.valueOffsets;
  const bytes: unknown = data.values;
  if (data.typeId !== arrow.Type.Utf8 || data.offset !== 0 || data.nullCount !== 0) return undefined;
  if (!(offsets instanceof Int32Array) || !(bytes instanceof Uint8Array)) return undefined;
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Value[] = new Array(data.length);
  let last = '';
  let from = 0;
  let to = -1;
  for (let i = 0; i < data.length; i++) {
    const start = offsets[i]!;
    const end = offsets[i + 1]!;
    if (!sameBytes(bytes, from, to, start, end)) {
      last = text.toString('utf8', start, end);
      from = start;
      to = end;
    }
    out[i] = last;
  }
  return out;
}

function sameBytes(bytes: Uint8Array, a: number, aEnd: number, b: number, bEnd: number): boolean {
  if (aEnd - a !== bEnd - b) return false;
  for (let k = 0; k < aEnd - a; k++) if (bytes[a + k] !== bytes[b + k]) return false;
  return true;
}

/**
 * The entries of `batches` as one chunk for KeyView.foldChunks, as rowEntry reads their rows: a live
 * entry through one reused row object, a dead one (few) as an IndexEntry. Never throws.
 */
export function columnChunk(batches: readonly EntryColumns[]): RowChunk {
  return {
    each(live, dead) {
      for (const batch of batches) {
        const folded = foldBatch(batch, live, dead);
        if (folded !== true) return folded;
      }
      return true;
    },
  };
}

function foldBatch(
  b: EntryColumns,
  live: (row: LiveRow) => FoldResult,
  dead: (entry: IndexEntry) => FoldResult,
): FoldResult {
  const { key, path, pos, seq, offset } = b;
  if (!key || !path || !pos || !b.live || !seq) return true;
  const row: LiveRow = { key: '', filePath: '', pos: 0, seq: 0, topic: null, partition: 0, offset: 0 };
  for (let i = 0; i < b.length; i++) {
    const k = key[i];
    const p = path[i];
    const l = b.live[i];
    const at = pos.num(i);
    const s = seq.num(i);
    if (typeof k !== 'string' || typeof p !== 'string' || typeof l !== 'boolean') continue;
    if (at === null || s === null) continue;
    const t = b.topic?.[i];
    const n = b.partition?.[i];
    const part = typeof n === 'bigint' ? Number(n) : n;
    const o = offset?.num(i) ?? null;
    const versioned = typeof t === 'string' && typeof part === 'number' && o !== null;
    let folded: FoldResult;
    if (l) {
      row.key = k;
      row.filePath = p;
      row.pos = at;
      row.seq = s;
      row.topic = versioned ? t : null;
      row.partition = versioned ? part : 0;
      row.offset = versioned ? o : 0;
      folded = live(row);
    } else {
      const version = versioned ? { topic: t, partition: part, offset: offset!.big(i)! } : null;
      folded = dead({ key: k, filePath: p, pos: pos.big(i)!, live: false, seq: seq.big(i)!, version });
    }
    if (folded !== true) return folded;
  }
  return true;
}
