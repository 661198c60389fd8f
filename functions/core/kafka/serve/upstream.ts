/**
 * The proxy's side of the real cluster: one connection per upstream broker (requests pipelined,
 * answers matched by correlation id), the brokers and partition leaders from upstream Metadata, and
 * each consumer group's coordinator from upstream FindCoordinator. Hand-written: kafkajs's Connection
 * decodes every answer into its own objects, and the proxy must relay most answers byte for byte.
 * A link to a secured cluster opens with TLS and authenticates (upstream-auth.ts) before anything
 * else is written on it; requests sent meanwhile wait, in order.
 *
 * Closing is for good: a link, a client connection's pool of links or the cluster closed by floe
 * refuses to open a new socket. A request still being answered when its client left or kafka-serve
 * stopped (a cold read, then the partition's watermarks) would otherwise reconnect after the close,
 * leak that socket for the life of the process and keep a stopped kafka-serve from ever exiting.
 */
import { connect, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { LakeError } from '../../errors.js';
import { Decoder } from './kafkajs-protocol.js';
import {
  type ApiRange,
  decodeApiVersionsV0,
  decodeFindCoordinatorResponse,
  decodeMetadataResponse,
  encodeFindCoordinatorRequest,
  encodeMetadataRequestV1,
  type MetadataResponse,
} from './messages.js';
import { authenticateLink, type UpstreamSecurity } from './upstream-auth.js';
import { ApiKey, FrameReader, framed } from './wire.js';

const CLIENT_ID = 'floe-kafka-serve';

/** The cluster could not be reached or broke a connection; a retry (the client's) can help. */
export class UpstreamError extends LakeError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: true });
    this.name = 'UpstreamError';
  }
}

/** One connection to one broker. */
export class UpstreamLink {
  private socket: Socket | undefined;
  /** Settles once the socket may carry requests (after SASL, when there is SASL). */
  private ready: Promise<void> = Promise.resolve();
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (b: Buffer) => void; reject: (e: Error) => void }>();
  /** Closed by floe (not by the broker): never reconnects. */
  private shut = false;

  constructor(
    readonly host: string,
    readonly port: number,
    private readonly security: UpstreamSecurity = {},
  ) {}

  get closed(): boolean {
    return this.socket === undefined || this.socket.destroyed;
  }

  /** @throws UpstreamError once the link was closed by floe */
  private open(): Socket {
    if (this.shut) throw closedError(`broker ${this.host}:${this.port}`);
    if (this.socket && !this.socket.destroyed) return this.socket;
    const { tls, sasl } = this.security;
    const socket = tls
      ? connectTls({ ...tls, host: this.host, port: this.port })
      : connect({ host: this.host, port: this.port });
    socket.setNoDelay(true);
    const reader = new FrameReader();
    socket.on('data', (chunk: Buffer) => {
      let frames: Buffer[];
      try {
        frames = reader.push(chunk);
      } catch (error) {
        socket.destroy(error as Error);
        return;
      }
      for (const frame of frames) {
        if (frame.length < 4) continue;
        const id = frame.readInt32BE(0);
        const waiter = this.pending.get(id);
        this.pending.delete(id);
        waiter?.resolve(frame.subarray(4));
      }
    });
    const fail = (error?: Error) => {
      const e = new UpstreamError(
        `broker ${this.host}:${this.port}: ${error?.message ?? 'connection closed'}`,
        { cause: error },
      );
      for (const w of this.pending.values()) w.reject(e);
      this.pending.clear();
    };
    socket.on('error', fail);
    socket.on('close', () => fail());
    this.socket = socket;
    this.ready = sasl
      ? authenticateLink((k, v, body) => this.write(this.header(k, v, body)), sasl, this).catch((error) => {
          // A broker without SASL on this port closes at the SaslHandshake: say so, not just "closed".
          if (!(error instanceof LakeError && error.retryable)) throw error;
          throw new UpstreamError(
            `${error.message} during SASL ${sasl.mechanism} authentication (does this port take SASL? check --sasl-mechanism, --tls and the port)`,
            { cause: error },
          );
        })
      : Promise.resolve();
    // A refused authentication fails every request waiting on this link, and the next send reconnects.
    this.ready.catch((error: Error) => {
      for (const w of this.pending.values()) w.reject(error);
      this.pending.clear();
      socket.destroy();
    });
    return socket;
  }

  /** Writes at once (authentication's own requests); resolves with the answer after the correlation id. */
  private write(request: Buffer, expectAnswer = true): Promise<Buffer> {
    const id = this.nextId++ & 0x7fffffff;
    const copy = Buffer.from(request);
    copy.writeInt32BE(id, 4);
    return new Promise<Buffer>((resolve, reject) => {
      if (expectAnswer) this.pending.set(id, { resolve, reject });
      (this.socket as Socket).write(framed(copy));
      if (!expectAnswer) resolve(Buffer.alloc(0));
    });
  }

  /** Opens the link if needed and writes once it is ready, keeping the order of calls. */
  private async whenReady(request: Buffer, expectAnswer: boolean): Promise<Buffer> {
    const socket = this.open();
    return this.ready.then(() => {
      if (socket !== this.socket || socket.destroyed)
        throw new UpstreamError(`broker ${this.host}:${this.port}: connection closed`);
      return this.write(request, expectAnswer);
    });
  }

  private header(apiKey: number, version: number, body: Buffer): Buffer {
    const header = Buffer.alloc(10 + CLIENT_ID.length);
    header.writeInt16BE(apiKey, 0);
    header.writeInt16BE(version, 2);
    header.writeInt32BE(0, 4);
    header.writeInt16BE(CLIENT_ID.length, 8);
    header.write(CLIENT_ID, 10, 'utf8');
    return Buffer.concat([header, body]);
  }

  /**
   * Sends a whole request (header and body) with this link's correlation id in place of its own;
   * resolves with the answer after its correlation id (the rest of the header and the body).
   * @throws UpstreamError when the connection fails first
   */
  send(request: Buffer): Promise<Buffer> {
    return this.whenReady(request, true);
  }

  /** Sends a request that gets no answer (Produce with acks 0). */
  sendOnly(request: Buffer): void {
    this.whenReady(request, false).catch(() => undefined);
  }

  /**
   * A request this proxy makes itself (non-flexible header v1).
   * @throws UpstreamError when the connection fails; UpstreamAuthError when the cluster refuses floe
   */
  request(apiKey: number, version: number, body: Buffer): Promise<Buffer> {
    return this.send(this.header(apiKey, version, body));
  }

  /** Closes the socket and refuses to open another (requests fail with UpstreamError). */
  close(): void {
    this.shut = true;
    this.socket?.destroy();
  }
}

/** What a request on a link, pool or cluster floe closed fails with (its client or kafka-serve is gone). */
function closedError(what: string): UpstreamError {
  return new UpstreamError(`${what}: closed by kafka-serve (its client left or it is stopping)`);
}

/**
 * The links of one client connection (a long poll of one client never holds up another's requests).
 * Once closed (the client left), it opens none.
 */
export class LinkPool {
  private readonly links = new Map<number, UpstreamLink>();
  private shut = false;

  get closed(): boolean {
    return this.shut;
  }

  get(nodeId: number): UpstreamLink | undefined {
    return this.links.get(nodeId);
  }

  /** Keeps `link` for `nodeId`; a pool already closed closes it at once. */
  set(nodeId: number, link: UpstreamLink): void {
    if (this.shut) link.close();
    this.links.set(nodeId, link);
  }

  close(): void {
    this.shut = true;
    for (const l of this.links.values()) l.close();
  }
}

interface BrokerAddress {
  host: string;
  port: number;
}

/** What the proxy knows of the cluster: brokers, leaders, coordinators; links for its own requests. */
export class UpstreamCluster {
  readonly brokers = new Map<number, BrokerAddress>();
  private readonly leaders = new Map<string, Map<number, number>>();
  private readonly coordinators = new Map<string, number>();
  private readonly links = new LinkPool();
  private bootstrapLink: UpstreamLink | undefined;

  constructor(
    private readonly bootstrap: BrokerAddress[],
    private readonly security: UpstreamSecurity = {},
  ) {}

  /** A link to any broker (the bootstrap one first). @throws UpstreamError once the cluster is closed */
  anyLink(): UpstreamLink {
    if (this.links.closed) throw closedError('the cluster');
    if (this.bootstrapLink && !this.bootstrapLink.closed) return this.bootstrapLink;
    const first = this.brokers.keys().next();
    if (!first.done) return this.linkTo(first.value);
    const b = this.bootstrap[Math.floor(Math.random() * this.bootstrap.length)];
    this.bootstrapLink = new UpstreamLink(b.host, b.port, this.security);
    return this.bootstrapLink;
  }

  /**
   * A link to broker `nodeId` in `pool` (the cluster's shared one by default).
   * @throws UpstreamError for a node the cluster did not name, or once the pool or the cluster is closed
   */
  linkTo(nodeId: number, pool = this.links): UpstreamLink {
    if (pool.closed || this.links.closed) throw closedError(`broker ${nodeId}`);
    let link = pool.get(nodeId);
    if (link && !link.closed) return link;
    const address = this.brokers.get(nodeId);
    if (!address) throw new UpstreamError(`upstream names no broker ${nodeId}`);
    link = new UpstreamLink(address.host, address.port, this.security);
    pool.set(nodeId, link);
    return link;
  }

  /** Upstream's API version ranges (ApiVersions v0, which every broker answers). */
  async apiVersions(): Promise<ApiRange[]> {
    const answer = decodeApiVersionsV0(
      new Decoder(await this.anyLink().request(ApiKey.ApiVersions, 0, Buffer.alloc(0))),
    );
    if (answer.errorCode !== 0)
      throw new UpstreamError(`upstream ApiVersions failed with error ${answer.errorCode}`);
    return answer.apis;
  }

  /** Remembers the brokers and leaders of an upstream Metadata answer. */
  learn(metadata: MetadataResponse): void {
    if (metadata.brokers.length > 0) {
      this.brokers.clear();
      for (const b of metadata.brokers) this.brokers.set(b.nodeId, { host: b.host, port: b.port });
    }
    for (const t of metadata.topics) {
      if (t.errorCode !== 0) continue;
      const map = new Map<number, number>();
      for (const p of t.partitions) map.set(p.partition, p.leader);
      this.leaders.set(t.name, map);
    }
  }

  /** @throws UpstreamError when the cluster cannot be asked */
  async refresh(topics: string[] | null): Promise<void> {
    const body = await this.anyLink().request(ApiKey.Metadata, 1, encodeMetadataRequestV1(topics));
    this.learn(decodeMetadataResponse(1, new Decoder(body)));
  }

  /** The leader of a partition, asking upstream once when unknown; undefined when it has none. */
  async leaderOf(topic: string, partition: number): Promise<number | undefined> {
    const known = this.leaders.get(topic)?.get(partition);
    if (known !== undefined && known >= 0 && this.brokers.has(known)) return known;
    await this.refresh([topic]);
    const leader = this.leaders.get(topic)?.get(partition);
    return leader !== undefined && leader >= 0 ? leader : undefined;
  }

  forgetLeaders(): void {
    this.leaders.clear();
  }

  rememberCoordinator(group: string, nodeId: number, address: BrokerAddress): void {
    this.coordinators.set(group, nodeId);
    if (!this.brokers.has(nodeId)) this.brokers.set(nodeId, address);
  }

  /** The group's coordinator, asking upstream when unknown. @throws UpstreamError when it has none */
  async coordinatorOf(group: string): Promise<number> {
    const known = this.coordinators.get(group);
    if (known !== undefined) return known;
    const answer = decodeFindCoordinatorResponse(
      1,
      new Decoder(
        await this.anyLink().request(ApiKey.FindCoordinator, 1, encodeFindCoordinatorRequest(1, group)),
      ),
    );
    if (answer.errorCode !== 0)
      throw new UpstreamError(`no coordinator for group '${group}' (error ${answer.errorCode})`);
    this.rememberCoordinator(group, answer.nodeId, { host: answer.host, port: answer.port });
    return answer.nodeId;
  }

  forgetCoordinator(group: string): void {
    this.coordinators.delete(group);
  }

  /** Closes every link of the cluster's own; no new one opens after (client pools close with their clients). */
  close(): void {
    this.links.close();
    this.bootstrapLink?.close();
  }
}
