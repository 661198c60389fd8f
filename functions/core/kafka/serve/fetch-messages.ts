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

/**
 * A Fetch v4–v11 response, written into one buffer of its exact size: its records are megabytes of
 * cold batches, and kafkajs's encoder grew its buffer by doubling (a zero-filled copy per step).
 * The layout is kafkajs's own (its decoder reads it back).
 * @throws RangeError when a field does not fit its Kafka type
 */
export function encodeFetchResponse(version: number, f: FetchResponse): Buffer {
  let size = 4 + (version >= 7 ? 6 : 0) + 4;
  for (const t of f.topics) {
    size += 2 + Buffer.byteLength(t.topic, 'utf8') + 4;
    for (const p of t.partitions) {
      size += 4 + 2 + 8 + 8 + (version >= 5 ? 8 : 0) + 4 + 16 * (p.abortedTransactions?.length ?? 0);
      size += (version >= 11 ? 4 : 0) + 4 + (p.records?.length ?? 0);
    }
  }
  const out = Buffer.allocUnsafe(size);
  let at = out.writeInt32BE(f.throttleMs, 0);
  if (version >= 7) at = out.writeInt32BE(f.sessionId, out.writeInt16BE(f.errorCode, at));
  at = out.writeInt32BE(f.topics.length, at);
  for (const t of f.topics) {
    const length = Buffer.byteLength(t.topic, 'utf8');
    at = out.writeInt16BE(length, at);
    at += out.write(t.topic, at, length, 'utf8');
    at = out.writeInt32BE(t.partitions.length, at);
    for (const p of t.partitions) {
      at = out.writeInt32BE(p.partition, at);
      at = out.writeInt16BE(p.errorCode, at);
      at = out.writeBigInt64BE(p.highWatermark, at);
      at = out.writeBigInt64BE(p.lastStableOffset, at);
      if (version >= 5) at = out.writeBigInt64BE(p.logStartOffset, at);
      at = out.writeInt32BE(p.abortedTransactions === null ? -1 : p.abortedTransactions.length, at);
      for (const a of p.abortedTransactions ?? []) {
        at = out.writeBigInt64BE(a.producerId, at);
        at = out.writeBigInt64BE(a.firstOffset, at);
      }
      if (version >= 11) at = out.writeInt32BE(p.preferredReadReplica, at);
      at = out.writeInt32BE(p.records === null ? -1 : p.records.length, at);
      if (p.records !== null) at += p.records.copy(out, at);
    }
  }
  return out;
}
