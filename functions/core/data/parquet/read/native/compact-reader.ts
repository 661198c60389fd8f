/**
 * Thrift compact protocol, read side, for the few structs the native reader needs (FileMetaData parts,
 * PageHeader): fields are visited in order and each struct's reader keeps what it knows and skips the
 * rest, so nothing is built for statistics or the page index. Every read is bounds-checked; anything
 * malformed throws NotNativeError, and the file goes to parquet-wasm.
 */

/** The native reader does not take this file (another writer, a layout it does not know, bad bytes). */
export class NotNativeError extends Error {
  override readonly name = 'NotNativeError';
}

/** Compact-protocol type codes. */
export const T = {
  TRUE: 1,
  FALSE: 2,
  BYTE: 3,
  I16: 4,
  I32: 5,
  I64: 6,
  DOUBLE: 7,
  BINARY: 8,
  LIST: 9,
  SET: 10,
  MAP: 11,
  STRUCT: 12,
} as const;

export function notNative(why: string): never {
  throw new NotNativeError(why);
}

export class CompactReader {
  constructor(
    readonly buf: Uint8Array,
    public pos: number,
    readonly end: number,
  ) {}

  byte(): number {
    if (this.pos >= this.end) notNative('Thrift value past its end');
    return this.buf[this.pos++];
  }

  /** An unsigned varint as a number (exact below 2^53). */
  varint(): number {
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      const b = this.byte();
      result += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) return result;
      mul *= 128;
    }
    return notNative('varint too long');
  }

  /** A zigzag i16/i32/i64 as a number (exact below 2^53 in magnitude). */
  int(): number {
    const n = this.varint();
    return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
  }

  /** A non-negative int that fits a file offset or a count. */
  count(what: string): number {
    const n = this.int();
    if (!Number.isSafeInteger(n) || n < 0) notNative(`${what} is ${n}`);
    return n;
  }

  binary(): Uint8Array {
    const length = this.varint();
    if (length > this.end - this.pos) notNative('Thrift binary past its end');
    const out = this.buf.subarray(this.pos, this.pos + length);
    this.pos += length;
    return out;
  }

  /** A list header: element type and size. */
  list(): { type: number; size: number } {
    const header = this.byte();
    const size = header >> 4 === 15 ? this.varint() : header >> 4;
    if (size > this.end - this.pos) notNative('Thrift list longer than its bytes');
    return { type: header & 0x0f, size };
  }

  /**
   * The next field header of a struct: its id (from `lastId` and the delta, or given in full) in
   * `fieldId`, its type returned; 0 at the struct's stop byte.
   */
  field(lastId: number): number {
    const header = this.byte();
    const type = header & 0x0f;
    if (type === 0) return 0;
    const delta = header >> 4;
    this.fieldId = delta === 0 ? this.int() : lastId + delta;
    return type;
  }

  /** Set by `field`. */
  fieldId = 0;

  /**
   * Visits the fields of a struct: `field(id, type)` reads the value or returns false to have it
   * skipped. Ends after the struct's stop byte.
   */
  struct(field: (id: number, type: number) => boolean): void {
    let id = 0;
    for (;;) {
      const header = this.byte();
      const type = header & 0x0f;
      if (type === 0) return;
      const delta = header >> 4;
      id = delta === 0 ? this.int() : id + delta;
      if (!field(id, type)) this.skip(type);
    }
  }

  /** The value of a bool field (its type code carries it). */
  static bool(type: number): boolean {
    if (type !== T.TRUE && type !== T.FALSE) notNative(`Thrift type ${type} where a bool was expected`);
    return type === T.TRUE;
  }

  skip(type: number, depth = 0): void {
    if (depth > 32) notNative('Thrift nesting too deep');
    switch (type) {
      case T.TRUE:
      case T.FALSE:
        return;
      case T.BYTE:
        this.byte();
        return;
      case T.I16:
      case T.I32:
      case T.I64:
        this.varint();
        return;
      case T.DOUBLE:
        if (this.end - this.pos < 8) notNative('Thrift double past its end');
        this.pos += 8;
        return;
      case T.BINARY:
        this.binary();
        return;
      case T.LIST:
      case T.SET: {
        const { type: element, size } = this.list();
        for (let k = 0; k < size; k++) {
          if (element === T.TRUE || element === T.FALSE) this.byte();
          else this.skip(element, depth + 1);
        }
        return;
      }
      case T.MAP: {
        const size = this.varint();
        if (size === 0) return;
        const types = this.byte();
        for (let k = 0; k < size; k++) {
          this.skip(types >> 4, depth + 1);
          this.skip(types & 0x0f, depth + 1);
        }
        return;
      }
      case T.STRUCT:
        for (;;) {
          const header = this.byte();
          if ((header & 0x0f) === 0) return;
          if (header >> 4 === 0) this.int();
          this.skip(header & 0x0f, depth + 1);
        }
      default:
        notNative(`Thrift type ${type}`);
    }
  }

  expect(type: number, want: number, what: string): void {
    if (type !== want) notNative(`${what} has Thrift type ${type}, not ${want}`);
  }
}
