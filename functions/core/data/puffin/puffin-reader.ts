/**
 * Reads Puffin files written by any engine, treating each as hostile: every size and offset is checked
 * against the file's length before it is used, so a damaged or malicious file gets a CorruptPuffinError
 * naming what is wrong, never an out-of-range read or a huge allocation. From bytes in memory, or
 * through a FileIO with ranged reads (a deletion vector is read by its manifest's offset and length,
 * without the footer, as Iceberg Java does).
 */
import type { FileIO } from '../../io/file-io.js';
import { type PuffinFileMetadata, parseFileMetadata } from './file-metadata.js';
import { CorruptPuffinError, UnsupportedPuffinError } from './puffin-errors.js';
import {
  FOOTER_COMPRESSED,
  FOOTER_STRUCT_LENGTH,
  hasMagic,
  MAGIC_LENGTH,
  MIN_FILE_LENGTH,
} from './puffin-format.js';

/**
 * A Puffin file: its bytes, or where it is and its size (a manifest's `file_size_in_bytes`, or a
 * FileIO `stat`): every range is checked against the size before it is read.
 */
export type PuffinSource = Uint8Array | { io: FileIO; location: string; size: number };

export interface PuffinFooter {
  metadata: PuffinFileMetadata;
  /** Bytes from the footer's leading magic to the file's end. */
  footerSize: number;
}

/** How much of a file's tail the first read takes: the footer of a file of a few hundred DVs. */
const TAIL_READ = 64 * 1024;

/**
 * The footer of a Puffin file: its blobs' metadata (types, offsets, lengths, properties) and file
 * properties.
 * @throws CorruptPuffinError for a file too short, a wrong magic (checked at the file's start too when
 *   the read covered it), a footer size past the file, or a footer that is not the spec's JSON
 * @throws UnsupportedPuffinError for a compressed footer or a reserved flag set
 * @throws NotFoundError, TransientIOError from the FileIO
 */
export async function readPuffinFooter(source: PuffinSource): Promise<PuffinFooter> {
  const size = sizeOf(source);
  const name = nameOf(source);
  if (size < MIN_FILE_LENGTH) {
    throw new CorruptPuffinError(
      `${name}: ${size} bytes, shorter than the ${MIN_FILE_LENGTH} of an empty Puffin file`,
    );
  }
  const tailStart = Math.max(0, size - TAIL_READ);
  let tail = await readExactly(source, tailStart, size - tailStart);
  // The leading magic is checked when the read covered it; a second request only for it is not worth it.
  if (tailStart === 0 && !hasMagic(tail, 0)) {
    throw new CorruptPuffinError(`${name}: does not start with the PFA1 magic: not a Puffin file`);
  }
  const struct = tail.byteLength - FOOTER_STRUCT_LENGTH;
  if (!hasMagic(tail, struct + 8))
    throw new CorruptPuffinError(`${name}: no PFA1 magic at its end: not a Puffin file`);
  const view = new DataView(tail.buffer, tail.byteOffset, tail.byteLength);
  const payloadSize = view.getInt32(struct, true);
  const footerSize = MAGIC_LENGTH + payloadSize + FOOTER_STRUCT_LENGTH;
  if (payloadSize < 0 || footerSize > size - MAGIC_LENGTH) {
    throw new CorruptPuffinError(
      `${name}: footer payload size ${payloadSize} does not fit a file of ${size} bytes after its leading magic`,
    );
  }
  checkFlags(tail.subarray(struct + 4, struct + 8), name);
  let footerStart = tail.byteLength - footerSize;
  if (footerStart < 0) {
    tail = await readExactly(source, size - footerSize, footerSize);
    footerStart = 0;
  }
  if (!hasMagic(tail, footerStart)) {
    throw new CorruptPuffinError(
      `${name}: no PFA1 magic where the footer starts (offset ${size - footerSize})`,
    );
  }
  const payload = tail.subarray(footerStart + MAGIC_LENGTH, footerStart + MAGIC_LENGTH + payloadSize);
  return { metadata: parseFileMetadata(payload, size - footerSize, name), footerSize };
}

/**
 * The bytes of one blob, by the offset and length its footer entry or its manifest entry
 * (`content_offset`, `content_size_in_bytes`) gives.
 * @param compressionCodec the blob's `compression-codec`; only an uncompressed blob (none given) is read
 * @throws CorruptPuffinError when the range is not inside the file's blob area or the file is shorter
 * @throws UnsupportedPuffinError for a compressed blob
 * @throws NotFoundError, TransientIOError from the FileIO
 */
export async function readPuffinBlob(
  source: PuffinSource,
  offset: number,
  length: number,
  compressionCodec?: string | null,
): Promise<Uint8Array> {
  const name = nameOf(source);
  if (compressionCodec !== undefined && compressionCodec !== null) {
    throw new UnsupportedPuffinError(
      `${name}: blob at ${offset} is ${compressionCodec}-compressed; floe reads uncompressed blobs only`,
    );
  }
  const size = sizeOf(source);
  const blobsEnd = size - MAGIC_LENGTH - FOOTER_STRUCT_LENGTH;
  if (
    !Number.isSafeInteger(offset) ||
    !Number.isSafeInteger(length) ||
    offset < MAGIC_LENGTH ||
    length < 0 ||
    offset + length > blobsEnd
  ) {
    throw new CorruptPuffinError(
      `${name}: blob at offset ${offset} of length ${length} lies outside the blob area [${MAGIC_LENGTH}, ${blobsEnd}) of a ${size}-byte file`,
    );
  }
  return readExactly(source, offset, length);
}

function checkFlags(flags: Uint8Array, name: string): void {
  if ((flags[0]! & FOOTER_COMPRESSED) !== 0) {
    throw new UnsupportedPuffinError(`${name}: its footer is LZ4-compressed, which floe does not read`);
  }
  for (const [byte, value] of flags.entries()) {
    if (value !== 0) {
      throw new UnsupportedPuffinError(
        `${name}: reserved footer flag bits ${value.toString(2)} set in byte ${byte}`,
      );
    }
  }
}

/** `length` bytes at `offset`, or a CorruptPuffinError when the file holds fewer than its size said. */
async function readExactly(source: PuffinSource, offset: number, length: number): Promise<Uint8Array> {
  const bytes =
    source instanceof Uint8Array
      ? source.subarray(offset, offset + length)
      : await source.io.readRange(source.location, offset, length);
  if (bytes.byteLength !== length) {
    throw new CorruptPuffinError(
      `${nameOf(source)}: ${length} bytes at offset ${offset} asked, ${bytes.byteLength} there: the file is shorter than its size said`,
    );
  }
  return bytes;
}

function sizeOf(source: PuffinSource): number {
  const size = source instanceof Uint8Array ? source.byteLength : source.size;
  if (!Number.isSafeInteger(size) || size < 0)
    throw new CorruptPuffinError(`${nameOf(source)}: size ${size} is not a byte count`);
  return size;
}

function nameOf(source: PuffinSource): string {
  return source instanceof Uint8Array ? 'Puffin file' : `Puffin file ${source.location}`;
}
