/**
 * Produce v3–v8 through the proxy. Clients see one broker, so one Produce may name partitions that
 * several upstream brokers lead: it is split into one Produce per leader (the client's header, each
 * leader's partitions, every record set's bytes untouched) and the answers merged back in the
 * request's order, as if one broker had answered. A request naming one leader is relayed byte for
 * byte. A partition without a known leader is answered NOT_LEADER_OR_FOLLOWER, so the client
 * refreshes its metadata and retries it; nothing is written for it.
 */
import {
  Decoder,
  Encoder,
  KafkaErrorCode,
  type KafkaDecoder,
  readArray,
  readLong,
  writeArray,
} from './kafkajs-protocol.js';
import type { LinkPool, UpstreamCluster } from './upstream.js';
import type { RequestHeader } from './wire.js';

interface ProducePartition {
  index: number;
  records: Buffer | null;
}

interface ProduceTopic {
  name: string;
  partitions: ProducePartition[];
}

export interface ProduceRequest {
  transactionalId: string | null;
  acks: number;
  timeoutMs: number;
  topics: ProduceTopic[];
}

export interface ProducePartitionResponse {
  index: number;
  errorCode: number;
  baseOffset: bigint;
  logAppendTimeMs: bigint;
  logStartOffset: bigint;
  recordErrors: { batchIndex: number; message: string | null }[];
  errorMessage: string | null;
}

export interface ProduceResponse {
  topics: { name: string; partitions: ProducePartitionResponse[] }[];
  throttleMs: number;
}

/** @throws RangeError for a truncated request */
export function decodeProduceRequest(d: KafkaDecoder): ProduceRequest {
  const transactionalId = d.readString();
  const acks = d.readInt16();
  const timeoutMs = d.readInt32();
  const topics = readArray(d, (t) => ({
    name: t.readString() ?? '',
    partitions: readArray(t, (p) => ({ index: p.readInt32(), records: p.readBytes() })),
  }));
  return { transactionalId, acks, timeoutMs, topics };
}

export function encodeProduceRequest(r: ProduceRequest): Buffer {
  const e = new Encoder().writeString(r.transactionalId).writeInt16(r.acks).writeInt32(r.timeoutMs);
  writeArray(e, r.topics, (te, t) => {
    te.writeString(t.name);
    writeArray(te, t.partitions, (pe, p) => pe.writeInt32(p.index).writeBytes(p.records));
  });
  return e.buffer;
}

/** @throws RangeError for a truncated answer */
export function decodeProduceResponse(version: number, d: KafkaDecoder): ProduceResponse {
  const topics = readArray(d, (t) => ({
    name: t.readString() ?? '',
    partitions: readArray(t, (p) => ({
      index: p.readInt32(),
      errorCode: p.readInt16(),
      baseOffset: readLong(p),
      logAppendTimeMs: readLong(p),
      logStartOffset: version >= 5 ? readLong(p) : -1n,
      recordErrors:
        version >= 8 ? readArray(p, (x) => ({ batchIndex: x.readInt32(), message: x.readString() })) : [],
      errorMessage: version >= 8 ? p.readString() : null,
    })),
  }));
  return { topics, throttleMs: d.readInt32() };
}

export function encodeProduceResponse(version: number, r: ProduceResponse): Buffer {
  const e = new Encoder();
  writeArray(e, r.topics, (te, t) => {
    te.writeString(t.name);
    writeArray(te, t.partitions, (pe, p) => {
      pe.writeInt32(p.index).writeInt16(p.errorCode).writeInt64(p.baseOffset).writeInt64(p.logAppendTimeMs);
      if (version >= 5) pe.writeInt64(p.logStartOffset);
      if (version >= 8) {
        writeArray(pe, p.recordErrors, (xe, x) => xe.writeInt32(x.batchIndex).writeString(x.message));
        pe.writeString(p.errorMessage);
      }
    });
  });
  return e.writeInt32(r.throttleMs).buffer;
}

function failed(index: number, errorCode: number): ProducePartitionResponse {
  return {
    index,
    errorCode,
    baseOffset: -1n,
    logAppendTimeMs: -1n,
    logStartOffset: -1n,
    recordErrors: [],
    errorMessage: null,
  };
}

/**
 * The answer to a client's Produce (null for acks 0, which gets none), sent to the leaders of its
 * partitions through this connection's links.
 * @throws RangeError for a truncated request or answer (the connection closes)
 * @throws UpstreamError when a leader cannot be reached
 */
export async function routeProduce(
  header: RequestHeader,
  frame: Buffer,
  cluster: UpstreamCluster,
  links: LinkPool,
): Promise<Buffer | null> {
  const bodyStart = header.body.offset;
  const request = decodeProduceRequest(header.body);
  const byLeader = new Map<number, ProduceTopic[]>();
  const answers = new Map<string, ProducePartitionResponse>();
  for (const t of request.topics) {
    for (const p of t.partitions) {
      const leader = await cluster.leaderOf(t.name, p.index);
      if (leader === undefined) {
        answers.set(`${t.name}\u0000${p.index}`, failed(p.index, KafkaErrorCode.NOT_LEADER_OR_FOLLOWER));
        continue;
      }
      const topics = byLeader.get(leader) ?? [];
      byLeader.set(leader, topics);
      let topic = topics.find((x) => x.name === t.name);
      if (!topic) {
        topic = { name: t.name, partitions: [] };
        topics.push(topic);
      }
      topic.partitions.push(p);
    }
  }
  const version = header.apiVersion;
  if (byLeader.size === 1 && answers.size === 0) {
    const link = cluster.linkTo([...byLeader.keys()][0], links);
    if (request.acks === 0) {
      link.sendOnly(frame);
      return null;
    }
    return link.send(frame);
  }
  const head = frame.subarray(0, bodyStart);
  let throttleMs = 0;
  await Promise.all(
    [...byLeader].map(async ([leader, topics]) => {
      const part = Buffer.concat([head, encodeProduceRequest({ ...request, topics })]);
      const link = cluster.linkTo(leader, links);
      if (request.acks === 0) return link.sendOnly(part);
      const answer = decodeProduceResponse(version, new Decoder(await link.send(part)));
      throttleMs = Math.max(throttleMs, answer.throttleMs);
      for (const t of answer.topics)
        for (const p of t.partitions) {
          if (p.errorCode === KafkaErrorCode.NOT_LEADER_OR_FOLLOWER) cluster.forgetLeaders();
          answers.set(`${t.name}\u0000${p.index}`, p);
        }
    }),
  );
  if (request.acks === 0) return null;
  return encodeProduceResponse(version, {
    throttleMs,
    topics: request.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map(
        (p) =>
          answers.get(`${t.name}\u0000${p.index}`) ?? failed(p.index, KafkaErrorCode.NOT_LEADER_OR_FOLLOWER),
      ),
    })),
  });
}
