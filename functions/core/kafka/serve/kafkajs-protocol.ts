/**
 * Typed access to kafkajs's protocol building blocks (its `src/protocol` encoder, decoder and magic-v2
 * record batch), which the server side reuses: kafkajs ships no types for them and no server side
 * (it encodes requests and decodes responses), so floe keeps the message layouts it must mirror
 * (decoding requests, encoding responses: messages.ts, fetch-messages.ts) and leaves the primitive
 * encodings — strings, arrays, int64s, varints, record framing and CRC-32C — to kafkajs.
 * `@platformatic/kafka` has the same client-only shape, so it would not remove that mirror either.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

interface KafkaLong {
  toString(): string;
}

/** kafkajs's `src/protocol/decoder.js`. Reads past the end throw RangeError. */
export interface KafkaDecoder {
  offset: number;
  readInt8(): number;
  readInt16(): number;
  readInt32(): number;
  readInt64(): KafkaLong;
  readString(): string | null;
  readBytes(): Buffer | null;
  readUVarInt(): number;
  readTaggedFields(): void;
  canReadBytes(length: number): boolean;
}

/** kafkajs's `src/protocol/encoder.js`. */
export interface KafkaEncoder {
  readonly buffer: Buffer;
  writeInt8(value: number): KafkaEncoder;
  writeInt16(value: number): KafkaEncoder;
  writeInt32(value: number): KafkaEncoder;
  writeInt64(value: bigint | string): KafkaEncoder;
  writeString(value: string | null): KafkaEncoder;
  writeBytes(value: Buffer | null): KafkaEncoder;
  writeBuffer(value: Buffer): KafkaEncoder;
  writeUVarInt(value: number): KafkaEncoder;
  writeEncoder(value: KafkaEncoder): KafkaEncoder;
}

/** CRC-32C (Castagnoli) as an unsigned 32-bit number: kafkajs's table-driven one. */
export const crc32C = require('kafkajs/src/protocol/recordBatch/crc32C') as (buffer: Buffer) => number;
export const Decoder = require('kafkajs/src/protocol/decoder') as new (buffer: Buffer) => KafkaDecoder;
export const Encoder = require('kafkajs/src/protocol/encoder') as new () => KafkaEncoder;

/** The Java client's error codes the server answers with (org.apache.kafka.common.protocol.Errors). */
export const KafkaErrorCode = {
  NONE: 0,
  OFFSET_OUT_OF_RANGE: 1,
  UNKNOWN_TOPIC_OR_PARTITION: 3,
  NOT_LEADER_OR_FOLLOWER: 6,
  COORDINATOR_NOT_AVAILABLE: 15,
  UNSUPPORTED_VERSION: 35,
  FETCH_SESSION_ID_NOT_FOUND: 70,
  UNKNOWN_SERVER_ERROR: -1,
} as const;

/** Reads an int64 as a bigint (kafkajs hands back its own Long). */
export function readLong(decoder: KafkaDecoder): bigint {
  return BigInt(decoder.readInt64().toString());
}

/** Reads an int32-counted array; a null (-1) array reads as empty. @throws RangeError past the end */
export function readArray<T>(decoder: KafkaDecoder, read: (d: KafkaDecoder) => T): T[] {
  const n = decoder.readInt32();
  // A hostile count must not allocate: every element takes at least one byte.
  if (n > 0 && !decoder.canReadBytes(n)) throw new RangeError(`array of ${n} elements past the end`);
  const out: T[] = [];
  for (let i = 0; i < n; i++) out.push(read(decoder));
  return out;
}

export function writeArray<T>(
  encoder: KafkaEncoder,
  items: readonly T[],
  write: (e: KafkaEncoder, item: T) => void,
) {
  encoder.writeInt32(items.length);
  for (const item of items) write(encoder, item);
}

/** One SaslAuthenticate round of a kafkajs authenticator: its request, and how to read the answer. */
export interface SaslRound {
  request: { encode(): Promise<Buffer> };
  response?: { decode(bytes: Buffer): Promise<unknown>; parse(decoded: unknown): Promise<unknown> };
}

/** kafkajs's SASL client mechanisms (`src/broker/saslAuthenticator/*`), fed by the caller's transport. */
export type SaslAuthenticatorProvider = (
  sasl: object,
) => (context: {
  host: string;
  port: number;
  logger: Record<'debug' | 'info' | 'warn' | 'error', (message: string, extra?: object) => void>;
  saslAuthenticate: (round: SaslRound) => Promise<unknown>;
}) => { authenticate(): Promise<void> };

export const SASL_AUTHENTICATORS: Record<string, SaslAuthenticatorProvider> = {
  PLAIN: require('kafkajs/src/broker/saslAuthenticator/plain'),
  'SCRAM-SHA-256': require('kafkajs/src/broker/saslAuthenticator/scram256'),
  'SCRAM-SHA-512': require('kafkajs/src/broker/saslAuthenticator/scram512'),
  OAUTHBEARER: require('kafkajs/src/broker/saslAuthenticator/oauthBearer'),
};
