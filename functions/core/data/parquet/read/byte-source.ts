/**
 * The bytes of a data file a reader may look at: the whole file, or only the ranges fetched so far
 * (a selective scan fetches the footer, the page index and the pages it needs, ranged-file.ts).
 * A byte that was not fetched is never handed out: asking for one throws, so no zero-filled gap can
 * reach a decoder, and every reader of the page index or the pages already treats a throw as "cannot
 * use this" (the statistics then prune nothing, the page slice is dropped).
 */

/** Bytes [offset, offset + length) of a file. */
export interface ByteRange {
  offset: number;
  length: number;
}

export interface ByteSource {
  /** The file's size in bytes. */
  readonly size: number;
  /** Whether every byte of the range is at hand. */
  has(offset: number, length: number): boolean;
  /**
   * Bytes [offset, offset + length) of the file (a view when they were fetched in one piece).
   * @throws RangeError when any of them is outside the file or was not fetched
   */
  bytes(offset: number, length: number): Uint8Array;
}

/** A whole file's bytes as a ByteSource. */
export function wholeSource(file: Uint8Array): ByteSource {
  const inside = (offset: number, length: number) =>
    Number.isSafeInteger(offset) && Number.isSafeInteger(length) && offset >= 0 && length >= 0
      ? offset + length <= file.byteLength
      : false;
  return {
    size: file.byteLength,
    has: inside,
    bytes(offset, length) {
      if (!inside(offset, length)) throw new RangeError(`bytes [${offset}, +${length}) are outside the file`);
      return file.subarray(offset, offset + length);
    },
  };
}

/** A file's bytes known piece by piece, as they are fetched (pieces sorted, never overlapping). */
export class FetchedBytes implements ByteSource {
  private readonly pieces: { offset: number; bytes: Uint8Array }[] = [];
  /** Bytes held, every piece counted once. */
  held = 0;

  constructor(readonly size: number) {}

  /**
   * Keeps `bytes` as the file's bytes from `offset` (the parts of them already held are dropped).
   * @throws RangeError when they would run outside the file
   */
  add(offset: number, bytes: Uint8Array): void {
    if (!(Number.isSafeInteger(offset) && offset >= 0 && offset + bytes.byteLength <= this.size))
      throw new RangeError(`bytes [${offset}, +${bytes.byteLength}) are outside the file`);
    for (const gap of this.missing([{ offset, length: bytes.byteLength }])) {
      const piece = {
        offset: gap.offset,
        bytes: bytes.subarray(gap.offset - offset, gap.offset - offset + gap.length),
      };
      const at = this.pieces.findIndex((p) => p.offset > gap.offset);
      this.pieces.splice(at < 0 ? this.pieces.length : at, 0, piece);
      this.held += gap.length;
    }
  }

  has(offset: number, length: number): boolean {
    if (!(Number.isSafeInteger(offset) && Number.isSafeInteger(length) && offset >= 0 && length >= 0))
      return false;
    return offset + length <= this.size && this.missing([{ offset, length }]).length === 0;
  }

  bytes(offset: number, length: number): Uint8Array {
    if (!this.has(offset, length)) throw new RangeError(`bytes [${offset}, +${length}) were not fetched`);
    const end = offset + length;
    const parts = this.pieces.filter((p) => p.offset < end && p.offset + p.bytes.byteLength > offset);
    if (parts.length === 1) return parts[0].bytes.subarray(offset - parts[0].offset, end - parts[0].offset);
    const out = new Uint8Array(length);
    for (const p of parts) {
      const from = Math.max(offset, p.offset);
      const to = Math.min(end, p.offset + p.bytes.byteLength);
      out.set(p.bytes.subarray(from - p.offset, to - p.offset), from - offset);
    }
    return out;
  }

  /** The parts of `ranges` not held yet, sorted and merged where they overlap or touch. */
  missing(ranges: readonly ByteRange[]): ByteRange[] {
    const out: ByteRange[] = [];
    for (const r of coalesceRanges(ranges, 0)) {
      let at = r.offset;
      const end = r.offset + r.length;
      for (const p of this.pieces) {
        const pEnd = p.offset + p.bytes.byteLength;
        if (pEnd <= at || p.offset >= end) continue;
        if (p.offset > at) out.push({ offset: at, length: p.offset - at });
        at = Math.max(at, pEnd);
      }
      if (at < end) out.push({ offset: at, length: end - at });
    }
    return out;
  }
}

/**
 * Ranges sorted and merged where they overlap or lie at most `gap` bytes apart (one request reads the
 * gap rather than paying another request); empty ranges are dropped.
 */
export function coalesceRanges(ranges: readonly ByteRange[], gap: number): ByteRange[] {
  const sorted = ranges.filter((r) => r.length > 0).sort((a, b) => a.offset - b.offset);
  const out: ByteRange[] = [];
  for (const r of sorted) {
    const last = out.at(-1);
    if (last && r.offset <= last.offset + last.length + gap) {
      last.length = Math.max(last.length, r.offset + r.length - last.offset);
    } else out.push({ offset: r.offset, length: r.length });
  }
  return out;
}
