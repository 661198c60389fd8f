/**
 * The validity of a gathered struct or list column and a list column's offsets, in typed storage:
 * gathering a batch pushes a row's validity and its list's end once per row, and JS arrays that grow
 * push by push were most of what a 10,000-record batch allocated on the heap (~2.5 of 6.6 MB), garbage
 * the young generation's collections then had to make room for. A column whose rows are all valid (most
 * structs and lists are never null) holds only a count; the bytes appear at its first null.
 */
import { ValidityBuilder } from './column-target.js';

/** Which rows of a struct or list column are valid (not null). */
export class Validity {
  /** Rows held. */
  length = 0;
  /** Rows that are null. */
  nulls = 0;
  /** A byte a row, 1 valid; undefined while no row is null. */
  private bytes: Uint8Array | undefined;

  /** `rows`: the rows expected (sizes the bytes if one turns out null; they grow past it when needed). */
  constructor(private readonly rows = 64) {}

  /** Appends a valid row. */
  pushValid(): void {
    const bytes = this.bytes;
    if (bytes !== undefined) {
      if (this.length === bytes.length) this.grow();
      (this.bytes as Uint8Array)[this.length] = 1;
    }
    this.length++;
  }

  /** Appends a null row. */
  pushNull(): void {
    if (this.bytes === undefined) {
      this.bytes = new Uint8Array(Math.max(this.rows, this.length + 1, 8));
      this.bytes.fill(1, 0, this.length);
    } else if (this.length === this.bytes.length) this.grow();
    (this.bytes as Uint8Array)[this.length++] = 0;
    this.nulls++;
  }

  push(valid: boolean): void {
    if (valid) this.pushValid();
    else this.pushNull();
  }

  private grow(): void {
    const bytes = this.bytes as Uint8Array;
    const grown = new Uint8Array(bytes.length * 2);
    grown.set(bytes);
    this.bytes = grown;
  }

  /** Whether row i is valid (false past the rows held). */
  get(i: number): boolean {
    return i < this.length && (this.bytes === undefined || this.bytes[i] === 1);
  }

  /** Drops every row from `rows` on. */
  truncate(rows: number): void {
    if (rows >= this.length) return;
    const bytes = this.bytes;
    if (bytes !== undefined) for (let i = rows; i < this.length; i++) if (bytes[i] === 0) this.nulls--;
    this.length = rows;
  }

  /** Rows [start, end) as a validity of their own. */
  slice(start: number, end: number): Validity {
    const out = new Validity(end - start);
    for (let i = start; i < end; i++) out.push(this.get(i));
    return out;
  }

  /** The rows at `indices`, in that order. */
  take(indices: readonly number[]): Validity {
    const out = new Validity(indices.length);
    for (let k = 0; k < indices.length; k++) out.push(this.get(indices[k]));
    return out;
  }

  /** Arrow's validity of the rows (no bitmap when none is null). */
  toBuilder(): ValidityBuilder {
    const validity = new ValidityBuilder(this.length);
    const bytes = this.bytes;
    if (bytes === undefined || this.nulls === 0) return validity;
    for (let i = 0; i < this.length; i++) if (bytes[i] === 0) validity.setNull(i);
    return validity;
  }
}

/** A list column's offsets: get(i)..get(i + 1) are row i's elements; get(0) = 0. */
export class Offsets {
  /** Offsets held: rows + 1. */
  length = 1;
  private values: Int32Array;

  /** `rows`: the rows expected (storage grows past it when needed). */
  constructor(rows = 64) {
    this.values = new Int32Array(Math.max(rows, 1) + 1);
  }

  get(i: number): number {
    return this.values[i];
  }

  /** The elements held (the last offset). */
  last(): number {
    return this.values[this.length - 1];
  }

  /** Ends a row of `count` elements. */
  pushCount(count: number): void {
    let values = this.values;
    const n = this.length;
    if (n === values.length) {
      values = new Int32Array(n * 2);
      values.set(this.values);
      this.values = values;
    }
    values[n] = values[n - 1] + count;
    this.length = n + 1;
  }

  /** Keeps the offsets of the first `rows` rows. */
  truncate(rows: number): void {
    if (rows + 1 < this.length) this.length = rows + 1;
  }

  /** Rows [start, end) as offsets of their own (starting at 0). */
  slice(start: number, end: number): Offsets {
    const out = new Offsets(end - start);
    for (let i = start; i < end; i++) out.pushCount(this.values[i + 1] - this.values[i]);
    return out;
  }

  /** The offsets as Arrow wants them (a copy of the ones held). */
  toInt32Array(): Int32Array {
    return this.values.slice(0, this.length);
  }
}
