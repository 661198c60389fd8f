/**
 * The fixed parts of a Puffin file (Puffin spec, "File structure"):
 *   Magic Blob₁ … Blobₙ Magic FooterPayload FooterPayloadSize Flags Magic
 * with Magic = `PFA1`, FooterPayloadSize a signed 32-bit little-endian int and Flags 4 bytes, of which
 * only bit 0 of byte 0 (footer payload LZ4-compressed) is defined.
 */

export const MAGIC = new Uint8Array([0x50, 0x46, 0x41, 0x31]);
export const MAGIC_LENGTH = 4;
/** FooterPayloadSize, Flags, Magic: the fixed-length tail of every Puffin file. */
export const FOOTER_STRUCT_LENGTH = 12;
/** The bit of flag byte 0 that says the footer payload is LZ4-compressed. */
export const FOOTER_COMPRESSED = 0x01;
/** The smallest well-formed file: leading magic and an empty footer around an empty payload. */
export const MIN_FILE_LENGTH = MAGIC_LENGTH + MAGIC_LENGTH + FOOTER_STRUCT_LENGTH;

/** Whether `bytes` holds the magic at `offset`. */
export function hasMagic(bytes: Uint8Array, offset: number): boolean {
  return (
    offset >= 0 && offset + MAGIC_LENGTH <= bytes.byteLength && MAGIC.every((b, i) => bytes[offset + i] === b)
  );
}
