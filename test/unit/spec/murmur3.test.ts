import { describe, expect, it } from 'vitest';
import { murmur3x86_32 } from '../../../functions/core/spec/murmur3.js';

const utf8 = (s: string) => new TextEncoder().encode(s);

// Reference values from the canonical MurmurHash3 test set, cross-checked with Python's mmh3
// (`mmh3.hash(bytes, seed, signed=True)`): every tail length 0–3 and more than one block.
const VECTORS: Array<{ input: Uint8Array; seed: number; hash: number }> = [
  { input: utf8(''), seed: 0, hash: 0 },
  { input: utf8(''), seed: 1, hash: 1364076727 },
  { input: utf8('a'), seed: 0x9747b28c, hash: 2141232806 },
  { input: utf8('aa'), seed: 0x9747b28c, hash: 1562449702 },
  { input: utf8('aaa'), seed: 0x9747b28c, hash: 675152176 },
  { input: utf8('aaaa'), seed: 0x9747b28c, hash: 1519878282 },
  { input: utf8('abc'), seed: 0x9747b28c, hash: -934649123 },
  { input: utf8('Hello, world!'), seed: 0x9747b28c, hash: 612912314 },
  { input: utf8('The quick brown fox jumps over the lazy dog'), seed: 0, hash: 776992547 },
  { input: Uint8Array.of(0xff, 0xfe, 0x80), seed: 0, hash: 315318047 },
];

describe('murmur3x86_32', () => {
  it.each(VECTORS)('hashes $input.length bytes with seed $seed to $hash', ({ input, seed, hash }) => {
    // Act
    const result = murmur3x86_32(input, seed);

    // Assess
    expect(result).toBe(hash);
  });

  it('returns a signed 32-bit integer for any input', () => {
    // Prepare
    const inputs = Array.from({ length: 64 }, (_, n) =>
      Uint8Array.from({ length: n }, (_, i) => (i * 37 + n) & 0xff),
    );

    // Act
    const hashes = inputs.map((bytes) => murmur3x86_32(bytes));

    // Assess
    for (const h of hashes) {
      expect(Number.isInteger(h)).toBe(true);
      expect(h).toBeGreaterThanOrEqual(-(2 ** 31));
      expect(h).toBeLessThan(2 ** 31);
    }
    expect(new Set(hashes).size).toBe(hashes.length);
  });
});
