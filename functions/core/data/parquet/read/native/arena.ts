/**
 * Memory a read needs only while it decodes (levels, dictionaries, byte arrays being gathered), and
 * the growable buffer byte arrays are gathered in.
 */

/**
 * Byte ranges for what one read needs only while it decodes, reused by the next read: kept out of the
 * slab, whose buffers live as long as the file's Data (a 250-row file's levels and dictionaries
 * would about double them).
 */
export class Arena {
  private buf = new Uint8Array(1 << 18);
  private at = 0;

  /** Starts over: every range taken before is dead (nothing taken here escapes a read). */
  reset(): void {
    this.at = 0;
  }

  /** `length` bytes, 8-byte aligned, not zeroed. */
  take(length: number): Uint8Array {
    const start = (this.at + 7) & ~7;
    if (start + length > this.buf.byteLength) {
      // Ranges taken before stay valid on the old buffer.
      this.buf = new Uint8Array(Math.max(this.buf.byteLength * 2, length + 1024));
      this.at = length;
      return this.buf.subarray(0, length);
    }
    this.at = start + length;
    return this.buf.subarray(start, start + length);
  }
}

/** A growable byte buffer in the arena (copied to the file's slab, exactly sized, when done). */
export class Bytes {
  pos = 0;
  constructor(
    public buf: Uint8Array,
    private readonly arena: Arena,
  ) {}
  ensure(extra: number): void {
    if (this.pos + extra <= this.buf.byteLength) return;
    const grown = this.arena.take(Math.max(this.buf.byteLength * 2, this.pos + extra));
    grown.set(this.buf.subarray(0, this.pos));
    this.buf = grown;
  }
}

/** Copies src[a, b) to `p` in `buf`; returns the position after it. Short values: a byte loop beats set(). */
export function copyValue(buf: Uint8Array, p: number, src: Uint8Array, a: number, b: number): number {
  if (b - a > 32) {
    buf.set(src.subarray(a, b), p);
    return p + b - a;
  }
  for (let x = a; x < b; x++) buf[p++] = src[x];
  return p;
}
