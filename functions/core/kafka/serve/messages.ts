/**
 * The mirror image of kafkajs's request encoders and response decoders for the messages the proxy
 * rewrites (ApiVersions, Metadata, FindCoordinator, ListOffsets), at the non-flexible versions it
 * advertises (ranges in versions.ts). Field layouts follow Kafka's message JSON (clients/src/main/
 * resources/common/message); each decoder reads exactly what its encoder writes, so a response from
 * upstream can be decoded, rewritten and encoded back at the client's version.
 */
import {
  Encoder,
  type KafkaDecoder,
  type KafkaEncoder,
  readArray,
  readLong,
  writeArray,
} from './kafkajs-protocol.js';

export interface ApiRange {
  apiKey: number;
  min: number;
  max: number;
}

/** ApiVersions v0–v3 response (v3 is flexible in its body; the response header stays v0). */
export function encodeApiVersionsResponse(version: number, errorCode: number, apis: ApiRange[]): Buffer {
  const e = new Encoder().writeInt16(errorCode);
  if (version >= 3) {
    e.writeUVarInt(apis.length + 1);
    for (const a of apis) e.writeInt16(a.apiKey).writeInt16(a.min).writeInt16(a.max).writeUVarInt(0);
  } else {
    writeArray(e, apis, (w, a) => w.writeInt16(a.apiKey).writeInt16(a.min).writeInt16(a.max));
  }
  if (version >= 1) e.writeInt32(0);
  if (version >= 3) e.writeUVarInt(0);
  return e.buffer;
}

/** @throws RangeError for a truncated answer */
export function decodeApiVersionsV0(d: KafkaDecoder): { errorCode: number; apis: ApiRange[] } {
  const errorCode = d.readInt16();
  const apis = readArray(d, (r) => ({ apiKey: r.readInt16(), min: r.readInt16(), max: r.readInt16() }));
  return { errorCode, apis };
}

export interface MetadataBroker {
  nodeId: number;
  host: string;
  port: number;
  rack: string | null;
}

export interface MetadataPartition {
  errorCode: number;
  partition: number;
  leader: number;
  leaderEpoch: number;
  replicas: number[];
  isr: number[];
  offline: number[];
}

export interface MetadataTopic {
  errorCode: number;
  name: string;
  internal: boolean;
  partitions: MetadataPartition[];
  authorizedOperations: number;
}

export interface MetadataResponse {
  throttleMs: number;
  brokers: MetadataBroker[];
  clusterId: string | null;
  controllerId: number;
  topics: MetadataTopic[];
  clusterAuthorizedOperations: number;
}

const readInts = (d: KafkaDecoder) => readArray(d, (r) => r.readInt32());
const writeInts = (e: KafkaEncoder, xs: number[]) => writeArray(e, xs, (w, x) => w.writeInt32(x));

/** Metadata v1–v8 response. @throws RangeError for a truncated answer */
export function decodeMetadataResponse(version: number, d: KafkaDecoder): MetadataResponse {
  const throttleMs = version >= 3 ? d.readInt32() : 0;
  const brokers = readArray(d, (r) => ({
    nodeId: r.readInt32(),
    host: r.readString() ?? '',
    port: r.readInt32(),
    rack: r.readString(),
  }));
  const clusterId = version >= 2 ? d.readString() : null;
  const controllerId = d.readInt32();
  const topics = readArray(d, (r) => ({
    errorCode: r.readInt16(),
    name: r.readString() ?? '',
    internal: r.readInt8() !== 0,
    partitions: readArray(r, (p) => ({
      errorCode: p.readInt16(),
      partition: p.readInt32(),
      leader: p.readInt32(),
      leaderEpoch: version >= 7 ? p.readInt32() : -1,
      replicas: readInts(p),
      isr: readInts(p),
      offline: version >= 5 ? readInts(p) : [],
    })),
    authorizedOperations: version >= 8 ? r.readInt32() : -2147483648,
  }));
  const clusterAuthorizedOperations = version >= 8 ? d.readInt32() : -2147483648;
  return { throttleMs, brokers, clusterId, controllerId, topics, clusterAuthorizedOperations };
}

export function encodeMetadataResponse(version: number, m: MetadataResponse): Buffer {
  const e = new Encoder();
  if (version >= 3) e.writeInt32(m.throttleMs);
  writeArray(e, m.brokers, (w, b) =>
    w.writeInt32(b.nodeId).writeString(b.host).writeInt32(b.port).writeString(b.rack),
  );
  if (version >= 2) e.writeString(m.clusterId);
  e.writeInt32(m.controllerId);
  writeArray(e, m.topics, (w, t) => {
    w.writeInt16(t.errorCode)
      .writeString(t.name)
      .writeInt8(t.internal ? 1 : 0);
    writeArray(w, t.partitions, (pw, p) => {
      pw.writeInt16(p.errorCode).writeInt32(p.partition).writeInt32(p.leader);
      if (version >= 7) pw.writeInt32(p.leaderEpoch);
      writeInts(pw, p.replicas);
      writeInts(pw, p.isr);
      if (version >= 5) writeInts(pw, p.offline);
    });
    if (version >= 8) w.writeInt32(t.authorizedOperations);
  });
  if (version >= 8) e.writeInt32(m.clusterAuthorizedOperations);
  return e.buffer;
}

/** A Metadata v1 request body: null topics asks for every topic. */
export function encodeMetadataRequestV1(topics: string[] | null): Buffer {
  const e = new Encoder();
  if (topics === null) e.writeInt32(-1);
  else writeArray(e, topics, (w, t) => w.writeString(t));
  return e.buffer;
}

export interface FindCoordinatorResponse {
  throttleMs: number;
  errorCode: number;
  errorMessage: string | null;
  nodeId: number;
  host: string;
  port: number;
}

/** FindCoordinator v0–v2 request: the key (a group id unless key type 1, a transactional id). */
export function decodeFindCoordinatorRequest(
  version: number,
  d: KafkaDecoder,
): { key: string; keyType: number } {
  const key = d.readString() ?? '';
  return { key, keyType: version >= 1 ? d.readInt8() : 0 };
}

export function encodeFindCoordinatorRequest(version: number, key: string): Buffer {
  const e = new Encoder().writeString(key);
  if (version >= 1) e.writeInt8(0);
  return e.buffer;
}

/** @throws RangeError for a truncated answer */
export function decodeFindCoordinatorResponse(version: number, d: KafkaDecoder): FindCoordinatorResponse {
  const throttleMs = version >= 1 ? d.readInt32() : 0;
  const errorCode = d.readInt16();
  const errorMessage = version >= 1 ? d.readString() : null;
  return {
    throttleMs,
    errorCode,
    errorMessage,
    nodeId: d.readInt32(),
    host: d.readString() ?? '',
    port: d.readInt32(),
  };
}

export function encodeFindCoordinatorResponse(version: number, r: FindCoordinatorResponse): Buffer {
  const e = new Encoder();
  if (version >= 1) e.writeInt32(r.throttleMs);
  e.writeInt16(r.errorCode);
  if (version >= 1) e.writeString(r.errorMessage);
  return e.writeInt32(r.nodeId).writeString(r.host).writeInt32(r.port).buffer;
}

export interface ListOffsetsPartitionRequest {
  partition: number;
  currentLeaderEpoch: number;
  timestamp: bigint;
}

export interface ListOffsetsRequest {
  replicaId: number;
  isolationLevel: number;
  topics: { name: string; partitions: ListOffsetsPartitionRequest[] }[];
}

/** ListOffsets v1–v5 request. @throws RangeError for a truncated request */
export function decodeListOffsetsRequest(version: number, d: KafkaDecoder): ListOffsetsRequest {
  const replicaId = d.readInt32();
  const isolationLevel = version >= 2 ? d.readInt8() : 0;
  const topics = readArray(d, (r) => ({
    name: r.readString() ?? '',
    partitions: readArray(r, (p) => ({
      partition: p.readInt32(),
      currentLeaderEpoch: version >= 4 ? p.readInt32() : -1,
      timestamp: readLong(p),
    })),
  }));
  return { replicaId, isolationLevel, topics };
}

export function encodeListOffsetsRequest(version: number, r: ListOffsetsRequest): Buffer {
  const e = new Encoder().writeInt32(r.replicaId);
  if (version >= 2) e.writeInt8(r.isolationLevel);
  writeArray(e, r.topics, (w, t) => {
    w.writeString(t.name);
    writeArray(w, t.partitions, (pw, p) => {
      pw.writeInt32(p.partition);
      if (version >= 4) pw.writeInt32(p.currentLeaderEpoch);
      pw.writeInt64(p.timestamp);
    });
  });
  return e.buffer;
}

export interface ListOffsetsPartitionResponse {
  partition: number;
  errorCode: number;
  timestamp: bigint;
  offset: bigint;
  leaderEpoch: number;
}

export interface ListOffsetsResponse {
  throttleMs: number;
  topics: { name: string; partitions: ListOffsetsPartitionResponse[] }[];
}

/** @throws RangeError for a truncated answer */
export function decodeListOffsetsResponse(version: number, d: KafkaDecoder): ListOffsetsResponse {
  const throttleMs = version >= 2 ? d.readInt32() : 0;
  const topics = readArray(d, (r) => ({
    name: r.readString() ?? '',
    partitions: readArray(r, (p) => ({
      partition: p.readInt32(),
      errorCode: p.readInt16(),
      timestamp: readLong(p),
      offset: readLong(p),
      leaderEpoch: version >= 4 ? p.readInt32() : -1,
    })),
  }));
  return { throttleMs, topics };
}

export function encodeListOffsetsResponse(version: number, r: ListOffsetsResponse): Buffer {
  const e = new Encoder();
  if (version >= 2) e.writeInt32(r.throttleMs);
  writeArray(e, r.topics, (w, t) => {
    w.writeString(t.name);
    writeArray(w, t.partitions, (pw, p) => {
      pw.writeInt32(p.partition).writeInt16(p.errorCode).writeInt64(p.timestamp).writeInt64(p.offset);
      if (version >= 4) pw.writeInt32(p.leaderEpoch);
    });
  });
  return e.buffer;
}
