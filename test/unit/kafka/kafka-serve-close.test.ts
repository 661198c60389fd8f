/**
 * kafka-serve's connections upstream once floe closed them: a cluster, or a client connection's links,
 * closed while an answer is still being computed (a cold read, then the partition's watermarks) must
 * not reconnect — the new socket would leak and a stopped `floe kafka-serve` would never exit. And a
 * proxy that fails to start, or stops while a TLS client is still in its handshake, leaves no socket
 * open. The broker here is a plain TCP server speaking just enough Kafka (ApiVersions v0); it counts the
 * connections it accepts, which is what the tests assess.
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ColdBatches } from '../../../functions/core/kafka/serve/cold-batches.js';
import { ColdView } from '../../../functions/core/kafka/serve/cold-view.js';
import { startKafkaProxy } from '../../../functions/core/kafka/serve/kafka-proxy.js';
import { encodeApiVersionsResponse } from '../../../functions/core/kafka/serve/messages.js';
import { TableRecords } from '../../../functions/core/kafka/serve/table-records.js';
import { LinkPool, UpstreamCluster, UpstreamError } from '../../../functions/core/kafka/serve/upstream.js';
import { ApiKey, FrameReader, framed } from '../../../functions/core/kafka/serve/wire.js';

/** Answers ApiVersions v0 (Fetch and Metadata, any version); closes the connection on anything else. */
function fakeBroker() {
  const open = new Set<Socket>();
  let accepted = 0;
  const server = createServer((socket) => {
    accepted++;
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => undefined);
    const reader = new FrameReader();
    socket.on('data', (chunk: Buffer) => {
      for (const frame of reader.push(chunk)) {
        if (frame.readInt16BE(0) !== ApiKey.ApiVersions) {
          socket.destroy();
          return;
        }
        const apis = [
          { apiKey: ApiKey.Fetch, min: 0, max: 11 },
          { apiKey: ApiKey.Metadata, min: 0, max: 8 },
        ];
        const id = Buffer.alloc(4);
        id.writeInt32BE(frame.readInt32BE(4), 0);
        socket.write(framed(Buffer.concat([id, encodeApiVersionsResponse(0, 0, apis)])));
      }
    });
  });
  return {
    server,
    accepted: () => accepted,
    /** Resolves once every connection the broker accepted has closed. */
    allClosed: () => Promise.all([...open].map((s) => (s.destroyed ? undefined : once(s, 'close')))),
    close: () => {
      for (const s of open) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function listenOn(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
}

/** What the two tests whose failure is a hang give it before they fail (each passes in milliseconds). */
const HANG = 10_000;

const tableless = () => ({
  cold: new ColdView([], { kind: 'committed' }, async () => undefined),
  batches: new ColdBatches(new TableRecords(() => () => Buffer.alloc(0))),
});

describe('kafka-serve upstream after close', () => {
  let broker: ReturnType<typeof fakeBroker>;
  let port: number;
  let certDir: string;

  beforeAll(async () => {
    broker = fakeBroker();
    port = await listenOn(broker.server);
    certDir = await mkdtemp(join(tmpdir(), 'floe-kserve-close-'));
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'].concat([
        ...['-days', '1', '-subj', '/CN=localhost'],
        ...['-keyout', join(certDir, 'key.pem'), '-out', join(certDir, 'cert.pem')],
      ]),
      { stdio: 'ignore' },
    );
  });
  afterAll(async () => {
    await broker.close();
    await rm(certDir, { recursive: true, force: true });
  });

  it('a closed cluster fails a later request instead of connecting again', async () => {
    // Prepare: a cluster that asked the broker once, then closed by a stop
    const cluster = new UpstreamCluster([{ host: '127.0.0.1', port }]);
    await cluster.apiVersions();
    const before = broker.accepted();
    cluster.close();

    // Act: a request an answer still under way makes after the stop (a leader lookup)
    const late = cluster.leaderOf('orders', 0);

    // Assess: it fails, and the broker saw no new connection
    await expect(late).rejects.toThrow(UpstreamError);
    await expect(late).rejects.toThrow(/closed by kafka-serve/);
    expect(broker.accepted()).toBe(before);
  });

  it("a client connection's links, once it left, neither reconnect nor open new ones", async () => {
    // Prepare: a link of one client connection's pool, used once, then the client leaves
    const cluster = new UpstreamCluster([{ host: '127.0.0.1', port }]);
    cluster.learn({
      throttleMs: 0,
      brokers: [{ nodeId: 1, host: '127.0.0.1', port, rack: null }],
      clusterId: null,
      controllerId: 1,
      topics: [],
      clusterAuthorizedOperations: 0,
    });
    const pool = new LinkPool();
    const link = cluster.linkTo(1, pool);
    await link.request(ApiKey.ApiVersions, 0, Buffer.alloc(0));
    const before = broker.accepted();
    pool.close();

    // Act: the answer still being computed for that client asks upstream on its link
    const late = link.request(ApiKey.ApiVersions, 0, Buffer.alloc(0));

    // Assess: refused, no link for the pool anymore, no new connection; the cluster's own still work
    await expect(late).rejects.toThrow(UpstreamError);
    expect(() => cluster.linkTo(1, pool)).toThrow(UpstreamError);
    expect(broker.accepted()).toBe(before);
    await cluster.apiVersions();
    expect(broker.accepted()).toBe(before + 1);
    cluster.close();
  });

  it(
    'a proxy that cannot listen closes the link it asked the API versions on',
    async () => {
      // Prepare: the proxy's port already taken
      const taken = createServer();
      const takenPort = await listenOn(taken);
      const before = broker.accepted();

      // Act
      const started = startKafkaProxy({
        bootstrap: [{ host: '127.0.0.1', port }],
        host: '127.0.0.1',
        port: takenPort,
        ...tableless(),
      });

      // Assess: the start fails, after asking upstream, and upstream's connection closes (else: never)
      await expect(started).rejects.toThrow(/EADDRINUSE/);
      expect(broker.accepted()).toBe(before + 1);
      await broker.allClosed();
      taken.close();
    },
    HANG,
  );

  it(
    'close ends a TLS connection still in its handshake',
    async () => {
      // Prepare: a TLS listener and a client that connected but never says hello
      const proxy = await startKafkaProxy({
        bootstrap: [{ host: '127.0.0.1', port }],
        host: '127.0.0.1',
        port: 0,
        ...tableless(),
        listener: {
          tls: {
            cert: await readFile(join(certDir, 'cert.pem')),
            key: await readFile(join(certDir, 'key.pem')),
          },
        },
      });
      const silent = connect(proxy.endpoint.port, '127.0.0.1');
      silent.on('error', () => undefined);
      await once(silent, 'connect');
      // The proxy's accept of it was ready in the same poll as the client's connect: done by the next turn.
      await nextTurn();
      const closed = once(silent, 'close');

      // Act: the stop (before the fix, server.close waited for the handshake's two-minute timeout)
      await proxy.close();

      // Assess: the stalled client was cut off
      await closed;
      expect(silent.destroyed).toBe(true);
    },
    HANG,
  );
});
