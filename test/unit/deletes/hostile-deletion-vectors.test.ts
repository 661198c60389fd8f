/**
 * Deletion vector blobs that are damaged or built to mislead: each is refused with a
 * CorruptDeletionVectorError naming the problem, never read as some other set of positions. The
 * vectors are assembled here byte by byte (with a correct CRC, so the check under test is the one that
 * fires), not with the serializer under test.
 */
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { CorruptDeletionVectorError } from '../../../functions/core/deletes/deletes-errors.js';
import { DeletionVector } from '../../../functions/core/deletes/deletion-vector.js';
import {
  parseDeletionVector,
  serializeDeletionVector,
} from '../../../functions/core/deletes/deletion-vector-blob.js';

type Part = ['u8' | 'u16' | 'u32', ...number[]] | ['u64', ...bigint[]];

/** Little-endian bytes, as the portable Roaring format stores them. */
function le(...parts: Part[]): Uint8Array {
  const out: number[] = [];
  for (const [kind, ...values] of parts) {
    for (const value of values) {
      const width = { u8: 1, u16: 2, u32: 4, u64: 8 }[kind];
      let v = BigInt(value);
      for (let i = 0; i < width; i++, v >>= 8n) out.push(Number(v & 0xffn));
    }
  }
  return new Uint8Array(out);
}

/** The deletion-vector-v1 framing (big-endian length, magic, big-endian CRC) around `vector`. */
function frame(vector: Uint8Array): Uint8Array {
  const blob = new Uint8Array(vector.length + 12);
  const view = new DataView(blob.buffer);
  view.setUint32(0, vector.length + 4, false);
  blob.set([0xd1, 0xd3, 0x39, 0x64], 4);
  blob.set(vector, 8);
  view.setUint32(8 + vector.length, crc32(blob.subarray(4, 8 + vector.length)), false);
  return blob;
}

/** A 32-bit portable bitmap without runs: one container `key16` holding the array `values`. */
const arrayBitmap = (key16: number, values: number[]): Part[] => [
  ['u32', 12346, 1],
  ['u16', key16, values.length - 1],
  ['u32', 16],
  ['u16', ...values],
];

const concat = (...chunks: Uint8Array[]) => new Uint8Array(Buffer.concat(chunks));
const oneBitmap = (key: number, ...bitmap: Part[]) => frame(le(['u64', 1n], ['u32', key], ...bitmap));

describe('a valid hand-built vector (the baseline the hostile ones alter)', () => {
  it('reads as the positions it was built with', () => {
    const vector = parseDeletionVector(oneBitmap(3, ...arrayBitmap(2, [1, 2, 9])));
    expect([...vector.positions()]).toEqual([1n, 2n, 9n].map((v) => (3n << 32n) + 2n * 65536n + v));
  });
});

describe('hostile deletion vector blobs', () => {
  const valid = serializeDeletionVector(new DeletionVector());
  const two = new DeletionVector();
  two.addAll([5, 6]);
  const twoBlob = serializeDeletionVector(two);

  const cases: [string, () => Uint8Array, RegExp][] = [
    [
      'a blob shorter than an empty vector',
      () => valid.subarray(0, 19),
      /fewer than the 20 of an empty vector/,
    ],
    [
      'a truncated blob',
      () => twoBlob.subarray(0, twoBlob.length - 3),
      /length field says 36 bytes of magic and vector, the blob holds 33/,
    ],
    [
      'a length field pointing past the end',
      () => {
        const b = twoBlob.slice();
        new DataView(b.buffer).setUint32(0, 4000, false);
        return b;
      },
      /length field says 4000 bytes/,
    ],
    [
      'a wrong magic',
      () => {
        const b = twoBlob.slice();
        b[5] = 0;
        return b;
      },
      /magic is d1003964, expected d1d33964/,
    ],
    [
      'a flipped bit in the vector (wrong CRC)',
      () => {
        const b = twoBlob.slice();
        b[20]! ^= 0x10;
        return b;
      },
      /CRC-32 is [0-9a-f]{8}, the blob says [0-9a-f]{8}: the bytes were damaged/,
    ],
    [
      'a bitmap count larger than the bytes can hold',
      () => frame(le(['u64', 2n ** 40n])),
      /claims 1099511627776 bitmaps/,
    ],
    [
      'bitmap keys out of order',
      () =>
        frame(
          concat(le(['u64', 2n], ['u32', 1], ...arrayBitmap(0, [1]), ['u32', 0], ...arrayBitmap(0, [1]))),
        ),
      /bitmap keys are not strictly ascending \(0 after 1\)/,
    ],
    [
      'a duplicate bitmap key',
      () =>
        frame(
          concat(le(['u64', 2n], ['u32', 4], ...arrayBitmap(0, [1]), ['u32', 4], ...arrayBitmap(0, [2]))),
        ),
      /bitmap keys are not strictly ascending \(4 after 4\)/,
    ],
    [
      'a key with the top bit set',
      () => oneBitmap(0x80000000, ...arrayBitmap(0, [1])),
      /positions must be positive/,
    ],
    [
      'key 2^31 − 1, past what Iceberg reads',
      () => oneBitmap(0x7fffffff, ...arrayBitmap(0, [1])),
      /past 2147483646/,
    ],
    ['an unknown cookie', () => oneBitmap(0, ['u32', 12345, 0]), /unknown cookie 12345/],
    ['more containers than 16 bits of keys', () => oneBitmap(0, ['u32', 12346, 65537]), /65537 containers/],
    [
      'container keys out of order',
      () => oneBitmap(0, ['u32', 12346, 2], ['u16', 5, 0, 4, 0], ['u32', 24, 26], ['u16', 1, 1]),
      /container keys are not strictly ascending \(4 after 5\)/,
    ],
    [
      'array values out of order',
      () => oneBitmap(0, ...arrayBitmap(0, [3, 2, 4])),
      /values are not strictly ascending \(2 after 3\)/,
    ],
    [
      'a duplicate array value',
      () => oneBitmap(0, ...arrayBitmap(0, [3, 3])),
      /values are not strictly ascending \(3 after 3\)/,
    ],
    [
      'a container offset that lies',
      () => oneBitmap(0, ['u32', 12346, 1], ['u16', 0, 0], ['u32', 17], ['u16', 1]),
      /claims offset 17, found at 16/,
    ],
    [
      'an array container cut short',
      () => oneBitmap(0, ['u32', 12346, 1], ['u16', 0, 99], ['u32', 16], ['u16', 1, 2]),
      /100 values needs 200 bytes/,
    ],
    [
      'overlapping runs',
      // run cookie, 1 container with the run flag, (key 0, card 20), runs [10, 19] and [15, 24]
      () => oneBitmap(0, ['u32', 12347], ['u8', 1], ['u16', 0, 19], ['u16', 2, 10, 9, 15, 9]),
      /run 1 starts at 15, inside or before the previous run/,
    ],
    [
      'a run past 65535',
      () => oneBitmap(0, ['u32', 12347], ['u8', 1], ['u16', 0, 19], ['u16', 1, 65530, 19]),
      /run 0 ends at 65549, past 65535/,
    ],
    [
      'a bitmap container whose bits disagree with its cardinality',
      () =>
        oneBitmap(0, ['u32', 12346, 1], ['u16', 0, 4999], ['u32', 16], ['u32', ...new Array(2048).fill(1)]),
      /holds 2048 values, its header says 5000/,
    ],
    [
      'bytes left after the last bitmap',
      () => frame(concat(le(['u64', 1n], ['u32', 0], ...arrayBitmap(0, [1])), new Uint8Array(12))),
      /12 bytes left after its 1 bitmaps/,
    ],
  ];

  it.each(cases)('refuses %s', (_name, make, message) => {
    // Prepare
    const blob = make();

    // Act
    const act = () => parseDeletionVector(blob);

    // Assess
    expect(act).toThrow(CorruptDeletionVectorError);
    expect(act).toThrow(message);
  });

  it('refuses containers claiming more positions than the metadata before decoding them', () => {
    // Prepare: 14 bytes of runs claiming all 65536 values of each of two containers, record_count 10
    const blob = oneBitmap(
      0,
      ['u32', 12347 | (1 << 16)],
      ['u8', 3],
      ['u16', 0, 65535, 1, 65535],
      ['u16', 1, 0, 65535],
      ['u16', 1, 0, 65535],
    );

    // Act / Assess
    expect(() => parseDeletionVector(blob, 10)).toThrow(
      /containers claim 131072 values, more than the 10 expected/,
    );
    expect(parseDeletionVector(blob).cardinality).toBe(131072);
  });

  it('refuses a vector whose cardinality disagrees with its metadata (record_count)', () => {
    expect(() => parseDeletionVector(twoBlob, 3)).toThrow(/holds 2 positions, its metadata says 3/);
    expect(parseDeletionVector(twoBlob, 2n).cardinality).toBe(2);
  });
});
