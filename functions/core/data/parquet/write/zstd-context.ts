/**
 * ZSTD frames from one kept zstd context (pages.ts keeps one for the process). zlib.zstdCompressSync builds a Transform
 * stream and a fresh zstd context (allocating and clearing its tables) for every call, then frees it:
 * on the 10,000-row orders bench batch (53 pages) that was about three quarters of the time spent
 * compressing. Node has no public synchronous call on a kept context — the stream's synchronous path
 * (`_processChunk`) closes its handle — so this drives a ZstdCompress stream's native handle as zlib's
 * own processChunkSync does: `writeSync(ZSTD_e_end, ...)` compresses one whole frame, and zstd begins
 * the next frame afresh with the same parameters. The bytes are zstdCompressSync's (held equal by
 * test/unit/data/parquet/zstd-context.test.ts, and checked on each new context's first frame). Where
 * that handle is not as expected (another Node version), every frame goes through zstdCompressSync.
 */
import * as zlib from 'node:zlib';
import { LakeError } from '../../../errors.js';

/** The native handle of a zlib zstd stream, as node:zlib's processChunkSync calls it. */
export interface NativeZstd {
  writeSync(
    flush: number,
    input: Uint8Array,
    inOffset: number,
    inLength: number,
    output: Uint8Array,
    outOffset: number,
    outLength: number,
  ): void;
}

/** The private fields of a zlib zstd stream this relies on: its handle and where it reports progress. */
interface ZstdInternals {
  _handle?: unknown;
  /** [output bytes left, input bytes left] after each writeSync. */
  _writeState?: unknown;
}

/**
 * The native handle and progress state of a zstd stream (compressing or decompressing: parquet/read/native/'s
 * zstd-inflate.ts drives a ZstdDecompress the same way), or undefined where this Node's differ.
 */
export function nativeHandle(
  stream: zlib.ZstdCompress | zlib.ZstdDecompress,
): { handle: NativeZstd; state: Uint32Array } | undefined {
  const internals = stream as unknown as ZstdInternals;
  const handle = internals._handle as Partial<NativeZstd> | null | undefined;
  const state = internals._writeState;
  if (typeof handle?.writeSync !== 'function' || !(state instanceof Uint32Array) || state.length < 2) {
    return undefined;
  }
  return { handle: handle as NativeZstd, state };
}

/** zstd's ZSTD_COMPRESSBOUND: the largest frame `n` bytes can become (one call then ends it). */
function compressBound(n: number): number {
  const small = 128 << 10;
  return n + (n >>> 8) + (n < small ? (small - n) >>> 11 : 0);
}

/** A small page-like body (repeats and a ramp) for the self-check of a newly opened context. */
const SELF_CHECK = Uint8Array.from({ length: 512 }, (_, i) => (i % 7 === 0 ? i & 0xff : (i >> 3) & 0x3f));

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Compresses each body as one ZSTD frame on a context reused from frame to frame. */
export class ZstdContext {
  private stream: zlib.ZstdCompress | undefined;
  private native: { handle: NativeZstd; state: Uint32Array } | undefined;
  /** Whether the kept context is unavailable here (then every frame is zstdCompressSync's). */
  private unavailable = false;
  private out = new Uint8Array(0);

  constructor(private readonly options: zlib.ZstdOptions) {}

  /**
   * One ZSTD frame of `body`, in a buffer of its own (`body` may be a reused scratch view).
   * @throws LakeError (not retryable) when zstd fails, which only running out of memory makes it do
   */
  compress(body: Uint8Array): Uint8Array {
    const native = this.open();
    if (native === undefined) return zlib.zstdCompressSync(body, this.options);
    const { handle, state } = native;
    const stream = this.stream as zlib.ZstdCompress;
    let inOffset = 0;
    let inLeft = body.byteLength;
    let written = 0;
    if (this.out.byteLength < compressBound(inLeft)) this.out = new Uint8Array(compressBound(inLeft));
    for (;;) {
      const room = this.out.byteLength - written;
      handle.writeSync(zlib.constants.ZSTD_e_end, body, inOffset, inLeft, this.out, written, room);
      // zlib reports a failure by destroying the stream (its 'error' event comes later).
      if (stream.destroyed) {
        this.close();
        throw new LakeError(`zstd could not compress a ${body.byteLength}-byte page`);
      }
      const outLeft = state[0];
      written += room - outLeft;
      inOffset += inLeft - state[1];
      inLeft = state[1];
      // Output space left over means the frame is complete; none left, more may be to come.
      if (outLeft !== 0) break;
      const grown = new Uint8Array(this.out.byteLength * 2);
      grown.set(this.out);
      this.out = grown;
    }
    return this.out.slice(0, written);
  }

  /** Whether frames come from a kept context here (false: each is zstdCompressSync's). */
  get keepsContext(): boolean {
    return this.open() !== undefined;
  }

  /** Frees the zstd context; a later compress opens a new one. */
  close(): void {
    const stream = this.stream;
    this.stream = undefined;
    this.native = undefined;
    stream?.close();
  }

  private open(): { handle: NativeZstd; state: Uint32Array } | undefined {
    if (this.native !== undefined || this.unavailable) return this.native;
    const stream = zlib.createZstdCompress(this.options);
    // A failure is reported synchronously through `destroyed` above; the event must not go unhandled.
    stream.on('error', () => undefined);
    const native = nativeHandle(stream);
    if (native === undefined) {
      this.unavailable = true;
      stream.close();
      return undefined;
    }
    this.stream = stream;
    this.native = native;
    // Private fields of another Node could keep their shape and change their meaning: the first frame
    // of each context is checked against zstdCompressSync's, and a mismatch gives up the kept context.
    if (!sameBytes(this.compress(SELF_CHECK), zlib.zstdCompressSync(SELF_CHECK, this.options))) {
      this.close();
      this.unavailable = true;
      return undefined;
    }
    return native;
  }
}
