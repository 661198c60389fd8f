/**
 * Kafka's framing (a 4-byte size, then the message) and the request header: what a proxy reads of
 * every request before it knows where the request goes. Hand-written: kafkajs frames only its own
 * client connections and never parses a request header (it writes them).
 */
import { Decoder, type KafkaDecoder } from './kafkajs-protocol.js';

/** A request larger than this is refused (the broker default `socket.request.max.bytes` is 100 MiB). */
export const MAX_FRAME_BYTES = 100 * 1024 * 1024;

/** Splits a byte stream into frames. @throws RangeError for a frame size outside 0..MAX_FRAME_BYTES */
export class FrameReader {
  private pending: Buffer[] = [];

  push(chunk: Buffer): Buffer[] {
    this.pending.push(chunk);
    const frames: Buffer[] = [];
    let data = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending);
    while (data.length >= 4) {
      const length = data.readInt32BE(0);
      if (length < 0 || length > MAX_FRAME_BYTES) throw new RangeError(`frame of ${length} bytes`);
      if (data.length < 4 + length) break;
      frames.push(data.subarray(4, 4 + length));
      data = data.subarray(4 + length);
    }
    this.pending = data.length > 0 ? [data] : [];
    return frames;
  }
}

/** A frame's bytes with the size prefix. */
export function framed(message: Buffer): Buffer {
  const size = Buffer.alloc(4);
  size.writeInt32BE(message.length, 0);
  return Buffer.concat([size, message]);
}

export const ApiKey = {
  Produce: 0,
  Fetch: 1,
  ListOffsets: 2,
  Metadata: 3,
  OffsetCommit: 8,
  OffsetFetch: 9,
  FindCoordinator: 10,
  JoinGroup: 11,
  Heartbeat: 12,
  LeaveGroup: 13,
  SyncGroup: 14,
  SaslHandshake: 17,
  ApiVersions: 18,
  SaslAuthenticate: 36,
} as const;

/** The first version of each API whose request header carries tagged fields (header v2). */
const FIRST_FLEXIBLE: Record<number, number> = {
  [ApiKey.Produce]: 9,
  [ApiKey.Fetch]: 12,
  [ApiKey.ListOffsets]: 6,
  [ApiKey.Metadata]: 9,
  [ApiKey.OffsetCommit]: 8,
  [ApiKey.OffsetFetch]: 6,
  [ApiKey.FindCoordinator]: 3,
  [ApiKey.JoinGroup]: 6,
  [ApiKey.Heartbeat]: 4,
  [ApiKey.LeaveGroup]: 4,
  [ApiKey.SyncGroup]: 4,
  [ApiKey.ApiVersions]: 3,
  [ApiKey.SaslAuthenticate]: 2,
};

export function isFlexible(apiKey: number, version: number): boolean {
  const first = FIRST_FLEXIBLE[apiKey];
  return first !== undefined && version >= first;
}

export interface RequestHeader {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
  /** A decoder positioned at the request body. */
  body: KafkaDecoder;
}

/** @throws RangeError for a frame too short for its header */
export function parseRequestHeader(frame: Buffer): RequestHeader {
  const d = new Decoder(frame);
  const apiKey = d.readInt16();
  const apiVersion = d.readInt16();
  const correlationId = d.readInt32();
  const clientId = d.readString();
  if (isFlexible(apiKey, apiVersion)) d.readTaggedFields();
  return { apiKey, apiVersion, correlationId, clientId, body: d };
}

/** The frame with another correlation id (bytes 4..8 of every request and response header v0+). */
export function withCorrelationId(frame: Buffer, correlationId: number, at = 4): Buffer {
  const copy = Buffer.from(frame);
  copy.writeInt32BE(correlationId, at);
  return copy;
}

/**
 * The group a coordinator-led request names: its first field, a string, compact in flexible versions.
 * @throws RangeError for a body too short
 */
export function readGroupId(header: RequestHeader): string {
  const d = header.body;
  if (!isFlexible(header.apiKey, header.apiVersion)) return d.readString() ?? '';
  const n = d.readUVarInt() - 1;
  if (n < 0 || !d.canReadBytes(n)) throw new RangeError('group id past the end');
  const start = d.offset;
  d.offset += n;
  return (d as unknown as { buffer: Buffer }).buffer.toString('utf8', start, start + n);
}
