/**
 * Deletion vectors read without floe's codec: the `deletion-vector-v1` blob's framing (big-endian
 * length, magic D1 D3 39 64, CRC-32 of the vector) checked by hand from the spec, the 64-bit portable
 * Roaring layer walked by hand (count, then key + 32-bit bitmap), each 32-bit bitmap decoded by CRoaring
 * through roaring-wasm.
 */
import { readFile } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { RoaringBitmap32, roaringLibraryInitialize } from 'roaring-wasm';

const MAGIC = [0xd1, 0xd3, 0x39, 0x64];

/** The deleted positions of the vector at `offset` (`size` bytes) of the Puffin file at `path`. */
export async function positionsWithRoaring(path: string, offset: number, size: number): Promise<bigint[]> {
  await roaringLibraryInitialize();
  const blob = (await readFile(path)).subarray(offset, offset + size);
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const length = view.getUint32(0, false);
  if (length !== size - 8) throw new Error(`blob length ${length}, expected ${size - 8}`);
  if (MAGIC.some((b, i) => blob[4 + i] !== b)) throw new Error('not a deletion-vector-v1 blob');
  const vector = blob.subarray(8, 4 + length);
  if (crc32(blob.subarray(4, 4 + length)) !== view.getUint32(4 + length, false)) {
    throw new Error('deletion vector CRC mismatch');
  }
  const vview = new DataView(vector.buffer, vector.byteOffset, vector.byteLength);
  const out: bigint[] = [];
  let at = 8;
  for (let i = 0n; i < vview.getBigUint64(0, true); i++) {
    const key = BigInt(vview.getUint32(at, true));
    const bitmap = RoaringBitmap32.deserialize('portable', vector.subarray(at + 4));
    for (const low of bitmap.toUint32Array()) out.push((key << 32n) | BigInt(low));
    at += 4 + bitmap.getSerializationSizeInBytes('portable');
    bitmap.dispose();
  }
  if (at !== vector.byteLength) throw new Error(`vector has ${vector.byteLength - at} trailing bytes`);
  return out;
}
