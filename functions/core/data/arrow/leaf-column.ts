/**
 * One primitive column of gathered rows, held the way Arrow will want it: numbers in a growable
 * Float64Array (every value the fast path makes is exact as a double: ints, longs and timestamps below
 * 2^53, decimals' unscaled values below 2^53, floats and doubles), strings (and binary values) as one
 * byte buffer with end offsets, a state byte per slot (value / null / masked by a null parent). No object per value:
 * a batch of 10,000 records allocates a few buffers per column, and the garbage collector has nothing
 * to copy. A value the typed storage cannot hold exactly (a long past 2^53 appended from a general-path
 * row, a uuid) moves the column to `values` (the `Value` representation of rows) for good.
 */
import { decimalParams } from '../../spec/conversions.js';
import type { PrimitiveType, Value } from '../../spec/types.js';
import { MASKED } from './column-target.js';

export const SLOT_VALUE = 0;
export const SLOT_NULL = 1;
export const SLOT_MASKED = 2;

/** How a primitive type's values are kept as numbers (undefined: strings or `values`). */
type NumberKind = 'number' | 'bigint' | 'boolean';

function numberKindOf(type: PrimitiveType): NumberKind | undefined {
  switch (type) {
    case 'boolean':
      return 'boolean';
    case 'int':
    case 'date':
    case 'float':
    case 'double':
      return 'number';
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return 'bigint';
  }
  return decimalParams(type) ? 'bigint' : undefined;
}

const INITIAL = 64;

/** The text of UTF-8 bytes[start, end). */
export function utf8Text(bytes: Uint8Array, start: number, end: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8', start, end);
}

export class LeafColumn {
  readonly kind = 'leaf';
  length = 0;
  state: Uint8Array;
  /** Numeric storage (see numberKindOf); the exact value, as a double. */
  nums: Float64Array | undefined;
  /** String storage: UTF-8 bytes; row i is bytes[ends[i] .. ends[i + 1]). */
  bytes: Uint8Array | undefined;
  ends: Int32Array | undefined;
  /** Generic storage (`Value`s, null, MASKED); once set, it holds every slot. */
  values: unknown[] | undefined;
  readonly numberKind: NumberKind | undefined;
  /** A binary column: `bytes` and `ends` hold bytes, not UTF-8 text. */
  readonly binary: boolean;

  /** `rows`: the rows expected (storage grows past it when needed). */
  constructor(
    readonly type: PrimitiveType,
    rows = INITIAL,
  ) {
    const capacity = Math.max(rows, 1);
    this.state = new Uint8Array(capacity);
    this.numberKind = numberKindOf(type);
    this.binary = type === 'binary';
    if (this.numberKind) this.nums = new Float64Array(capacity);
    else if (type === 'string' || this.binary) {
      // 8 bytes a row to start with (grown by doubling): short codes and names need no regrowth.
      this.bytes = new Uint8Array(capacity * 8);
      this.ends = new Int32Array(capacity + 1);
    } else this.values = [];
  }

  /** Bytes of string data held. */
  get byteLength(): number {
    return this.ends ? this.ends[this.length] : 0;
  }

  private grow(): void {
    const state = new Uint8Array(this.state.length * 2);
    state.set(this.state);
    this.state = state;
    if (this.nums) {
      const nums = new Float64Array(state.length);
      nums.set(this.nums);
      this.nums = nums;
    }
    if (this.ends) {
      const ends = new Int32Array(state.length + 1);
      ends.set(this.ends);
      this.ends = ends;
    }
  }

  /** Room for `extra` more string bytes. */
  reserveBytes(extra: number): Uint8Array {
    const bytes = this.bytes as Uint8Array;
    const need = this.byteLength + extra;
    if (need <= bytes.length) return bytes;
    const grown = new Uint8Array(Math.max(bytes.length * 2, need));
    grown.set(bytes.subarray(0, this.byteLength));
    this.bytes = grown;
    return grown;
  }

  /** Appends a number (the exact value: see the class comment). Typed numeric columns only. */
  pushNumber(n: number): void {
    const nums = this.nums;
    if (nums === undefined) {
      this.pushValue(this.valueOf(n));
      return;
    }
    if (this.length === this.state.length) {
      this.growAndPush(n);
      return;
    }
    nums[this.length] = n;
    this.state[this.length++] = SLOT_VALUE;
  }

  /**
   * Appends src[i] × factor when the column keeps numbers and that is a safe integer (else appends
   * nothing and answers false). The double is read and stored here: passed as an argument to a call
   * that is not inlined, it would be a heap number, one a value.
   */
  pushScaled(src: Float64Array, i: number, factor: number): boolean {
    const nums = this.nums;
    const n = src[i] * factor;
    if (nums === undefined || !Number.isSafeInteger(n)) return false;
    if (this.length === this.state.length) {
      this.grow();
      return this.pushScaled(src, i, factor);
    }
    nums[this.length] = n + 0; // -0 as 0
    this.state[this.length++] = SLOT_VALUE;
    return true;
  }

  /** Appends the string whose UTF-8 bytes were just written at byteLength.. `end`. String columns only. */
  commitBytes(end: number): void {
    if (this.length === this.state.length) this.grow();
    this.state[this.length] = SLOT_VALUE;
    (this.ends as Int32Array)[++this.length] = end;
  }

  private growAndPush(n: number): void {
    this.grow();
    this.pushNumber(n);
  }

  /** A number of the typed storage as rows hold it. */
  private valueOf(n: number): Value {
    return this.numberKind === 'bigint' ? BigInt(n) : this.numberKind === 'boolean' ? n === 1 : n;
  }

  /**
   * Appends `src[start, end)`: a string's UTF-8 bytes (already known to be valid UTF-8), or a binary
   * value's bytes.
   */
  pushBytes(src: Uint8Array, start: number, end: number): void {
    if (this.ends === undefined) {
      this.pushValue(this.binary ? src.slice(start, end) : utf8Text(src, start, end));
      return;
    }
    const n = end - start;
    const at = this.ends[this.length];
    let bytes = this.bytes as Uint8Array;
    if (at + n > bytes.length) bytes = this.reserveBytes(n);
    if (n < 16) for (let k = 0; k < n; k++) bytes[at + k] = src[start + k];
    else bytes.set(start === 0 && end === src.length ? src : src.subarray(start, end), at);
    this.commitBytes(at + n);
  }

  /** Appends a well-formed string. */
  pushString(s: string): void {
    if (this.ends === undefined || this.binary) {
      this.pushValue(s);
      return;
    }
    const at = this.byteLength;
    const bytes = this.reserveBytes(s.length * 3);
    let k = at;
    let ascii = true;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        ascii = false;
        break;
      }
      bytes[k++] = c;
    }
    if (!ascii) k = at + Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).write(s, at, 'utf8');
    this.commitBytes(k);
  }

  /** Appends null, or MASKED under a null parent. */
  pushAbsent(masked: boolean): void {
    if (this.values) {
      this.values.push(masked ? MASKED : null);
      this.length++;
      return;
    }
    if (this.length === this.state.length) this.grow();
    if (this.ends) this.ends[this.length + 1] = this.ends[this.length];
    this.state[this.length++] = masked ? SLOT_MASKED : SLOT_NULL;
  }

  /** Appends a converted value (a `Value` as rows hold it). */
  pushValue(v: unknown): void {
    if (v === null || v === undefined || v === MASKED) {
      this.pushAbsent(v === MASKED);
      return;
    }
    if (!this.values) {
      const kind = this.numberKind;
      if (kind === 'number' && typeof v === 'number') {
        this.pushNumber(v);
        return;
      }
      if (kind === 'boolean' && typeof v === 'boolean') {
        this.pushNumber(v ? 1 : 0);
        return;
      }
      if (kind === 'bigint' && typeof v === 'bigint') {
        const n = Number(v);
        if (Number.isSafeInteger(n)) {
          this.pushNumber(n);
          return;
        }
      }
      if (this.ends && !this.binary && typeof v === 'string' && v.isWellFormed()) {
        this.pushString(v);
        return;
      }
      if (this.ends && this.binary && v instanceof Uint8Array) {
        this.pushBytes(v, 0, v.length);
        return;
      }
      this.toValues();
    }
    (this.values as unknown[]).push(v);
    this.length++;
  }

  /** Moves every slot to generic storage (for a value the typed storage cannot hold). */
  private toValues(): void {
    const values = new Array<unknown>(this.length);
    for (let i = 0; i < this.length; i++) values[i] = this.slot(i);
    this.values = values;
    this.nums = undefined;
    this.bytes = undefined;
    this.ends = undefined;
  }

  /** Slot i as rows hold it: a Value, null, or MASKED. */
  slot(i: number): unknown {
    if (this.values) return this.values[i];
    const s = this.state[i];
    if (s !== SLOT_VALUE) return s === SLOT_NULL ? null : MASKED;
    if (this.ends) {
      const bytes = this.bytes as Uint8Array;
      // A binary value is a copy: a row's value must not change when the column does.
      return this.binary
        ? bytes.slice(this.ends[i], this.ends[i + 1])
        : utf8Text(bytes, this.ends[i], this.ends[i + 1]);
    }
    return this.valueOf((this.nums as Float64Array)[i]);
  }

  /** Row i's value (undefined when masked), as columnValue reads it. */
  valueAt(i: number): Value | undefined {
    const v = this.slot(i);
    return v === MASKED ? undefined : (v as Value);
  }

  /** Drops every row from `rows` on. */
  truncate(rows: number): void {
    if (rows >= this.length) return;
    if (this.values) this.values.length = rows;
    this.length = rows;
  }

  /** The rows at `indices`, in that order, as a column of their own. */
  take(indices: readonly number[]): LeafColumn {
    const out = new LeafColumn(this.type);
    const n = indices.length;
    if (this.values) {
      const values = new Array<unknown>(n);
      for (let k = 0; k < n; k++) values[k] = this.values[indices[k]];
      out.adopt(n, values);
      return out;
    }
    out.reserveRows(n);
    for (let k = 0; k < n; k++) out.state[k] = this.state[indices[k]];
    if (this.nums) {
      const nums = out.nums as Float64Array;
      for (let k = 0; k < n; k++) nums[k] = this.nums[indices[k]];
    } else {
      const ends = this.ends as Int32Array;
      let total = 0;
      for (let k = 0; k < n; k++) total += ends[indices[k] + 1] - ends[indices[k]];
      const bytes = new Uint8Array(total);
      const outEnds = out.ends as Int32Array;
      const src = this.bytes as Uint8Array;
      let at = 0;
      for (let k = 0; k < n; k++) {
        const i = indices[k];
        bytes.set(src.subarray(ends[i], ends[i + 1]), at);
        at += ends[i + 1] - ends[i];
        outEnds[k + 1] = at;
      }
      out.bytes = bytes;
    }
    out.length = n;
    return out;
  }

  /** Rows [start, end) as a column of their own. */
  slice(start: number, end: number): LeafColumn {
    const out = new LeafColumn(this.type);
    const n = end - start;
    if (this.values) {
      out.adopt(n, this.values.slice(start, end));
      return out;
    }
    out.state = this.state.slice(start, end);
    if (this.nums) out.nums = this.nums.slice(start, end);
    else {
      const ends = this.ends as Int32Array;
      const first = ends[start];
      out.bytes = (this.bytes as Uint8Array).slice(first, ends[end]);
      const outEnds = new Int32Array(n + 1);
      for (let k = 0; k <= n; k++) outEnds[k] = ends[start + k] - first;
      out.ends = outEnds;
    }
    out.length = n;
    return out;
  }

  private reserveRows(n: number): void {
    this.state = new Uint8Array(Math.max(n, 1));
    if (this.nums) this.nums = new Float64Array(Math.max(n, 1));
    if (this.ends) this.ends = new Int32Array(n + 1);
  }

  private adopt(n: number, values: unknown[]): void {
    this.values = values;
    this.nums = undefined;
    this.bytes = undefined;
    this.ends = undefined;
    this.length = n;
  }
}
