/**
 * `floe kafka-serve`'s server: speaks the Kafka protocol to unmodified clients in front of a real
 * cluster. Every request is parsed up to its header and sent where a broker would have it: a
 * partition's leader (Fetch, ListOffsets, Produce: split per leader and merged), a group's coordinator
 * (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch: relayed byte for byte), any
 * broker (Metadata, FindCoordinator). Fetches of offsets the table holds are answered from the table.
 *
 * One listener and one node id for the whole cluster: Metadata and FindCoordinator answers name only
 * this endpoint, so every client connection comes here and the proxy, not the client, picks the
 * broker. One listener is the simplest thing clients accept (kafkajs and librdkafka both take a
 * single-broker cluster) and matches MSK, whose brokers all sit behind one address for a client;
 * a listener per upstream broker (keeping node ids) is a later option.
 *
 * Requests of an API or version not advertised close the connection, as a broker does; ApiVersions
 * of an unknown version gets UNSUPPORTED_VERSION with the supported ranges, as a broker sends it.
 * The listener may take TLS (node:tls, mTLS with a CA) and SASL (listener-sasl.ts: nothing but
 * ApiVersions and the SASL exchange before authentication); the links upstream their own
 * (upstream-auth.ts).
 */
import { createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TlsOptions } from 'node:tls';
import type { ColdBatches } from './cold-batches.js';
import type { ColdView } from './cold-view.js';
import { decodeFetchRequest, encodeFetchResponse } from './fetch-messages.js';
import { FetchRouter } from './fetch-router.js';
import { Decoder, KafkaErrorCode } from './kafkajs-protocol.js';
import { type ListenerSasl, SASL_RANGES, SaslSession } from './listener-sasl.js';
import {
  type ApiRange,
  decodeFindCoordinatorRequest,
  decodeFindCoordinatorResponse,
  decodeListOffsetsRequest,
  decodeListOffsetsResponse,
  decodeMetadataResponse,
  encodeApiVersionsResponse,
  encodeFindCoordinatorResponse,
  encodeListOffsetsRequest,
  encodeListOffsetsResponse,
  encodeMetadataResponse,
  type ListOffsetsPartitionResponse,
  type MetadataResponse,
} from './messages.js';
import { routeProduce } from './produce-router.js';
import { LinkPool, UpstreamCluster } from './upstream.js';
import type { UpstreamSecurity } from './upstream-auth.js';
import { ApiKey, FrameReader, parseRequestHeader, type RequestHeader, readGroupId } from './wire.js';

/** The node id every broker is shown as. */
export const PROXY_NODE_ID = 0;

/** The versions the proxy can decode and rewrite (or relay): intersected with upstream's at start. */
const OWN_RANGES: ApiRange[] = [
  // Advertised although this slice is for readers: librdkafka derives its message format from the
  // Produce and Fetch ranges together (Produce v3 + Fetch v4 = magic v2), and reads v0 batches without it.
  { apiKey: ApiKey.Produce, min: 3, max: 8 },
  { apiKey: ApiKey.Fetch, min: 4, max: 11 },
  { apiKey: ApiKey.ListOffsets, min: 1, max: 5 },
  { apiKey: ApiKey.Metadata, min: 1, max: 8 },
  { apiKey: ApiKey.OffsetCommit, min: 2, max: 8 },
  { apiKey: ApiKey.OffsetFetch, min: 1, max: 7 },
  { apiKey: ApiKey.FindCoordinator, min: 0, max: 2 },
  { apiKey: ApiKey.JoinGroup, min: 0, max: 9 },
  { apiKey: ApiKey.Heartbeat, min: 0, max: 4 },
  { apiKey: ApiKey.LeaveGroup, min: 0, max: 4 },
  { apiKey: ApiKey.SyncGroup, min: 0, max: 5 },
];
const API_VERSIONS_RANGE: ApiRange = { apiKey: ApiKey.ApiVersions, min: 0, max: 3 };
const GROUP_APIS = new Set<number>([
  ApiKey.OffsetCommit,
  ApiKey.OffsetFetch,
  ApiKey.JoinGroup,
  ApiKey.Heartbeat,
  ApiKey.LeaveGroup,
  ApiKey.SyncGroup,
]);

/** Upstream's ranges intersected with what the proxy handles (ApiVersions always). */
export function advertisedRanges(upstream: readonly ApiRange[]): ApiRange[] {
  const out: ApiRange[] = [API_VERSIONS_RANGE];
  for (const own of OWN_RANGES) {
    const up = upstream.find((u) => u.apiKey === own.apiKey);
    if (!up) continue;
    const min = Math.max(own.min, up.min);
    const max = Math.min(own.max, up.max);
    if (min <= max) out.push({ apiKey: own.apiKey, min, max });
  }
  return out;
}

/**
 * The Metadata answer a client gets: one broker (this endpoint), every led partition led by it. Leader
 * epochs become -1 (unknown) so clients do not validate offsets against epochs the table's offsets
 * may predate; partitions without a leader keep -1.
 */
export function rewriteMetadata(
  m: MetadataResponse,
  endpoint: { host: string; port: number },
): MetadataResponse {
  return {
    ...m,
    brokers: [{ nodeId: PROXY_NODE_ID, host: endpoint.host, port: endpoint.port, rack: null }],
    controllerId: PROXY_NODE_ID,
    topics: m.topics.map((t) => ({
      ...t,
      partitions: t.partitions.map((p) => ({
        ...p,
        leader: p.leader < 0 ? p.leader : PROXY_NODE_ID,
        leaderEpoch: -1,
        replicas: [PROXY_NODE_ID],
        isr: [PROXY_NODE_ID],
        offline: [],
      })),
    })),
  };
}

export interface KafkaProxyOptions {
  bootstrap: { host: string; port: number }[];
  host: string;
  port: number;
  cold: ColdView;
  /** The cold batches' cache (shared by every connection). */
  batches: ColdBatches;
  /** One line per connection problem. @default none */
  log?: (line: string) => void;
  /** TLS (`requestCert` + `ca` for mTLS) and SASL towards clients. @default plaintext, no SASL */
  listener?: { tls?: TlsOptions; sasl?: ListenerSasl };
  /** TLS and SASL towards the cluster (upstreamSecurityOf). @default plaintext */
  upstream?: UpstreamSecurity;
}

export interface KafkaProxy {
  /** The address clients connect to (the one Metadata names). */
  endpoint: { host: string; port: number };
  close(): Promise<void>;
}

/**
 * Starts the proxy: asks upstream for its API versions, then listens.
 * @throws UpstreamError when the cluster does not answer ApiVersions; UpstreamAuthError when it
 *   refuses floe's SASL
 */
export async function startKafkaProxy(options: KafkaProxyOptions): Promise<KafkaProxy> {
  const cluster = new UpstreamCluster(options.bootstrap, options.upstream);
  try {
    return await listen(options, cluster);
  } catch (error) {
    // The link that asked for the API versions stays open otherwise (a port in use, a refused
    // ApiVersions): kafka-serve printed its error and then never exited.
    cluster.close();
    throw error;
  }
}

/** The rest of {@link startKafkaProxy}. @throws as it does */
async function listen(options: KafkaProxyOptions, cluster: UpstreamCluster): Promise<KafkaProxy> {
  const sasl = options.listener?.sasl;
  const advertised = [...advertisedRanges(await cluster.apiVersions()), ...(sasl ? SASL_RANGES : [])];
  const router = new FetchRouter(cluster, options.cold, options.batches);
  const onConnection = (socket: Socket) => {
    const ctx = { cluster, router, advertised, cold: options.cold, endpoint, log: options.log };
    serveConnection(socket, ctx, sasl && new SaslSession(sasl));
  };
  const tls = options.listener?.tls;
  const server: Server = tls ? createTlsServer(tls, onConnection) : createServer(onConnection);
  // Every TCP connection, a TLS one still in its handshake too (the TLS server hands those to
  // onConnection only once secured): close() ends them all, or server.close() waited for a stalled
  // handshake (up to two minutes) before kafka-serve could exit.
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  // A client speaking plaintext to the TLS listener, or without an accepted certificate, never gets in.
  server.on('tlsClientError', (error: Error, socket: Socket) => {
    options.log?.(`kafka-serve: refused a TLS connection from ${socket.remoteAddress}: ${error.message}`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  const endpoint = {
    host: options.host,
    port: typeof address === 'object' && address ? address.port : options.port,
  };
  return {
    endpoint,
    close: async () => {
      for (const s of sockets) s.destroy();
      cluster.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface Context {
  cluster: UpstreamCluster;
  router: FetchRouter;
  advertised: ApiRange[];
  cold: ColdView;
  endpoint: { host: string; port: number };
  log?: (line: string) => void;
}

function serveConnection(socket: Socket, ctx: Context, session?: SaslSession): void {
  socket.setNoDelay(true);
  const reader = new FrameReader();
  // Links of this client connection: a long poll of one client never holds up another's heartbeat.
  const links = new LinkPool();
  // Kafka answers a connection's requests in order; answers computed out of order wait their turn.
  let tail = Promise.resolve();
  const fail = (error: unknown) => {
    ctx.log?.(`kafka-serve: closing a client connection: ${(error as Error).message}`);
    socket.destroy();
  };
  let closing = false;
  socket.on('data', (chunk: Buffer) => {
    if (closing) return;
    let frames: Buffer[];
    try {
      frames = reader.push(chunk);
    } catch (error) {
      return fail(error);
    }
    for (const frame of frames) {
      let header: RequestHeader;
      try {
        header = parseRequestHeader(frame);
      } catch (error) {
        return fail(error);
      }
      // Before authentication only ApiVersions and the SASL exchange get through (a broker's rule).
      const step = session?.step(header) ?? { kind: 'pass' };
      if (step.kind === 'refuse') return fail(new RangeError(step.reason));
      if (step.kind === 'answer' && step.log) ctx.log?.(`kafka-serve: ${socket.remoteAddress}: ${step.log}`);
      const closeAfter = step.kind === 'answer' && step.close;
      closing ||= closeAfter;
      const answer =
        step.kind === 'answer' ? Promise.resolve(step.body) : answerRequest(header, frame, ctx, links);
      answer.catch(() => undefined);
      tail = tail.then(async () => {
        try {
          const body = await answer;
          if (body === null) return;
          // Size and correlation id, then the body as it is: a Fetch answer of cold batches is
          // megabytes, and joining them into one frame copied it twice more.
          const head = Buffer.alloc(8);
          head.writeInt32BE(body.length + 4, 0);
          head.writeInt32BE(header.correlationId, 4);
          if (!socket.destroyed) {
            socket.cork();
            socket.write(head);
            socket.write(body);
            socket.uncork();
          }
          if (closeAfter) socket.end();
        } catch (error) {
          fail(error);
        }
      });
      if (closeAfter) return;
    }
  });
  socket.on('error', () => socket.destroy());
  // Closed for good: an answer still being computed cannot reconnect upstream for a client that left.
  socket.on('close', () => links.close());
}

/**
 * The answer after its correlation id; null for none (a Produce with acks 0).
 * @throws for a request to refuse (the connection closes)
 */
async function answerRequest(
  header: RequestHeader,
  frame: Buffer,
  ctx: Context,
  links: LinkPool,
): Promise<Buffer | null> {
  const { apiKey, apiVersion: v } = header;
  const range = ctx.advertised.find((r) => r.apiKey === apiKey);
  if (apiKey === ApiKey.ApiVersions) {
    if (v > API_VERSIONS_RANGE.max || v < 0)
      return encodeApiVersionsResponse(0, KafkaErrorCode.UNSUPPORTED_VERSION, ctx.advertised);
    return encodeApiVersionsResponse(v, KafkaErrorCode.NONE, ctx.advertised);
  }
  if (!range || v < range.min || v > range.max)
    throw new RangeError(`API ${apiKey} version ${v} is not supported (client ${header.clientId ?? '-'})`);
  if (GROUP_APIS.has(apiKey)) {
    const node = await ctx.cluster.coordinatorOf(readGroupId(header));
    return ctx.cluster.linkTo(node, links).send(frame);
  }
  if (apiKey === ApiKey.Metadata) {
    const answer = decodeMetadataResponse(v, new Decoder(await ctx.cluster.anyLink().send(frame)));
    ctx.cluster.learn(answer);
    return encodeMetadataResponse(v, rewriteMetadata(answer, ctx.endpoint));
  }
  if (apiKey === ApiKey.FindCoordinator) {
    const { key, keyType } = decodeFindCoordinatorRequest(v, header.body);
    const answer = decodeFindCoordinatorResponse(v, new Decoder(await ctx.cluster.anyLink().send(frame)));
    if (answer.errorCode !== KafkaErrorCode.NONE) return encodeFindCoordinatorResponse(v, answer);
    if (keyType === 0) ctx.cluster.rememberCoordinator(key, answer.nodeId, answer);
    return encodeFindCoordinatorResponse(v, { ...answer, nodeId: PROXY_NODE_ID, ...ctx.endpoint });
  }
  if (apiKey === ApiKey.ListOffsets) return listOffsets(v, header, ctx, links);
  if (apiKey === ApiKey.Produce) return routeProduce(header, frame, ctx.cluster, links);
  const request = decodeFetchRequest(v, header.body);
  if (request.sessionId !== 0)
    return encodeFetchResponse(v, {
      throttleMs: 0,
      errorCode: KafkaErrorCode.FETCH_SESSION_ID_NOT_FOUND,
      sessionId: 0,
      topics: [],
    });
  const partitions = await ctx.router.route(v, request, links);
  return encodeFetchResponse(v, {
    throttleMs: 0,
    errorCode: KafkaErrorCode.NONE,
    sessionId: 0,
    topics: [...partitions].map(([topic, ps]) => ({ topic, partitions: ps })),
  });
}

/**
 * ListOffsets split per leader; EARLIEST answers the table's first offset when it is lower, a lookup by
 * time the table's earliest match in the cold part (ColdView.byTime); LATEST and the rest are upstream's.
 */
async function listOffsets(v: number, header: RequestHeader, ctx: Context, links: LinkPool): Promise<Buffer> {
  const request = decodeListOffsetsRequest(v, header.body);
  const answers = new Map<string, ListOffsetsPartitionResponse>();
  const byLeader = new Map<number, typeof request.topics>();
  for (const t of request.topics) {
    for (const p of t.partitions) {
      const leader = await ctx.cluster.leaderOf(t.name, p.partition);
      if (leader === undefined) {
        answers.set(`${t.name}\u0000${p.partition}`, {
          partition: p.partition,
          errorCode: KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
          timestamp: -1n,
          offset: -1n,
          leaderEpoch: -1,
        });
        continue;
      }
      const topics = byLeader.get(leader) ?? [];
      byLeader.set(leader, topics);
      const topic = topics.find((x) => x.name === t.name) ?? { name: t.name, partitions: [] };
      if (!topics.includes(topic)) topics.push(topic);
      topic.partitions.push(p);
    }
  }
  let throttleMs = 0;
  await Promise.all(
    [...byLeader].map(async ([leader, topics]) => {
      const body = encodeListOffsetsRequest(v, { ...request, topics });
      const answer = decodeListOffsetsResponse(
        v,
        new Decoder(await ctx.cluster.linkTo(leader, links).request(ApiKey.ListOffsets, v, body)),
      );
      throttleMs = Math.max(throttleMs, answer.throttleMs);
      for (const t of answer.topics)
        for (const p of t.partitions) answers.set(`${t.name}\u0000${p.partition}`, p);
    }),
  );
  const topics = [];
  for (const t of request.topics) {
    const partitions: ListOffsetsPartitionResponse[] = [];
    for (const p of t.partitions) {
      const answer = answers.get(`${t.name}\u0000${p.partition}`);
      if (!answer) continue;
      if (p.timestamp === -2n) {
        const upstream = answer.errorCode === 0 ? answer.offset : -1n;
        const earliest = await ctx.cold.earliest(t.name, p.partition, upstream);
        partitions.push(
          earliest === upstream ? answer : { ...answer, errorCode: 0, offset: earliest, timestamp: -1n },
        );
      } else if (p.timestamp >= 0n) {
        const upstream = answer.errorCode === 0 ? answer.offset : undefined;
        const found = await ctx.cold.byTime(t.name, p.partition, p.timestamp, upstream);
        partitions.push(
          found ? { ...answer, errorCode: 0, offset: found.offset, timestamp: found.timestampMs } : answer,
        );
      } else partitions.push(answer);
    }
    topics.push({ name: t.name, partitions });
  }
  return encodeListOffsetsResponse(v, { throttleMs, topics });
}
