/**
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as Kafka's record batches carry it.
 *
 * Written by hand: kafkajs's (and @aws-crypto/crc32c's) take one table lookup per byte, and the
 * packages that go faster are native addons (SSE4.2), which Lambda's nodejs22.x runtime would need
 * built for it. Slicing-by-8 (eight 256-entry tables, eight bytes per step) is about 3× the bytewise
 * loop in V8, and checksumming was most of what encoding a cold batch cost after its records.
 */

/** T[256k + b]: the CRC of byte b followed by k zero bytes (one array: V8 indexes it faster than eight). */
const T = new Int32Array(8 * 256);
for (let b = 0; b < 256; b++) {
  let c = b;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  T[b] = c;
}
for (let b = 0; b < 256; b++) {
  let c = T[b];
  for (let k = 1; k < 8; k++) {
    c = T[c & 0xff] ^ (c >>> 8);
    T[256 * k + b] = c;
  }
}

/** The CRC-32C of `bytes`, as an unsigned 32-bit number. Never throws. */
export function crc32c(bytes: Uint8Array): number {
  let crc = -1;
  let i = 0;
  const n = bytes.length;
  const end8 = n - (n % 8);
  while (i < end8) {
    const lo = crc ^ (bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24));
    crc =
      T[1792 + (lo & 0xff)] ^
      T[1536 + ((lo >>> 8) & 0xff)] ^
      T[1280 + ((lo >>> 16) & 0xff)] ^
      T[1024 + (lo >>> 24)] ^
      T[768 + bytes[i + 4]] ^
      T[512 + bytes[i + 5]] ^
      T[256 + bytes[i + 6]] ^
      T[bytes[i + 7]];
    i += 8;
  }
  while (i < n) crc = T[(crc ^ bytes[i++]) & 0xff] ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}
