/**
 * The portable Roaring serialization checked against CRoaring (through roaring-wasm, a dev dependency
 * no one here wrote): random sets of sparse, dense and run-heavy containers, keys near the 16- and
 * 32-bit boundaries and positions past 2^32. What floe writes CRoaring reads as the same set, and what
 * CRoaring writes (with and without run containers) floe reads as the same set. roaring-wasm has no
 * 64-bit bitmap, so the 64-bit layer (count, then key + 32-bit bitmap) is walked by hand here.
 */
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { RoaringBitmap32, roaringLibraryInitialize } from 'roaring-wasm';
import { beforeAll, describe, expect, it } from 'vitest';
import { DeletionVector, MAX_KEY } from '../../../functions/core/deletes/deletion-vector.js';
import {
  parseDeletionVector,
  parsePortable64,
  serializePortable64,
} from '../../../functions/core/deletes/deletion-vector-blob.js';

const TWO_32 = 2 ** 32;

/** A value near where containers and bitmaps meet, or anywhere. */
const value32 = fc.oneof(
  fc.nat({ max: TWO_32 - 1 }),
  fc
    .tuple(
      fc.constantFrom(0, 65535, 65536, 131072, 2 ** 31, TWO_32 - 65536, TWO_32 - 1),
      fc.integer({ min: -9000, max: 9000 }),
    )
    .map(([base, delta]) => Math.min(TWO_32 - 1, Math.max(0, base + delta))),
);

/** Ranges of one 32-bit bitmap: runs (run containers), every k-th value (dense bitmaps), lone values. */
const segment = fc.oneof(
  fc.record({ start: value32, length: fc.integer({ min: 1, max: 40_000 }), step: fc.constant(1) }),
  fc.record({
    start: value32,
    length: fc.integer({ min: 1, max: 12_000 }),
    step: fc.integer({ min: 2, max: 3 }),
  }),
  fc.record({
    start: value32,
    length: fc.integer({ min: 1, max: 300 }),
    step: fc.integer({ min: 50, max: 20_000 }),
  }),
);

/** A 64-bit vector's bitmaps: distinct keys (0, 1, the largest allowed, or any) with their 32-bit sets. */
const bitmaps = fc.uniqueArray(
  fc.tuple(
    fc.oneof(fc.constantFrom(0, 1, 2, MAX_KEY - 1, MAX_KEY), fc.nat({ max: MAX_KEY })),
    fc.array(segment, { minLength: 1, maxLength: 3 }),
  ),
  { selector: ([key]) => key, minLength: 1, maxLength: 3 },
);

/** The sorted distinct values the segments name. */
function valuesOf(segments: { start: number; length: number; step: number }[]): Uint32Array {
  const values: number[] = [];
  for (const { start, length, step } of segments) {
    for (let i = 0, v = start; i < length && v < TWO_32; i++, v += step) values.push(v);
  }
  const sorted = Uint32Array.from(values).sort();
  return sorted.filter((v, i) => i === 0 || v !== sorted[i - 1]);
}

/** Each 32-bit bitmap of a portable 64-bit serialization, decoded by CRoaring. */
function readWithCRoaring(bytes: Uint8Array): Map<number, Uint32Array> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Map<number, Uint32Array>();
  let at = 8;
  for (let i = 0n; i < view.getBigUint64(0, true); i++) {
    const key = view.getUint32(at, true);
    const bitmap = RoaringBitmap32.deserialize('portable', bytes.subarray(at + 4));
    out.set(key, bitmap.toUint32Array());
    at += 4 + bitmap.getSerializationSizeInBytes('portable');
    bitmap.dispose();
  }
  expect(at).toBe(bytes.byteLength);
  return out;
}

const cookies = { run: 0, noRun: 0 };

function countCookie(bitmap32: Uint8Array): void {
  if ((new DataView(bitmap32.buffer, bitmap32.byteOffset).getUint32(0, true) & 0xffff) === 12347)
    cookies.run++;
  else cookies.noRun++;
}

beforeAll(async () => {
  await roaringLibraryInitialize();
});

describe('portable Roaring against CRoaring (roaring-wasm)', () => {
  it('writes bitmaps CRoaring reads as the same sets (property)', () => {
    fc.assert(
      fc.property(bitmaps, (spec) => {
        // Prepare
        const expected = new Map(spec.map(([key, segments]) => [key, valuesOf(segments)]));
        const vector = new DeletionVector();
        for (const [key, values] of expected) {
          const high = BigInt(key) << 32n;
          // Exact as numbers below 2^53, as bigints above: both of add's paths
          for (const v of values) vector.add(key < 2 ** 21 ? key * TWO_32 + v : high | BigInt(v));
        }

        // Act
        const bytes = serializePortable64(vector);
        const read = readWithCRoaring(bytes);

        // Assess
        expect([...read.keys()]).toEqual([...expected.keys()].sort((a, b) => a - b));
        for (const [key, values] of expected)
          expect(Buffer.from(read.get(key)!.buffer).equals(Buffer.from(values.buffer))).toBe(true);
        countCookie(bytes.subarray(12));
      }),
      { numRuns: 25, seed: 20261205 },
    );
    // Assess: the seed's sets took both layouts (with run containers and without)
    expect(cookies.run).toBeGreaterThan(0);
    expect(cookies.noRun).toBeGreaterThan(0);
  });

  it('reads what CRoaring writes, with and without run containers, as the same sets (property)', () => {
    const seen = { run: 0, noRun: 0 };
    fc.assert(
      fc.property(bitmaps, fc.boolean(), (spec, runOptimize) => {
        // Prepare: CRoaring's bitmaps in the 64-bit portable layout, framed as a deletion-vector-v1 blob
        const expected = spec
          .map(([key, segments]) => [key, valuesOf(segments)] as const)
          .sort(([a], [b]) => a - b);
        const chunks: Uint8Array[] = [new Uint8Array(new BigUint64Array([BigInt(expected.length)]).buffer)];
        for (const [key, values] of expected) {
          const bitmap = new RoaringBitmap32(values);
          if (runOptimize) bitmap.runOptimize();
          const serialized = bitmap.serialize('portable');
          bitmap.dispose();
          if ((serialized[0]! | (serialized[1]! << 8)) === 12347) seen.run++;
          else seen.noRun++;
          chunks.push(new Uint8Array(new Uint32Array([key]).buffer), serialized);
        }
        const vectorBytes = new Uint8Array(Buffer.concat(chunks));
        const blob = new Uint8Array(vectorBytes.length + 12);
        new DataView(blob.buffer).setUint32(0, vectorBytes.length + 4, false);
        blob.set([0xd1, 0xd3, 0x39, 0x64], 4);
        blob.set(vectorBytes, 8);
        new DataView(blob.buffer).setUint32(blob.length - 4, crc32(blob.subarray(4, blob.length - 4)), false);

        // Act
        const fromVector = parsePortable64(vectorBytes);
        const fromBlob = parseDeletionVector(blob);

        // Assess: same count, and every expected position present, so the same set
        const total = expected.reduce((sum, [, values]) => sum + values.length, 0);
        expect(fromVector.cardinality).toBe(total);
        expect(fromBlob.cardinality).toBe(total);
        for (const [key, values] of expected) {
          const high = BigInt(key) << 32n;
          const position = (v: number) => (key < 2 ** 21 ? key * TWO_32 + v : high | BigInt(v));
          expect(
            values.find((v) => !fromBlob.has(position(v))),
            `key ${key}`,
          ).toBeUndefined();
        }
      }),
      { numRuns: 25, seed: 20261206 },
    );
    expect(seen.run).toBeGreaterThan(0);
    expect(seen.noRun).toBeGreaterThan(0);
  });
});
