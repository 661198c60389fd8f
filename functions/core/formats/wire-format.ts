/**
 * The framing schema-registry serializers put around a payload.
 *
 * Confluent: `0x00 | schema id (int32 big-endian) | payload`; for Protobuf the payload starts with
 * the message indexes — a zig-zag varint count, then that many zig-zag varint indexes (the path to
 * the message type through the file's declarations), with `[0]` shortened to the single byte 0.
 *
 * AWS Glue: `0x03 | compression (0 none, 5 zlib) | schema version UUID (16 bytes) | payload`; for
 * Protobuf the (decompressed) payload starts with one unsigned varint: the message type's index in
 * the name-sorted list of all message types of the file.
 */
import { inflateSync } from 'node:zlib';
import { RecordDecodeError } from '../errors.js';

export const CONFLUENT_MAGIC = 0;
export const GLUE_HEADER_VERSION = 3;
const GLUE_COMPRESSION_NONE = 0;
const GLUE_COMPRESSION_ZLIB = 5;
const GLUE_HEADER_LENGTH = 18;
/** Inflated payloads larger than this are refused (a compressed bomb must not take the Lambda down). */
const MAX_INFLATED_BYTES = 64 * 1024 * 1024;

function fail(message: string): never {
  throw new RecordDecodeError(message, 'decode');
}

export interface ConfluentFrame {
  schemaId: number;
  payload: Uint8Array;
}

/** @throws RecordDecodeError when the bytes are not Confluent-framed */
export function readConfluentFrame(bytes: Uint8Array, what: string): ConfluentFrame {
  if (bytes.length < 5 || bytes[0] !== CONFLUENT_MAGIC) {
    fail(
      bytes.length < 5
        ? `${what} is ${bytes.length} bytes, too short for the Confluent wire format (magic byte + 4-byte schema id)`
        : `${what} is not in the Confluent wire format: first byte is ${bytes[0]}, expected 0`,
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const schemaId = view.getInt32(1, false);
  if (schemaId < 0) fail(`${what} carries a negative schema id ${schemaId}`);
  return { schemaId, payload: bytes.subarray(5) };
}

/** An unsigned LEB128 varint of at most 32 bits. @throws RecordDecodeError when truncated or too long */
export function readUnsignedVarint(bytes: Uint8Array, offset: number, what: string): [number, number] {
  let result = 0;
  for (let i = 0; i < 5; i++) {
    if (offset + i >= bytes.length) fail(`${what}: truncated varint`);
    const b = bytes[offset + i];
    result += (b & 0x7f) * 2 ** (7 * i);
    if ((b & 0x80) === 0) return [result, offset + i + 1];
  }
  return fail(`${what}: varint longer than 5 bytes`);
}

function readZigZag(bytes: Uint8Array, offset: number, what: string): [number, number] {
  const [raw, next] = readUnsignedVarint(bytes, offset, what);
  // Zig-zag: 0, -1, 1, -2, ... ↔ 0, 1, 2, 3, ... (raw stays below 2^32, so >>> is exact)
  return [(raw >>> 1) ^ -(raw & 1), next];
}

/**
 * Confluent's Protobuf message indexes at the start of a payload.
 * @returns the indexes and the offset where the Protobuf message starts
 * @throws RecordDecodeError when they are malformed
 */
export function readConfluentMessageIndexes(payload: Uint8Array, what: string): [number[], number] {
  const label = `${what} Protobuf message indexes`;
  let [count, offset] = readZigZag(payload, 0, label);
  if (count === 0) return [[0], offset];
  if (count < 0 || count > 100) fail(`${label}: implausible count ${count}`);
  const indexes: number[] = [];
  for (let i = 0; i < count; i++) {
    let index: number;
    [index, offset] = readZigZag(payload, offset, label);
    if (index < 0) fail(`${label}: negative index ${index}`);
    indexes.push(index);
  }
  return [indexes, offset];
}

export interface GlueFrame {
  /** The schema version id, as a lower-case canonical UUID. */
  schemaVersionId: string;
  /** The payload, decompressed. */
  payload: Uint8Array;
}

function formatUuid(bytes: Uint8Array): string {
  const hex = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** @throws RecordDecodeError when the bytes are not Glue-framed or do not inflate */
export function readGlueFrame(bytes: Uint8Array, what: string): GlueFrame {
  if (bytes.length < GLUE_HEADER_LENGTH || bytes[0] !== GLUE_HEADER_VERSION) {
    fail(
      bytes.length < GLUE_HEADER_LENGTH
        ? `${what} is ${bytes.length} bytes, too short for the AWS Glue Schema Registry wire format (18-byte header)`
        : `${what} is not in the AWS Glue Schema Registry wire format: first byte is ${bytes[0]}, expected 3`,
    );
  }
  const schemaVersionId = formatUuid(bytes.subarray(2, GLUE_HEADER_LENGTH));
  const body = bytes.subarray(GLUE_HEADER_LENGTH);
  const compression = bytes[1];
  if (compression === GLUE_COMPRESSION_NONE) return { schemaVersionId, payload: body };
  if (compression !== GLUE_COMPRESSION_ZLIB) {
    fail(`${what} has unknown Glue compression byte ${compression} (expected 0 or 5)`);
  }
  try {
    const inflated = inflateSync(body, { maxOutputLength: MAX_INFLATED_BYTES });
    return {
      schemaVersionId,
      payload: new Uint8Array(inflated.buffer, inflated.byteOffset, inflated.byteLength),
    };
  } catch (error) {
    return fail(`${what} does not inflate (Glue zlib compression): ${(error as Error).message}`);
  }
}
