/**
 * Gathers rows out of several Arrow Data of one column (the column of each file of a compaction group,
 * in the writer's layout: project-arrow.ts) into one new Data, in the order asked. The rows come as
 * runs — part, first row, row count — so a file kept whole or between two deletes is copied with one
 * `set` per buffer; a sorted group gives runs of one row. A null list or map slot gathers no elements
 * (whatever range its offsets name), as the row path writes it.
 */
import * as arrow from 'apache-arrow';
import { ValidationError } from '../../errors.js';

/**
 * Consecutive runs of rows: run r takes `len[r]` rows of part `part[r]` from row `from[r]` on.
 * `rows` is the total.
 */
export interface RowRuns {
  part: Int32Array;
  from: Int32Array;
  len: Int32Array;
  count: number;
  rows: number;
}

/** Runs of `(part, row)` pairs, consecutive rows of one part merged. Never throws. */
export function runsOf(parts: Int32Array, rows: Int32Array, start = 0, end = rows.length): RowRuns {
  const builder = new RunBuilder(end - start);
  for (let k = start; k < end; k++) builder.push(parts[k], rows[k], 1);
  return builder.finish();
}

/** Appends runs, merging one that continues the last. */
export class RunBuilder {
  private part: Int32Array;
  private from: Int32Array;
  private len: Int32Array;
  private count = 0;
  private rows = 0;

  constructor(capacity: number) {
    const n = Math.max(1, capacity);
    this.part = new Int32Array(n);
    this.from = new Int32Array(n);
    this.len = new Int32Array(n);
  }

  push(part: number, from: number, len: number): void {
    if (len <= 0) return;
    this.rows += len;
    const last = this.count - 1;
    if (last >= 0 && this.part[last] === part && this.from[last] + this.len[last] === from) {
      this.len[last] += len;
      return;
    }
    if (this.count === this.part.length) this.grow();
    this.part[this.count] = part;
    this.from[this.count] = from;
    this.len[this.count] = len;
    this.count++;
  }

  finish(): RowRuns {
    return { part: this.part, from: this.from, len: this.len, count: this.count, rows: this.rows };
  }

  private grow(): void {
    const n = this.part.length * 2;
    const grown = (a: Int32Array) => {
      const b = new Int32Array(n);
      b.set(a);
      return b;
    };
    this.part = grown(this.part);
    this.from = grown(this.from);
    this.len = grown(this.len);
  }
}

/**
 * The rows of `runs` gathered from `parts` (Data of one column, all of `type`'s layout) as one Data
 * of `type`.
 * @throws ValidationError for a layout the writer does not take (a bug upstream)
 */
export function takeData(type: arrow.DataType, parts: readonly arrow.Data[], runs: RowRuns): arrow.Data {
  const length = runs.rows;
  const { nullCount, nullBitmap } = takeValidity(parts, runs);
  const base = { length, nullCount, nullBitmap };
  switch (type.typeId) {
    case arrow.Type.Struct: {
      const fields = (type as arrow.Struct).children;
      const children = fields.map((f, j) =>
        takeData(
          f.type,
          parts.map((p) => p.children[j]),
          runs,
        ),
      );
      return arrow.makeData({ type: type as arrow.Struct, ...base, children });
    }
    case arrow.Type.List:
    case arrow.Type.Map: {
      const { offsets, childRuns } = takeOffsets(parts, runs);
      const childType = (type as arrow.List).children[0].type;
      const child = takeData(
        childType,
        parts.map((p) => p.children[0]),
        childRuns,
      );
      return arrow.makeData({ type: type as arrow.List, ...base, valueOffsets: offsets, child });
    }
    case arrow.Type.Bool:
      return arrow.makeData({ type: type as arrow.Bool, ...base, data: takeBits(parts, runs) });
    case arrow.Type.Utf8:
    case arrow.Type.Binary: {
      const { offsets, bytes } = takeBytes(parts, runs);
      return arrow.makeData({ type: type as arrow.Utf8, ...base, valueOffsets: offsets, data: bytes });
    }
    case arrow.Type.FixedSizeBinary: {
      const data = takeFixed(parts, runs, (type as arrow.FixedSizeBinary).byteWidth) as Uint8Array;
      return arrow.makeData({ type: type as arrow.FixedSizeBinary, ...base, data });
    }
    case arrow.Type.Decimal:
      return arrow.makeData({
        type: type as arrow.Decimal,
        ...base,
        data: takeFixed(parts, runs, 4) as Uint32Array,
      });
    case arrow.Type.Int:
    case arrow.Type.Date:
    case arrow.Type.Time:
    case arrow.Type.Timestamp:
    case arrow.Type.Float:
      return arrow.makeData({
        type: type as arrow.Int32,
        ...base,
        data: takeFixed(parts, runs, 1) as Int32Array,
      });
  }
  throw new ValidationError(`cannot gather Arrow ${String(type)}`);
}

function bitAt(bits: Uint8Array, i: number): number {
  return (bits[i >> 3] >> (i & 7)) & 1;
}

function hasNulls(d: arrow.Data): boolean {
  return d.nullCount > 0 && d.nullBitmap !== undefined && d.nullBitmap.byteLength > 0;
}

function takeValidity(
  parts: readonly arrow.Data[],
  runs: RowRuns,
): { nullCount: number; nullBitmap: Uint8Array | undefined } {
  if (!parts.some(hasNulls)) return { nullCount: 0, nullBitmap: undefined };
  const out = new Uint8Array((runs.rows + 7) >> 3).fill(0xff);
  let nullCount = 0;
  let at = 0;
  for (let r = 0; r < runs.count; r++) {
    const d = parts[runs.part[r]];
    const len = runs.len[r];
    if (!hasNulls(d)) {
      at += len;
      continue;
    }
    const bits = d.nullBitmap as Uint8Array;
    for (let i = runs.from[r], end = i + len; i < end; i++, at++) {
      if (bitAt(bits, i) === 0) {
        out[at >> 3] &= ~(1 << (at & 7));
        nullCount++;
      }
    }
  }
  return nullCount === 0 ? { nullCount: 0, nullBitmap: undefined } : { nullCount, nullBitmap: out };
}

function takeBits(parts: readonly arrow.Data[], runs: RowRuns): Uint8Array {
  const out = new Uint8Array((runs.rows + 7) >> 3);
  let at = 0;
  for (let r = 0; r < runs.count; r++) {
    const bits = parts[runs.part[r]].values as Uint8Array;
    for (let i = runs.from[r], end = i + runs.len[r]; i < end; i++, at++) {
      if (bitAt(bits, i) === 1) out[at >> 3] |= 1 << (at & 7);
    }
  }
  return out;
}

type FixedArray = Int32Array | BigInt64Array | Float32Array | Float64Array | Uint32Array | Uint8Array;

/** Fixed-width values: `width` array elements per row (bytes for fixed, words for decimals). */
function takeFixed(parts: readonly arrow.Data[], runs: RowRuns, width: number): FixedArray {
  const first = parts[0].values as FixedArray;
  const Ctor = first.constructor as new (n: number) => FixedArray;
  const out = new Ctor(runs.rows * width);
  let at = 0;
  for (let r = 0; r < runs.count; r++) {
    const src = parts[runs.part[r]].values as FixedArray;
    const from = runs.from[r] * width;
    const n = runs.len[r] * width;
    if (n === width && width === 1) out[at] = src[from];
    else (out as Uint8Array).set((src as Uint8Array).subarray(from, from + n), at);
    at += n;
  }
  return out;
}

function takeBytes(parts: readonly arrow.Data[], runs: RowRuns): { offsets: Int32Array; bytes: Uint8Array } {
  const offsets = new Int32Array(runs.rows + 1);
  let total = 0;
  for (let r = 0; r < runs.count; r++) {
    const o = parts[runs.part[r]].valueOffsets as Int32Array;
    total += o[runs.from[r] + runs.len[r]] - o[runs.from[r]];
  }
  if (total > 0x7fffffff) throw new ValidationError('a column holds over 2 GiB of values in one file');
  const bytes = new Uint8Array(total);
  let at = 0;
  let pos = 0;
  for (let r = 0; r < runs.count; r++) {
    const d = parts[runs.part[r]];
    const o = d.valueOffsets as Int32Array;
    const from = runs.from[r];
    const len = runs.len[r];
    const start = o[from];
    bytes.set((d.values as Uint8Array).subarray(start, o[from + len]), pos);
    const shift = pos - start;
    for (let i = 0; i < len; i++) offsets[++at] = o[from + i + 1] + shift;
    pos += o[from + len] - start;
  }
  return { offsets, bytes };
}

/** New offsets of a list or map column, and the runs of elements they keep (none for a null slot). */
function takeOffsets(
  parts: readonly arrow.Data[],
  runs: RowRuns,
): { offsets: Int32Array; childRuns: RowRuns } {
  const offsets = new Int32Array(runs.rows + 1);
  const childRuns = new RunBuilder(runs.count);
  let at = 0;
  let total = 0;
  for (let r = 0; r < runs.count; r++) {
    const part = runs.part[r];
    const d = parts[part];
    const o = d.valueOffsets as Int32Array;
    const from = runs.from[r];
    const len = runs.len[r];
    if (!hasNulls(d)) {
      const start = o[from];
      const shift = total - start;
      for (let i = 0; i < len; i++) offsets[++at] = o[from + i + 1] + shift;
      childRuns.push(part, start, o[from + len] - start);
      total += o[from + len] - start;
      continue;
    }
    const bits = d.nullBitmap as Uint8Array;
    for (let i = from; i < from + len; i++) {
      if (bitAt(bits, i) === 1) {
        const n = o[i + 1] - o[i];
        childRuns.push(part, o[i], n);
        total += n;
      }
      offsets[++at] = total;
    }
  }
  return { offsets, childRuns: childRuns.finish() };
}
