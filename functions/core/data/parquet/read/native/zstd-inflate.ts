/**
 * ZSTD page bodies decompressed on one kept zstd context. zlib.zstdDecompressSync opens a stream and a
 * fresh decompression context for every call (~23 µs here): a 250-row file has ~25 pages, so that
 * alone would cost about as much as parquet-wasm's whole decode. As the writer's zstd-context.ts does
 * for compression, this drives a ZstdDecompress stream's native handle the way zlib's processChunkSync
 * does (~0.3 µs a page). A frame is handed over only once its block structure has been walked and found
 * to end exactly where the page ends, so the context is always between frames after a call that
 * succeeds; any failure throws the context away. Where the handle is not as expected, every page goes
 * through zstdDecompressSync.
 */
import * as zlib from 'node:zlib';
import { type NativeZstd, nativeHandle } from '../../write/zstd-context.js';

/** A ZSTD frame's length as its headers give it, or -1 when `src[at, end)` does not hold one. */
export function zstdFrameLength(src: Uint8Array, at: number, end: number): number {
  if (
    end - at < 6 ||
    src[at] !== 0x28 ||
    src[at + 1] !== 0xb5 ||
    src[at + 2] !== 0x2f ||
    src[at + 3] !== 0xfd
  ) {
    return -1;
  }
  const fhd = src[at + 4];
  if (fhd & 0x08) return -1; // reserved bit
  const single = (fhd >> 5) & 1;
  const fcsFlag = fhd >> 6;
  const dictBytes = [0, 1, 2, 4][fhd & 3];
  const fcsBytes = fcsFlag === 0 ? single : [0, 2, 4, 8][fcsFlag];
  let p = at + 5 + (single ? 0 : 1) + dictBytes + fcsBytes;
  for (;;) {
    if (p + 3 > end) return -1;
    const header = src[p] | (src[p + 1] << 8) | (src[p + 2] << 16);
    p += 3;
    const type = (header >> 1) & 3;
    if (type === 3) return -1;
    p += type === 1 ? 1 : header >>> 3;
    if (p > end) return -1;
    if (header & 1) break;
  }
  if (fhd & 0x04) p += 4; // content checksum
  return p > end ? -1 : p - at;
}

const SELF_CHECK = Uint8Array.from({ length: 700 }, (_, i) => (i % 5 === 0 ? i & 0xff : (i >> 4) & 0x1f));

/** Decompresses whole ZSTD frames of known size on a context kept from page to page. */
export class ZstdInflater {
  private stream: zlib.ZstdDecompress | undefined;
  private handle: NativeZstd | undefined;
  private state: Uint32Array | undefined;
  private unavailable = false;
  private out = new Uint8Array(1 << 16);

  /**
   * The `size` bytes `src[at, end)` (exactly one frame) decompress to, in a buffer reused by the next
   * call; undefined when they are not one frame of exactly that size.
   */
  inflate(src: Uint8Array, at: number, end: number, size: number): Uint8Array | undefined {
    if (zstdFrameLength(src, at, end) !== end - at) return undefined;
    if (!this.open()) return this.viaSync(src.subarray(at, end), size);
    if (this.out.byteLength < size + 1)
      this.out = new Uint8Array(Math.max(size + 1, this.out.byteLength * 2));
    const out = this.out;
    const room = out.byteLength;
    (this.handle as NativeZstd).writeSync(zlib.constants.ZSTD_e_end, src, at, end - at, out, 0, room);
    const state = this.state as Uint32Array;
    // A failure destroys the stream synchronously; anything but the whole frame into exactly `size`
    // bytes leaves the context in the middle of a frame.
    if ((this.stream as zlib.ZstdDecompress).destroyed || state[1] !== 0 || room - state[0] !== size) {
      this.close();
      return undefined;
    }
    return out.subarray(0, size);
  }

  private viaSync(frame: Uint8Array, size: number): Uint8Array | undefined {
    try {
      const out = zlib.zstdDecompressSync(frame, { maxOutputLength: size + 1 });
      return out.byteLength === size ? out : undefined;
    } catch {
      return undefined;
    }
  }

  private close(): void {
    const stream = this.stream;
    this.stream = undefined;
    this.handle = undefined;
    this.state = undefined;
    stream?.close();
  }

  private open(): boolean {
    if (this.handle !== undefined) return true;
    if (this.unavailable || typeof zlib.createZstdDecompress !== 'function') {
      this.unavailable = true;
      return false;
    }
    const stream = zlib.createZstdDecompress();
    stream.on('error', () => undefined); // reported through `destroyed` above
    const native = nativeHandle(stream);
    if (native === undefined) {
      this.unavailable = true;
      stream.close();
      return false;
    }
    this.stream = stream;
    this.handle = native.handle;
    this.state = native.state;
    // Private fields of another Node could keep their shape and change their meaning.
    const frame = zlib.zstdCompressSync(SELF_CHECK);
    const back = this.inflate(frame, 0, frame.byteLength, SELF_CHECK.byteLength);
    if (back === undefined || !back.every((b, i) => b === SELF_CHECK[i])) {
      this.close();
      this.unavailable = true;
      return false;
    }
    return true;
  }
}
