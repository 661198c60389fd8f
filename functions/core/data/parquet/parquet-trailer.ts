/**
 * Where a Parquet file's footer lies, from the file's last 8 bytes (the footer's length, then PAR1):
 * what every reader of a file's footer checks first, on the whole file or on a tail fetched by range.
 */

/** "PAR1" read as a little-endian 32-bit word. */
const PAR1 = 0x31524150;

/**
 * The footer's [start, end) in file offsets, or why the trailer says there is none. `tail` is the
 * file's last `tail.byteLength` bytes (at least 8) of a file of `size` bytes: the whole file by default.
 */
export function footerSpan(
  tail: Uint8Array,
  size: number = tail.byteLength,
): { start: number; end: number } | string {
  if (size < 12 || tail.byteLength < 8) return 'too short for a Parquet file';
  const trailer = new DataView(tail.buffer, tail.byteOffset + tail.byteLength - 8, 8);
  if (trailer.getUint32(4, true) !== PAR1) return 'no PAR1 trailer';
  const length = trailer.getUint32(0, true);
  if (length + 12 > size) return 'footer length exceeds the file';
  return { start: size - 8 - length, end: size - 8 };
}

/** Whether the file's first 4 bytes are PAR1. */
export function startsWithPar1(file: Uint8Array): boolean {
  return file.byteLength >= 4 && new DataView(file.buffer, file.byteOffset, 4).getUint32(0, true) === PAR1;
}
