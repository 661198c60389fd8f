/**
 * Producer-side helpers for format tests: payloads are encoded with the real libraries (avsc,
 * protobufjs) and framed as the serializers frame them.
 */
import { deflateSync } from 'node:zlib';
import avro from 'avsc';
import protobuf from 'protobufjs';
import type { RawRecord } from '../../../functions/core/records/esm-event.js';

/** avsc long as bigint on the producer side, so values beyond 2^53 can be written. */
const producerLong = avro.types.LongType.__with({
  fromBuffer: (buf: Buffer) => buf.readBigInt64LE(0),
  toBuffer: (n: bigint) => {
    const buf = Buffer.alloc(8);
    buf.writeBigInt64LE(n);
    return buf;
  },
  fromJSON: (json: unknown) => BigInt(json as string),
  toJSON: (n: bigint) => n.toString(),
  isValid: (n: unknown) => typeof n === 'bigint',
  compare: (a: bigint, b: bigint) => (a === b ? 0 : a < b ? -1 : 1),
});

/** A producer's avsc type (longs as bigint, unions wrapped, logical types left to the caller). */
export function producerAvroType(schema: unknown, registry: Record<string, avro.Type> = {}): avro.Type {
  return avro.Type.forSchema(schema as avro.Schema, {
    registry,
    wrapUnions: 'always',
    typeHook: (s) =>
      s === 'long' || (typeof s === 'object' && s !== null && (s as { type?: unknown }).type === 'long')
        ? producerLong
        : undefined,
  });
}

/** `0x00 | id (int32 BE) | payload` */
export function confluentFrame(schemaId: number, payload: Uint8Array, messageIndexes?: number[]): Uint8Array {
  const header = Buffer.alloc(5);
  header.writeUInt8(0, 0);
  header.writeInt32BE(schemaId, 1);
  let indexBytes: Uint8Array = new Uint8Array();
  if (messageIndexes) {
    // Confluent writes zig-zag varints (protobufjs's sint32), and [0] as the single byte 0.
    const w = protobuf.Writer.create();
    if (messageIndexes.length === 1 && messageIndexes[0] === 0) w.sint32(0);
    else {
      w.sint32(messageIndexes.length);
      for (const i of messageIndexes) w.sint32(i);
    }
    indexBytes = w.finish();
  }
  return Buffer.concat([header, indexBytes, payload]);
}

/** `0x03 | compression | UUID (16 bytes) | payload`, zlib-compressed when asked. */
export function glueFrame(
  versionId: string,
  payload: Uint8Array,
  options: { compress?: boolean; messageIndex?: number } = {},
): Uint8Array {
  let body: Uint8Array = payload;
  if (options.messageIndex !== undefined) {
    body = Buffer.concat([protobuf.Writer.create().uint32(options.messageIndex).finish(), payload]);
  }
  if (options.compress) body = deflateSync(body);
  return Buffer.concat([
    Buffer.from([3, options.compress ? 5 : 0]),
    Buffer.from(versionId.replace(/-/g, ''), 'hex'),
    body,
  ]);
}

export function rawRecord(value: Uint8Array | null, extra: Partial<RawRecord> = {}): RawRecord {
  return {
    topic: 'orders',
    partition: 0,
    offset: 1n,
    timestamp: 0,
    timestampType: 'CREATE_TIME',
    key: null,
    value,
    headers: [],
    ...extra,
  };
}

export const valueContext = (record: RawRecord) => ({ topic: record.topic, isKey: false, record });
