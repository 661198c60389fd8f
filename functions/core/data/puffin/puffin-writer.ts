/**
 * Writes a whole Puffin file in memory: floe's Puffin files hold deletion vectors, a few kilobytes to
 * a few megabytes each, written once and never appended to. Blobs are stored uncompressed (the only
 * form a deletion vector may take) and the footer payload too (Java cannot write an LZ4 one either).
 */
import { ValidationError } from '../../errors.js';
import { fileMetadataToJson, type PuffinBlobMetadata, type PuffinFileMetadata } from './file-metadata.js';
import { FOOTER_STRUCT_LENGTH, MAGIC, MAGIC_LENGTH } from './puffin-format.js';

/** One blob to write: its footer entry but for where it lands, and its bytes. */
export interface PuffinBlob {
  type: string;
  fields: number[];
  'snapshot-id': number | bigint;
  'sequence-number': number | bigint;
  data: Uint8Array;
  properties?: Record<string, string>;
}

export interface WrittenPuffin {
  /** The whole file. */
  bytes: Uint8Array;
  /** The footer as written; `blobs[i]` is blob i's entry with its `offset` and `length` in the file. */
  metadata: PuffinFileMetadata;
  /** Bytes of the footer (leading magic to trailing magic): a reader given it can skip one read. */
  footerSize: number;
}

/**
 * A Puffin file holding `blobs` in the order given, with file `properties` (`created-by` is the one the
 * spec recommends). For the same blobs and properties the bytes are Iceberg Java's PuffinWriter's.
 * @throws ValidationError for a blob without a type, a field id that is not a 32-bit integer, or a
 *   file past 2 GiB
 */
export function writePuffin(
  blobs: readonly PuffinBlob[],
  properties: Record<string, string> = {},
): WrittenPuffin {
  const entries: PuffinBlobMetadata[] = [];
  let offset = MAGIC_LENGTH;
  for (const [i, blob] of blobs.entries()) {
    if (blob.type.length === 0) throw new ValidationError(`Puffin blob ${i} has an empty type`);
    const badField = blob.fields.find((f) => !Number.isInteger(f) || f < -(2 ** 31) || f >= 2 ** 31);
    if (badField !== undefined)
      throw new ValidationError(`Puffin blob ${i}: field id ${badField} is not a 32-bit int`);
    entries.push({
      type: blob.type,
      fields: [...blob.fields],
      'snapshot-id': blob['snapshot-id'],
      'sequence-number': blob['sequence-number'],
      offset,
      length: blob.data.byteLength,
      ...(blob.properties === undefined ? {} : { properties: { ...blob.properties } }),
    });
    offset += blob.data.byteLength;
  }
  const metadata: PuffinFileMetadata =
    Object.keys(properties).length === 0
      ? { blobs: entries }
      : { blobs: entries, properties: { ...properties } };
  const payload = new TextEncoder().encode(fileMetadataToJson(metadata));
  const footerSize = MAGIC_LENGTH + payload.byteLength + FOOTER_STRUCT_LENGTH;
  if (offset + footerSize > 0x7fffffff) {
    throw new ValidationError(`a Puffin file of ${offset + footerSize} bytes is past the 2 GiB floe writes`);
  }
  const bytes = new Uint8Array(offset + footerSize);
  bytes.set(MAGIC, 0);
  for (const [i, blob] of blobs.entries()) bytes.set(blob.data, entries[i]!.offset);
  bytes.set(MAGIC, offset);
  bytes.set(payload, offset + MAGIC_LENGTH);
  const tail = offset + MAGIC_LENGTH + payload.byteLength;
  new DataView(bytes.buffer).setInt32(tail, payload.byteLength, true);
  // Flags (4 zero bytes: nothing compressed) are already zero.
  bytes.set(MAGIC, tail + 8);
  return { bytes, metadata, footerSize };
}
