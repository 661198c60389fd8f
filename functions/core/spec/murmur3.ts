/**
 * MurmurHash3 x86 32-bit, the hash behind Iceberg's bucket transform (spec, Appendix B).
 *
 * Written by hand rather than taken from a package: it is ~30 lines, it must be exactly the spec's
 * hash over raw bytes (most npm murmur packages hash JS strings, or UTF-16 code units, not bytes), and
 * it must return the signed int32 that Iceberg Java (Guava's `murmur3_32_fixed`) returns, which is what
 * the spec's reference values are written in.
 */

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

function mixKey(k: number): number {
  k = Math.imul(k, C1);
  k = (k << 15) | (k >>> 17);
  return Math.imul(k, C2);
}

/**
 * The MurmurHash3 x86_32 hash of `bytes` as a signed 32-bit integer (as Java returns it).
 * Never throws.
 */
export function murmur3x86_32(bytes: Uint8Array, seed = 0): number {
  let h = seed | 0;
  const blocks = bytes.length & ~3;
  for (let i = 0; i < blocks; i += 4) {
    const k = bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24);
    h ^= mixKey(k);
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  // Tail: the last 1–3 bytes, little-endian, mixed without the rotate-and-add step.
  const rest = bytes.length & 3;
  if (rest > 0) {
    let tail = bytes[blocks];
    if (rest >= 2) tail ^= bytes[blocks + 1] << 8;
    if (rest === 3) tail ^= bytes[blocks + 2] << 16;
    h ^= mixKey(tail);
  }
  // Finalisation: fold in the length and avalanche.
  h ^= bytes.length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}
