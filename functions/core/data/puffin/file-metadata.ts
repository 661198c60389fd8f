/**
 * The Puffin footer payload (`FileMetadata` of the Puffin spec) as plain data with the spec's own JSON
 * names, written in the member order Iceberg Java writes (so a file floe writes is byte-identical to
 * Java's for the same blobs) and read back with every member checked: a footer is read from files
 * other engines wrote, and its offsets decide what is read next.
 */
import { ValidationError } from '../../errors.js';
import {
  describeJson,
  expectArray,
  expectObject,
  expectString,
  fail,
  type JsonObject,
  joinPath,
  requireKey,
} from '../../spec/json-check.js';
import { parseJsonLossless, stringifyJson } from '../../spec/json-codec.js';
import { CorruptPuffinError } from './puffin-errors.js';

export interface PuffinBlobMetadata {
  type: string;
  /** Field ids the blob was computed for. */
  fields: number[];
  /** −1 for a deletion vector: the snapshot is not known when its file is written. */
  'snapshot-id': number | bigint;
  'sequence-number': number | bigint;
  /** Where the blob's bytes start in the file. */
  offset: number;
  length: number;
  /** Absent when uncompressed (deletion vectors always are). */
  'compression-codec'?: string;
  properties?: Record<string, string>;
}

export interface PuffinFileMetadata {
  blobs: PuffinBlobMetadata[];
  properties?: Record<string, string>;
}

/** The footer payload's JSON, members in Iceberg Java's order, empty property maps left out as it does. */
export function fileMetadataToJson(metadata: PuffinFileMetadata): string {
  const blobs = metadata.blobs.map((b) => ({
    type: b.type,
    fields: b.fields,
    'snapshot-id': b['snapshot-id'],
    'sequence-number': b['sequence-number'],
    offset: b.offset,
    length: b.length,
    ...(b['compression-codec'] === undefined ? {} : { 'compression-codec': b['compression-codec'] }),
    ...(isEmpty(b.properties) ? {} : { properties: b.properties }),
  }));
  return stringifyJson({
    blobs,
    ...(isEmpty(metadata.properties) ? {} : { properties: metadata.properties }),
  });
}

/**
 * The footer payload's FileMetadata, each blob checked to lie in `[4, blobsEnd)` — after the leading
 * magic and before the footer. `name` (the file) starts every error message.
 * @throws CorruptPuffinError for bytes that are not UTF-8 JSON of the spec's shape, naming the member
 */
export function parseFileMetadata(payload: Uint8Array, blobsEnd: number, name: string): PuffinFileMetadata {
  let json: unknown;
  try {
    json = parseJsonLossless(new TextDecoder('utf-8', { fatal: true }).decode(payload));
  } catch (error) {
    throw new CorruptPuffinError(`${name}: footer is not UTF-8 JSON: ${(error as Error).message}`, {
      cause: error,
    });
  }
  try {
    return readFileMetadata(json, blobsEnd);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    throw new CorruptPuffinError(`${name}: footer ${error.message}`, { cause: error });
  }
}

function readFileMetadata(json: unknown, blobsEnd: number): PuffinFileMetadata {
  const root = expectObject(json, '');
  const blobs = expectArray(requireKey(root, 'blobs', ''), 'blobs').map((b, i) =>
    readBlob(expectObject(b, `blobs[${i}]`), `blobs[${i}]`, blobsEnd),
  );
  const properties = readProperties(root, '');
  return properties === undefined ? { blobs } : { blobs, properties };
}

function readBlob(obj: JsonObject, path: string, blobsEnd: number): PuffinBlobMetadata {
  const type = expectString(requireKey(obj, 'type', path), joinPath(path, 'type'), true);
  const fields = expectArray(requireKey(obj, 'fields', path), joinPath(path, 'fields')).map((f, i) => {
    if (typeof f !== 'number' || !Number.isInteger(f) || f < -(2 ** 31) || f >= 2 ** 31) {
      fail(`${joinPath(path, 'fields')}[${i}]`, `expected a 32-bit field id, got ${describeJson(f)}`);
    }
    return f;
  });
  const snapshotId = expectLong(obj, 'snapshot-id', path);
  const sequenceNumber = expectLong(obj, 'sequence-number', path);
  const offset = expectOffset(obj, 'offset', path);
  const length = expectOffset(obj, 'length', path);
  if (offset < 4 || offset + length > blobsEnd) {
    fail(path, `blob at offset ${offset} of length ${length} lies outside the blob area [4, ${blobsEnd})`);
  }
  const blob: PuffinBlobMetadata = {
    type,
    fields,
    'snapshot-id': snapshotId,
    'sequence-number': sequenceNumber,
    offset,
    length,
  };
  const codec = obj['compression-codec'];
  if (codec !== undefined && codec !== null) {
    blob['compression-codec'] = expectString(codec, joinPath(path, 'compression-codec'));
  }
  const properties = readProperties(obj, path);
  if (properties !== undefined) blob.properties = properties;
  return blob;
}

/** A JSON long: a safe integer as a number, a larger one as the bigint the lossless parse made of it. */
function expectLong(obj: JsonObject, key: string, path: string): number | bigint {
  const value = requireKey(obj, key, path);
  const ok =
    (typeof value === 'number' && Number.isSafeInteger(value)) ||
    (typeof value === 'bigint' && value >= -(2n ** 63n) && value < 2n ** 63n);
  if (!ok) fail(joinPath(path, key), `expected a 64-bit integer, got ${describeJson(value)}`);
  return value as number | bigint;
}

function expectOffset(obj: JsonObject, key: string, path: string): number {
  const value = requireKey(obj, key, path);
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    fail(joinPath(path, key), `expected a byte count ≥ 0, got ${describeJson(value)}`);
  }
  return value;
}

function readProperties(obj: JsonObject, path: string): Record<string, string> | undefined {
  const value = obj.properties;
  if (value === undefined || value === null) return undefined;
  const at = joinPath(path, 'properties');
  // fromEntries defines own members: a key named __proto__ stays a key.
  return Object.fromEntries(
    Object.entries(expectObject(value, at)).map(([key, v]) => [key, expectString(v, joinPath(at, key))]),
  );
}

function isEmpty(properties: Record<string, string> | undefined): boolean {
  return properties === undefined || Object.keys(properties).length === 0;
}
