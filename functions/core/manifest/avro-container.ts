/**
 * Avro object container files (Avro spec, "Object Container Files"): a header (magic `Obj\x01`,
 * a metadata map, a 16-byte sync marker), then blocks of records, each block followed by the sync marker.
 *
 * The framing is written by hand (avsc still encodes every value: header record, block counts, records)
 * because avsc 5.7.9's container support does not fit: its BlockEncoder/BlockDecoder are Node streams,
 * and BlockEncoder either parses a raw schema with avsc's default registry (longs as JS numbers, so ids
 * past 2^53 are corrupted) or, given a ready `Type` with a bigint long, writes the header's
 * `avro.schema` from that Type — which has forgotten every Iceberg `field-id`. (Checked in
 * node_modules/avsc/lib/containers.js: `Type.forSchema(schema)` with no options, and
 * `type.getSchema({exportAttrs: true})`, which drops unknown field attributes.)
 */
import { randomBytes } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import avro from 'avsc';
import { ValidationError } from '../errors.js';
import { type AvroSchema, avroTypeOf } from './avro-type.js';

export type AvroCodec = 'null' | 'deflate';

const MAGIC = Buffer.from('Obj\x01', 'latin1');
const SYNC_SIZE = 16;
/** Avro Java's default sync interval: a block is closed once its records reach this many bytes. */
const DEFAULT_BLOCK_SIZE_BYTES = 64_000;

// Neither type holds a long that can exceed 2^53, so avsc's default registry is fine here.
const headerType = avro.Type.forSchema({
  type: 'record',
  name: 'org.apache.avro.file.Header',
  fields: [
    { name: 'magic', type: { type: 'fixed', name: 'Magic', size: 4 } },
    { name: 'meta', type: { type: 'map', values: 'bytes' } },
    { name: 'sync', type: { type: 'fixed', name: 'Sync', size: SYNC_SIZE } },
  ],
});
const countType = avro.Type.forSchema('long');
/**
 * The block buffer, kept for the next container: encoding never yields (no await), and a block leaves
 * it only as a copy (deflated or copied), so one buffer serves every call.
 */
let scratch = Buffer.allocUnsafe(DEFAULT_BLOCK_SIZE_BYTES + 1024);
const MAX_SCRATCH_BYTES = 4 * 1024 * 1024;

export interface EncodeAvroContainerOptions {
  /** Raw schema, written verbatim as `avro.schema` (so Iceberg's id attributes survive). */
  schema: AvroSchema;
  records: readonly unknown[];
  /** Extra header metadata (`avro.schema` and `avro.codec` are set here and may not be given). */
  metadata: Record<string, string>;
  codec: AvroCodec;
  /** Uncompressed bytes after which a block is closed. @default 64000 */
  blockSizeBytes?: number;
  /** @default 16 random bytes */
  syncMarker?: Uint8Array;
}

export interface AvroContainer {
  /** Header metadata, values decoded as UTF-8 (Iceberg stores only strings there). */
  metadata: Record<string, string>;
  /** The writer's schema, parsed from `avro.schema`. */
  schema: AvroSchema;
  records: unknown[];
  /** How many data blocks the file holds. */
  blocks: number;
}

/**
 * Encodes records as an Avro object container file.
 * @throws ValidationError when a record does not match the schema (the message names the field path)
 */
export function encodeAvroContainer(options: EncodeAvroContainerOptions): Uint8Array {
  const { schema, records, codec } = options;
  const blockSize = options.blockSizeBytes ?? DEFAULT_BLOCK_SIZE_BYTES;
  const sync = Buffer.from(options.syncMarker ?? randomBytes(SYNC_SIZE));
  if (sync.length !== SYNC_SIZE) throw new ValidationError(`an Avro sync marker has ${SYNC_SIZE} bytes`);
  const schemaJson = JSON.stringify(schema);
  const type = avroTypeOf(schema, schemaJson);

  const meta: Record<string, Buffer> = {};
  for (const [key, value] of Object.entries(options.metadata)) meta[key] = Buffer.from(value, 'utf8');
  meta['avro.schema'] = Buffer.from(schemaJson, 'utf8');
  meta['avro.codec'] = Buffer.from(codec, 'utf8');
  const chunks: Buffer[] = [headerType.toBuffer({ magic: MAGIC, meta, sync })];

  // Records are encoded straight into one block buffer (avsc's toBuffer encodes into a 1 KiB scratch
  // buffer and, for a larger record such as a manifest entry with its column statistics, encodes it again).
  let block = scratch.length >= blockSize + 1024 ? scratch : Buffer.allocUnsafe(blockSize + 1024);
  let used = 0;
  let count = 0;
  const flush = () => {
    const raw = block.subarray(0, used);
    const data = codec === 'deflate' ? deflateRawSync(raw) : Buffer.from(raw);
    chunks.push(countType.toBuffer(count), countType.toBuffer(data.length), data, sync);
    used = 0;
    count = 0;
  };
  records.forEach((record, index) => {
    for (;;) {
      const end = encodeRecord(type, record, index, block, used);
      if (end >= 0) {
        used = end;
        break;
      }
      // `-end` bytes short: a larger buffer, and the record again.
      const larger = Buffer.allocUnsafe(2 * block.length - end);
      block.copy(larger, 0, 0, used);
      block = larger;
    }
    count++;
    if (used >= blockSize) flush();
  });
  if (count > 0) flush();
  if (block.length <= MAX_SCRATCH_BYTES) scratch = block;
  return new Uint8Array(Buffer.concat(chunks));
}

/** Encodes a record at `pos`: the position after it, or minus the bytes `buf` lacks for it. */
function encodeRecord(type: avro.Type, record: unknown, index: number, buf: Buffer, pos: number): number {
  try {
    return type.encode(record, buf, pos);
  } catch (error) {
    // avsc's own message names only the value; walk again to name the offending field.
    const paths: string[] = [];
    type.isValid(record, { errorHook: (path: string[]) => paths.push(path.join('.')) });
    const where = paths.length > 0 ? ` at ${paths.join(', ')}` : '';
    throw new ValidationError(`Avro record ${index} does not match its schema${where}`, { cause: error });
  }
}

/**
 * Decodes a whole Avro object container file with the writer's schema from its header.
 * @throws ValidationError when the bytes are not a well-formed container (bad magic, truncated block,
 *   wrong sync marker, unsupported codec, undecodable record)
 */
export function decodeAvroContainer(bytes: Uint8Array): AvroContainer {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf.length < MAGIC.length || !buf.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new ValidationError('not an Avro object container file (bad magic)');
  }
  const header = headerType.decode(buf, 0);
  if (header.offset < 0) throw new ValidationError('truncated Avro header');
  const { meta, sync } = header.value as { meta: Record<string, Buffer>; sync: Buffer };
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(meta)) metadata[key] = value.toString('utf8');

  const codec = metadata['avro.codec'] ?? 'null';
  if (codec !== 'null' && codec !== 'deflate') {
    throw new ValidationError(`unsupported Avro codec '${codec}'`);
  }
  const schemaJson = metadata['avro.schema'];
  if (schemaJson === undefined) throw new ValidationError('Avro header has no avro.schema');
  const schema = JSON.parse(schemaJson) as AvroSchema;
  const type = avroTypeOf(schema, schemaJson);

  const records: unknown[] = [];
  let blocks = 0;
  let pos = header.offset;
  while (pos < buf.length) {
    const count = readCount(buf, pos);
    const size = readCount(buf, count.offset);
    const dataEnd = size.offset + size.value;
    if (dataEnd + SYNC_SIZE > buf.length) throw new ValidationError('truncated Avro block');
    if (!buf.subarray(dataEnd, dataEnd + SYNC_SIZE).equals(sync)) {
      throw new ValidationError(`Avro block at byte ${pos} is not followed by the file's sync marker`);
    }
    const stored = buf.subarray(size.offset, dataEnd);
    const data = codec === 'deflate' ? inflate(stored) : stored;
    let at = 0;
    for (let i = 0; i < count.value; i++) {
      const decoded = decodeRecord(type, data, at, pos);
      records.push(decoded.value);
      at = decoded.offset;
    }
    pos = dataEnd + SYNC_SIZE;
    blocks++;
  }
  return { metadata, schema, records, blocks };
}

function decodeRecord(type: avro.Type, data: Buffer, at: number, blockPos: number) {
  let decoded: { value: unknown; offset: number };
  try {
    decoded = type.decode(data, at);
  } catch (error) {
    throw new ValidationError(`undecodable record in the Avro block at byte ${blockPos}`, { cause: error });
  }
  if (decoded.offset < 0) throw new ValidationError(`Avro block at byte ${blockPos} ends inside a record`);
  return decoded;
}

function readCount(buf: Buffer, pos: number): { value: number; offset: number } {
  const decoded = countType.decode(buf, pos);
  if (decoded.offset < 0 || typeof decoded.value !== 'number' || decoded.value < 0) {
    throw new ValidationError(`malformed Avro block header at byte ${pos}`);
  }
  return { value: decoded.value, offset: decoded.offset };
}

function inflate(data: Buffer): Buffer {
  try {
    return inflateRawSync(data);
  } catch (error) {
    throw new ValidationError('corrupt deflate block in Avro file', { cause: error });
  }
}
