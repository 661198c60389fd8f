/**
 * The one reader of the Thrift compact protocol in floe (parquet.thrift's FileMetaData, PageHeader,
 * ColumnIndex, OffsetIndex). Two ways to use it:
 * - by visiting fields in order (`field`, `struct`, `skip`): floe's own decoder
 *   (parquet/read/native/) keeps what it knows of each struct and skips the rest, building nothing for
 *   statistics or the page index; copying a field's raw bytes into another footer works the same way;
 * - as schema-less objects (`readThriftStruct`): fields named `field_<id>` of parquet.thrift, for the
 *   footer, page index and page headers the read planning and the scan look into.
 * Every read is bounds-checked against the end it was given. What fails is the caller's to decide: the
 * native decoder turns a malformed value into NotNativeError (the file goes to parquet-wasm), the
 * others get a ValidationError.
 */
import { ValidationError } from '../../../errors.js';

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

/** A Thrift value read without its schema: i8..i32 as numbers, i64 as bigints, binary as bytes. */
export type ThriftValue = boolean | number | bigint | Uint8Array | ThriftValue[] | ThriftStruct;
/** A Thrift struct read without its schema: field id n is `field_n`. */
export type ThriftStruct = { [key: `field_${number}`]: ThriftValue };

/** Structs inside structs deeper than any in parquet.thrift, many times over: hostile bytes. */
const MAX_DEPTH = 64;

/**
 * The default failure: bytes that are no Thrift value of the expected shape.
 * @throws ValidationError always
 */
export function malformedThrift(why: string): never {
  throw new ValidationError(`malformed Thrift compact value: ${why}`);
}

export class CompactReader {
  /**
   * Reads buf[pos, end). `fail` is called with the reason whenever a value is malformed or runs
   * past `end`; it must throw.
   */
  constructor(
    readonly buf: Uint8Array,
    public pos: number,
    readonly end: number,
    readonly fail: (why: string) => never = malformedThrift,
  ) {}

  byte(): number {
    if (this.pos >= this.end) this.fail('Thrift value past its end');
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
    return this.fail('varint too long');
  }

  /** A zigzag i16/i32/i64 as a number (exact below 2^53 in magnitude). */
  int(): number {
    const n = this.varint();
    return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
  }

  /** A zigzag i64 as a bigint, exact over its whole range. */
  bigint(): bigint {
    const start = this.pos;
    // Up to 7 bytes (49 bits) the number path is exact and far cheaper than BigInt arithmetic.
    for (let i = 0; i < 7; i++) {
      if ((this.byte() & 0x80) === 0) {
        this.pos = start;
        return BigInt(this.int());
      }
    }
    this.pos = start;
    let n = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      const b = this.byte();
      n |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return (n >> 1n) ^ -(n & 1n);
      shift += 7n;
    }
    return this.fail('varint too long');
  }

  /** A non-negative int that fits a file offset or a count. */
  count(what: string): number {
    const n = this.int();
    if (!Number.isSafeInteger(n) || n < 0) this.fail(`${what} is ${n}`);
    return n;
  }

  /** A little-endian double. */
  double(): number {
    if (this.end - this.pos < 8) this.fail('Thrift double past its end');
    const value = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 8).getFloat64(0, true);
    this.pos += 8;
    return value;
  }

  /** Binary (and string) bytes: a view of the buffer, not a copy. */
  binary(): Uint8Array {
    const length = this.varint();
    if (length > this.end - this.pos) this.fail('Thrift binary past its end');
    const out = this.buf.subarray(this.pos, this.pos + length);
    this.pos += length;
    return out;
  }

  /** A list header: element type and size. */
  list(): { type: number; size: number } {
    const header = this.byte();
    const size = header >> 4 === 15 ? this.varint() : header >> 4;
    if (size > this.end - this.pos) this.fail('Thrift list longer than its bytes');
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
  bool(type: number): boolean {
    if (type !== T.TRUE && type !== T.FALSE) this.fail(`Thrift type ${type} where a bool was expected`);
    return type === T.TRUE;
  }

  skip(type: number, depth = 0): void {
    if (depth > 32) this.fail('Thrift nesting too deep');
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
        if (this.end - this.pos < 8) this.fail('Thrift double past its end');
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
        this.fail(`Thrift type ${type}`);
    }
  }

  expect(type: number, want: number, what: string): void {
    if (type !== want) this.fail(`${what} has Thrift type ${type}, not ${want}`);
  }
}

/** `field_<id>` names made once: a footer names the same few ids thousands of times. */
const FIELD_NAMES: `field_${number}`[] = Array.from({ length: 32 }, (_, id) => `field_${id}` as const);

function fieldName(id: number): `field_${number}` {
  return id >= 0 && id < FIELD_NAMES.length ? FIELD_NAMES[id] : `field_${id}`;
}

/**
 * The struct at `r.pos`, every field read (none skipped); `r.pos` ends after its stop byte.
 * Sets and maps, which parquet.thrift does not use, are refused.
 * @throws whatever `r.fail` throws (ValidationError by default) on malformed or truncated bytes
 */
export function readThriftStruct(r: CompactReader, depth = 0): ThriftStruct {
  if (depth > MAX_DEPTH) r.fail('Thrift nesting too deep');
  const out: ThriftStruct = {};
  let id = 0;
  for (let type = r.field(id); type !== 0; type = r.field(id)) {
    id = r.fieldId;
    out[fieldName(id)] = readValue(r, type, depth);
  }
  return out;
}

function readValue(r: CompactReader, type: number, depth: number): ThriftValue {
  switch (type) {
    case T.TRUE:
      return true;
    case T.FALSE:
      return false;
    case T.BYTE:
      return (r.byte() << 24) >> 24;
    case T.I16:
    case T.I32:
      return r.int();
    case T.I64:
      return r.bigint();
    case T.DOUBLE:
      return r.double();
    case T.BINARY:
      return r.binary();
    case T.LIST: {
      const { type: element, size } = r.list();
      const values: ThriftValue[] = new Array(size);
      const bools = element === T.TRUE || element === T.FALSE;
      for (let k = 0; k < size; k++) values[k] = bools ? r.byte() === 1 : readValue(r, element, depth + 1);
      return values;
    }
    case T.STRUCT:
      return readThriftStruct(r, depth + 1);
    default:
      return r.fail(`Thrift type ${type} not used by parquet.thrift`);
  }
}

/**
 * The struct at `bytes[offset]`, read to its stop byte, within bytes[offset, end).
 * @throws ValidationError on malformed or truncated bytes
 */
export function decodeThrift(bytes: Uint8Array, offset = 0, end = bytes.byteLength): ThriftStruct {
  return readThriftStruct(new CompactReader(bytes, offset, end));
}

/**
 * The struct at `cursor.offset` of `cursor.view`'s bytes; `cursor.offset` is moved past it (the
 * cursor shape the scan's page-index reads use).
 * @throws ValidationError on malformed or truncated bytes
 */
export function decodeThriftAt(cursor: { view: DataView; offset: number }): ThriftStruct {
  const { view } = cursor;
  const r = new CompactReader(
    new Uint8Array(view.buffer, view.byteOffset, view.byteLength),
    cursor.offset,
    view.byteLength,
  );
  const out = readThriftStruct(r);
  cursor.offset = r.pos;
  return out;
}
