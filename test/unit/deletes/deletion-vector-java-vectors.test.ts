/**
 * Deletion vectors against Iceberg Java's golden files (test/fixtures/deletes/, see its README): the
 * blobs TestBitmapPositionDeleteIndex serializes, compared byte for byte both ways, and the portable
 * 64-bit Roaring examples of the Roaring format spec that TestRoaringPositionBitmap reads.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CorruptDeletionVectorError } from '../../../functions/core/deletes/deletes-errors.js';
import { DeletionVector } from '../../../functions/core/deletes/deletion-vector.js';
import {
  parseDeletionVector,
  parsePortable64,
  serializeDeletionVector,
} from '../../../functions/core/deletes/deletion-vector-blob.js';

const FIXTURES = join(import.meta.dirname, '../../fixtures/deletes');
const fixture = (name: string) => new Uint8Array(readFileSync(join(FIXTURES, name)));

const BITMAP_OFFSET = 2n ** 32n;
const CONTAINER_OFFSET = 65536n;
/** TestBitmapPositionDeleteIndex.position(bitmap, container, value). */
const position = (bitmap: bigint, container: bigint, value: bigint) =>
  bitmap * BITMAP_OFFSET + container * CONTAINER_OFFSET + value;
/** Java's index.delete(start, end): [start, end). */
function deleteRange(vector: DeletionVector, start: bigint, end: bigint): void {
  for (let p = Number(start); p < Number(end); p++) vector.add(p);
}

/** The positions each Java test deletes before serializing, by golden file. */
const JAVA_CASES: Record<string, (vector: DeletionVector) => void> = {
  'empty-position-index.bin': () => {},
  'small-alternating-values-position-index.bin': (v) => v.addAll([1, 3, 5, 7, 9]),
  'small-and-large-values-position-index.bin': (v) =>
    v.addAll([100, 101, 2 ** 31 - 1 + 100, 2 ** 31 - 1 + 101]),
  'all-container-types-position-index.bin': (v) => {
    v.add(position(0n, 0n, 5n));
    v.add(position(0n, 0n, 7n));
    deleteRange(v, position(0n, 1n, 1n), position(0n, 1n, 1000n));
    deleteRange(v, position(0n, 2n, 1n), position(0n, 2n, CONTAINER_OFFSET - 1n));
    v.add(position(1n, 0n, 10n));
    v.add(position(1n, 0n, 20n));
    deleteRange(v, position(1n, 1n, 10n), position(1n, 1n, 500n));
    deleteRange(v, position(1n, 2n, 1n), position(1n, 2n, CONTAINER_OFFSET - 1n));
  },
};

describe("deletion-vector-v1 blobs against Iceberg Java's golden files", () => {
  for (const [file, build] of Object.entries(JAVA_CASES)) {
    it(`writes ${file} byte for byte and reads it back to the same positions`, () => {
      // Prepare
      const vector = new DeletionVector();
      build(vector);
      const golden = fixture(file);

      // Act
      const written = serializeDeletionVector(vector);
      const read = parseDeletionVector(golden, vector.cardinality);

      // Assess
      expect(Buffer.from(written).equals(Buffer.from(golden))).toBe(true);
      expect(read.cardinality).toBe(vector.cardinality);
      expect(Buffer.from(serializeDeletionVector(read)).equals(Buffer.from(golden))).toBe(true);
      if (vector.cardinality < 1000) expect([...read.positions()]).toEqual([...vector.positions()]);
    });
  }

  it('holds the cardinality Java counts for the all-container-types index', () => {
    // Prepare: 2 + 999 + 65534 values in bitmap 0, 2 + 490 + 65534 in bitmap 1
    const golden = fixture('all-container-types-position-index.bin');

    // Act
    const read = parseDeletionVector(golden);

    // Assess
    expect(read.cardinality).toBe(2 + 999 + 65534 + 2 + 490 + 65534);
    expect(read.has(position(1n, 2n, CONTAINER_OFFSET - 2n))).toBe(true);
    expect(read.has(position(1n, 2n, CONTAINER_OFFSET - 1n))).toBe(false);
  });

  it("refuses a blob whose last CRC byte was flipped, with the CRC values Java's test names", () => {
    // Prepare: TestBitmapPositionDeleteIndex.testDeserializeInvalidCrc
    const vector = new DeletionVector();
    vector.addAll([1, 2]);
    const bytes = serializeDeletionVector(vector);
    bytes[bytes.length - 1]! ^= 0x01;

    // Act
    const act = () => parseDeletionVector(bytes);

    // Assess
    expect(act).toThrow(CorruptDeletionVectorError);
    expect(act).toThrow('CRC-32 is 712fa6e8, the blob says 712fa6e9');
  });
});

describe("the Roaring format spec's portable 64-bit examples (as Iceberg Java reads them)", () => {
  it('reads 64mapempty.bin as no positions', () => {
    expect(parsePortable64(fixture('64mapempty.bin')).cardinality).toBe(0);
  });

  it('reads 64map32bitvals.bin as 0..9', () => {
    expect([...parsePortable64(fixture('64map32bitvals.bin')).positions()]).toEqual(
      Array.from({ length: 10 }, (_, i) => BigInt(i)),
    );
  });

  it('reads 64mapspreadvals.bin as 0..9 under each of the keys 0..9', () => {
    // Act
    const read = parsePortable64(fixture('64mapspreadvals.bin'));

    // Assess
    const expected = Array.from(
      { length: 100 },
      (_, i) => (BigInt(Math.floor(i / 10)) << 32n) + BigInt(i % 10),
    );
    expect([...read.positions()]).toEqual(expected);
  });

  it('refuses 64maphighvals.bin: its keys have the top bit set (negative positions), as Java does', () => {
    expect(() => parsePortable64(fixture('64maphighvals.bin'))).toThrow(
      /positions must be positive \(top bit 0\)/,
    );
  });
});
