/**
 * Thrift compact protocol, write side (compact-reader.ts is the read side): Parquet page headers and
 * the file footer are compact-protocol structs. Hand-written because only a handful of field kinds are
 * needed and a generated Thrift library would be a large dependency for a few hundred bytes per page.
 */

/** Compact-protocol type codes (field headers and list headers). */
export const CT = {
  TRUE: 1,
  FALSE: 2,
  I16: 4,
  I32: 5,
  I64: 6,
  BINARY: 8,
  LIST: 9,
  STRUCT: 12,
} as const;

const utf8 = new TextEncoder();

/** Writes one compact-protocol message into a growable buffer; fields must come in ascending id order. */
export class ThriftWriter {
  private buf: Uint8Array;
  private pos = 0;
  private lastId = 0;
  private readonly stack: number[] = [];

  constructor(initialSize = 256) {
    this.buf = new Uint8Array(initialSize);
  }

  get length(): number {
    return this.pos;
  }

  /** The bytes written so far (a view: copy it before writing more). */
  view(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }

  /** Starts over, keeping the buffer. */
  reset(): void {
    this.pos = 0;
    this.lastId = 0;
    this.stack.length = 0;
  }

  private ensure(extra: number): void {
    if (this.pos + extra <= this.buf.length) return;
    const grown = new Uint8Array(Math.max(this.buf.length * 2, this.pos + extra));
    grown.set(this.buf.subarray(0, this.pos));
    this.buf = grown;
  }

  private byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }

  /** Unsigned varint of a non-negative safe integer (plain arithmetic: values may exceed 32 bits). */
  private varint(n: number): void {
    this.ensure(10);
    while (n >= 0x80) {
      this.buf[this.pos++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    this.buf[this.pos++] = n;
  }

  private zigzag(n: number): void {
    this.varint(n >= 0 ? n * 2 : -n * 2 - 1);
  }

  private fieldHeader(id: number, type: number): void {
    const delta = id - this.lastId;
    if (delta > 0 && delta <= 15) this.byte((delta << 4) | type);
    else {
      this.byte(type);
      this.zigzag(id);
    }
    this.lastId = id;
  }

  i32(id: number, value: number): void {
    this.fieldHeader(id, CT.I32);
    this.zigzag(value);
  }

  i16(id: number, value: number): void {
    this.fieldHeader(id, CT.I16);
    this.zigzag(value);
  }

  /** An i64 field from a safe integer (every size and offset here is below 2^53). */
  i64(id: number, value: number): void {
    if (!Number.isSafeInteger(value)) throw new RangeError(`i64 field ${id} is not a safe integer: ${value}`);
    this.fieldHeader(id, CT.I64);
    this.zigzag(value);
  }

  bool(id: number, value: boolean): void {
    this.fieldHeader(id, value ? CT.TRUE : CT.FALSE);
  }

  binary(id: number, bytes: Uint8Array): void {
    this.fieldHeader(id, CT.BINARY);
    this.rawBinary(bytes);
  }

  string(id: number, value: string): void {
    this.fieldHeader(id, CT.BINARY);
    this.rawString(value);
  }

  /** A field whose value is already encoded (bytes copied from another compact-protocol message). */
  rawField(id: number, type: number, value: Uint8Array): void {
    this.fieldHeader(id, type);
    this.ensure(value.byteLength);
    this.buf.set(value, this.pos);
    this.pos += value.byteLength;
  }

  /** Opens a struct-valued field; close it with `endStruct`. */
  beginStruct(id: number): void {
    this.fieldHeader(id, CT.STRUCT);
    this.stack.push(this.lastId);
    this.lastId = 0;
  }

  /** Writes the stop byte of the innermost struct (also ends a list element or the message itself). */
  endStruct(): void {
    this.byte(0);
    this.lastId = this.stack.pop() ?? 0;
  }

  /** Opens a list field of `size` elements of compact type `elementType`. */
  beginList(id: number, elementType: number, size: number): void {
    this.fieldHeader(id, CT.LIST);
    if (size < 15) this.byte((size << 4) | elementType);
    else {
      this.byte(0xf0 | elementType);
      this.varint(size);
    }
  }

  /** Starts one struct element of a list; close it with `endStruct`. */
  beginListStruct(): void {
    this.stack.push(this.lastId);
    this.lastId = 0;
  }

  listI32(value: number): void {
    this.zigzag(value);
  }

  listI64(value: number): void {
    if (!Number.isSafeInteger(value))
      throw new RangeError(`i64 list element is not a safe integer: ${value}`);
    this.zigzag(value);
  }

  /** A bool element of a list opened with element type CT.TRUE: 1 is true, 2 false (as Java writes). */
  listBool(value: boolean): void {
    this.byte(value ? CT.TRUE : CT.FALSE);
  }

  listBinary(bytes: Uint8Array): void {
    this.rawBinary(bytes);
  }

  listString(value: string): void {
    this.rawString(value);
  }

  /**
   * A string's UTF-8 bytes with their length. An ASCII string (every column name and path the footer
   * holds, as a rule) is copied a character at a time: TextEncoder.encode of a short string costs a
   * call into C++ and a new array, ~0.7 ms for the ~100 strings of one 30-column file's footer.
   */
  private rawString(value: string): void {
    const n = value.length;
    if (n < 64) {
      let ascii = true;
      for (let i = 0; i < n; i++) if (value.charCodeAt(i) > 0x7f) ascii = false;
      if (ascii) {
        this.varint(n);
        this.ensure(n);
        const buf = this.buf;
        let pos = this.pos;
        for (let i = 0; i < n; i++) buf[pos++] = value.charCodeAt(i);
        this.pos = pos;
        return;
      }
    }
    this.rawBinary(utf8.encode(value));
  }

  private rawBinary(bytes: Uint8Array): void {
    this.varint(bytes.byteLength);
    this.ensure(bytes.byteLength);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.byteLength;
  }
}
