import { randomBytes } from 'node:crypto';
import * as zlib from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ZstdContext } from '../../../../functions/core/data/parquet/write/zstd-context.js';

const OPTIONS: zlib.ZstdOptions = { params: { [zlib.constants.ZSTD_c_compressionLevel]: 1 } };

/** Bodies as pages hold them: empty, tiny, repetitive, incompressible, and over zstd's 128 KiB block. */
const body = fc.oneof(
  fc.uint8Array({ maxLength: 64 }),
  fc.uint8Array({ minLength: 1, maxLength: 4000 }),
  fc
    .tuple(fc.uint8Array({ minLength: 1, maxLength: 16 }), fc.integer({ min: 1, max: 20_000 }))
    .map(([unit, times]) =>
      Uint8Array.from({ length: unit.length * times }, (_, i) => unit[i % unit.length]),
    ),
  fc.integer({ min: 0, max: 300_000 }).map((n) => new Uint8Array(randomBytes(n))),
);

describe('ZstdContext', () => {
  it('keeps one zstd context on this Node rather than falling back to zstdCompressSync', () => {
    // Prepare
    const zstd = new ZstdContext(OPTIONS);

    // Act / Assess: false here would mean every page pays for a fresh context again.
    expect(zstd.keepsContext).toBe(true);
    zstd.close();
  });

  it('writes the bytes zstdCompressSync writes, frame after frame on the same context', () => {
    fc.assert(
      fc.property(fc.array(body, { minLength: 1, maxLength: 8 }), (bodies) => {
        // Prepare
        const zstd = new ZstdContext(OPTIONS);

        // Act
        const frames = bodies.map((b) => zstd.compress(b));
        zstd.close();

        // Assess
        frames.forEach((frame, i) => {
          expect(Buffer.from(frame).equals(zlib.zstdCompressSync(bodies[i], OPTIONS))).toBe(true);
          expect(zlib.zstdDecompressSync(frame).equals(bodies[i])).toBe(true);
        });
      }),
      { numRuns: 40 },
    );
  });

  it('compresses only the view it is given and returns a buffer of its own', () => {
    // Prepare: a view in the middle of a larger buffer, as the page scratch hands over.
    const whole = Uint8Array.from({ length: 10_000 }, (_, i) => i % 251);
    const view = whole.subarray(1234, 7777);
    const zstd = new ZstdContext(OPTIONS);

    // Act
    const first = zstd.compress(view);
    const copy = first.slice();
    zstd.compress(whole); // the next frame must not overwrite the first
    zstd.close();

    // Assess
    expect(first).toEqual(copy);
    expect(zlib.zstdDecompressSync(first).equals(view)).toBe(true);
  });

  it('opens a new context for frames after close', () => {
    // Prepare
    const zstd = new ZstdContext(OPTIONS);
    const a = new TextEncoder().encode('abc'.repeat(1000));
    zstd.compress(a);

    // Act
    zstd.close();
    const again = zstd.compress(a);
    zstd.close();

    // Assess
    expect(Buffer.from(again).equals(zlib.zstdCompressSync(a, OPTIONS))).toBe(true);
  });
});
