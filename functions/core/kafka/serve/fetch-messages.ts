/**
 * Fetch v4–v11 request and response, both directions (the proxy decodes a client's fetch, forwards a
 * part of it, decodes the broker's answer and merges it with the partitions it answers itself).
 * Record sets stay raw bytes: a forwarded partition's batches reach the client exactly as the broker
 * sent them (compression, transaction markers and all).
 */
import { Encoder, type KafkaDecoder, readArray, readLong, writeArray } from './kafkajs-protocol.js';

export interface FetchPartitionRequest {
  partition: number;
  currentLeaderEpoch: number;
  fetchOffset: bigint;
  logStartOffset: bigint;
  maxBytes: number;
}

export interface FetchTopicRequest {
  topic: string;
  partitions: FetchPartitionRequest[];
}

export interface FetchRequest {
  replicaId: number;
  maxWaitMs: number;
  minBytes: number;
  maxBytes: number;
  isolationLevel: number;
  sessionId: number;
  sessionEpoch: number;
  topics: FetchTopicRequest[];
  forgotten: { topic: string; partitions: number[] }[];
  rackId: string;
}

/** @throws RangeError for a truncated request */
export function decodeFetchRequest(version: number, d: KafkaDecoder): FetchRequest {
  const replicaId = d.readInt32();
  const maxWaitMs = d.readInt32();
  const minBytes = d.readInt32();
  const maxBytes = d.readInt32();
  const isolationLevel = d.readInt8();
  const sessionId = version >= 7 ? d.readInt32() : 0;
  const sessionEpoch = version >= 7 ? d.readInt32() : -1;
  const topics = readArray(d, (r) => ({
    topic: r.readString() ?? '',
    partitions: readArray(r, (p) => ({
      partition: p.readInt32(),
      currentLeaderEpoch: version >= 9 ? p.readInt32() : -1,
      fetchOffset: readLong(p),
      logStartOffset: version >= 5 ? readLong(p) : -1n,
      maxBytes: p.readInt32(),
    })),
  }));
  const forgotten =
    version >= 7
      ? readArray(d, (r) => ({ topic: r.readString() ?? '', partitions: readArray(r, (p) => p.readInt32()) }))
      : [];
  const rackId = version >= 11 ? (d.readString() ?? '') : '';
  return {
    replicaId,
    maxWaitMs,
    minBytes,
    maxBytes,
    isolationLevel,
    sessionId,
    sessionEpoch,
    topics,
    forgotten,
    rackId,
  };
}

export function encodeFetchRequest(version: number, f: FetchRequest): Buffer {
  const e = new Encoder()
    .writeInt32(f.replicaId)
    .writeInt32(f.maxWaitMs)
    .writeInt32(f.minBytes)
    .writeInt32(f.maxBytes)
    .writeInt8(f.isolationLevel);
  if (version >= 7) e.writeInt32(f.sessionId).writeInt32(f.sessionEpoch);
  writeArray(e, f.topics, (w, t) => {
    w.writeString(t.topic);
    writeArray(w, t.partitions, (pw, p) => {
      pw.writeInt32(p.partition);
      if (version >= 9) pw.writeInt32(p.currentLeaderEpoch);
      pw.writeInt64(p.fetchOffset);
      if (version >= 5) pw.writeInt64(p.logStartOffset);
      pw.writeInt32(p.maxBytes);
    });
  });
  if (version >= 7)
    writeArray(e, f.forgotten, (w, t) => {
      w.writeString(t.topic);
      writeArray(w, t.partitions, (pw, p) => pw.writeInt32(p));
    });
  if (version >= 11) e.writeString(f.rackId);
  return e.buffer;
}

export interface FetchPartitionResponse {
  partition: number;
  errorCode: number;
  highWatermark: bigint;
  lastStableOffset: bigint;
  logStartOffset: bigint;
  abortedTransactions: { producerId: bigint; firstOffset: bigint }[] | null;
  preferredReadReplica: number;
  records: Buffer | null;
}

export interface FetchTopicResponse {
  topic: string;
  partitions: FetchPartitionResponse[];
}

export interface FetchResponse {
  throttleMs: number;
  errorCode: number;
  sessionId: number;
  topics: FetchTopicResponse[];
}

/** @throws RangeError for a truncated answer */
export function decodeFetchResponse(version: number, d: KafkaDecoder): FetchResponse {
  const throttleMs = d.readInt32();
  const errorCode = version >= 7 ? d.readInt16() : 0;
  const sessionId = version >= 7 ? d.readInt32() : 0;
  const topics = readArray(d, (r) => ({
    topic: r.readString() ?? '',
    partitions: readArray(r, (p) => {
      const partition = p.readInt32();
      const errorCode = p.readInt16();
      const highWatermark = readLong(p);
      const lastStableOffset = readLong(p);
      const logStartOffset = version >= 5 ? readLong(p) : -1n;
      const count = p.readInt32();
      const abortedTransactions: FetchPartitionResponse['abortedTransactions'] = count < 0 ? null : [];
      if (count > 0 && !p.canReadBytes(count)) throw new RangeError('aborted transactions past the end');
      for (let i = 0; i < count; i++)
        abortedTransactions?.push({ producerId: readLong(p), firstOffset: readLong(p) });
      const preferredReadReplica = version >= 11 ? p.readInt32() : -1;
      return {
        partition,
        errorCode,
        highWatermark,
        lastStableOffset,
        logStartOffset,
        abortedTransactions,
        preferredReadReplica,
        records: p.readBytes(),
      };
    }),
  }));
  return { throttleMs, errorCode, sessionId, topics };
}

export function encodeFetchResponse(version: number, f: FetchResponse): Buffer {
  const e = new Encoder().writeInt32(f.throttleMs);
  if (version >= 7) e.writeInt16(f.errorCode).writeInt32(f.sessionId);
  writeArray(e, f.topics, (w, t) => {
    w.writeString(t.topic);
    writeArray(w, t.partitions, (pw, p) => {
      pw.writeInt32(p.partition)
        .writeInt16(p.errorCode)
        .writeInt64(p.highWatermark)
        .writeInt64(p.lastStableOffset);
      if (version >= 5) pw.writeInt64(p.logStartOffset);
      if (p.abortedTransactions === null) pw.writeInt32(-1);
      else
        writeArray(pw, p.abortedTransactions, (aw, a) =>
          aw.writeInt64(a.producerId).writeInt64(a.firstOffset),
        );
      if (version >= 11) pw.writeInt32(p.preferredReadReplica);
      pw.writeBytes(p.records);
    });
  });
  return e.buffer;
}
