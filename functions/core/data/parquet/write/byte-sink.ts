/**
 * A growable byte buffer that the page encoders write into and reuse page after page, so encoding a
 * column allocates only when a page outgrows every earlier one.
 */
export class ByteSink {
  buf: Uint8Array;
  pos = 0;

  constructor(initialSize = 1024) {
    this.buf = new Uint8Array(initialSize);
  }

  reset(): void {
    this.pos = 0;
  }

  /** Makes room for `extra` more bytes at `pos`. */
  ensure(extra: number): void {
    const need = this.pos + extra;
    if (need <= this.buf.length) return;
    const grown = new Uint8Array(Math.max(this.buf.length * 2, need));
    grown.set(this.buf.subarray(0, this.pos));
    this.buf = grown;
  }

  byte(b: number): void {
    if (this.pos >= this.buf.length) this.ensure(1);
    this.buf[this.pos++] = b;
  }

  varint(n: number): void {
    this.ensure(5);
    while (n >= 0x80) {
      this.buf[this.pos++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    this.buf[this.pos++] = n;
  }

  u32(n: number): void {
    this.ensure(4);
    const b = this.buf;
    const p = this.pos;
    b[p] = n & 0xff;
    b[p + 1] = (n >>> 8) & 0xff;
    b[p + 2] = (n >>> 16) & 0xff;
    b[p + 3] = (n >>> 24) & 0xff;
    this.pos = p + 4;
  }

  bytes(src: Uint8Array): void {
    this.ensure(src.byteLength);
    this.buf.set(src, this.pos);
    this.pos += src.byteLength;
  }

  /** The bytes written so far (a view into the reused buffer). */
  view(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
}
