import { randomFillSync } from 'node:crypto';

/**
 * A UUIDv7 (RFC 9562): 48-bit Unix milliseconds, version 7, 74 random bits. The REST spec asks for v7
 * `Idempotency-Key`s; node:crypto only makes v4, and this is 10 lines, so no dependency for it.
 */
export function newIdempotencyKey(nowMs: number = Date.now()): string {
  const bytes = randomFillSync(new Uint8Array(16));
  let ms = nowMs;
  for (let i = 5; i >= 0; i--) {
    bytes[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  bytes[6] = (bytes[6] & 0x0f) | 0x70; // version 7
  bytes[8] = (bytes[8] & 0x3f) | 0x80; // variant 10
  const hex = Buffer.from(bytes).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
