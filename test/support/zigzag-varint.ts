/**
 * A reference encoder for the tests: a 64-bit integer as zig-zag, then a base-128 varint, least
 * significant group first — Avro's long and Thrift compact's i16/i32/i64 alike, written from the specs
 * rather than taken from the code under test.
 */
export function zigzagVarintBytes(n: bigint): number[] {
  let z = BigInt.asUintN(64, (n << 1n) ^ (n >> 63n));
  const out: number[] = [];
  while (z >= 0x80n) {
    out.push(Number(z & 0x7fn) | 0x80);
    z >>= 7n;
  }
  out.push(Number(z));
  return out;
}
