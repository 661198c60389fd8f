/**
 * The check of the bootstrap servers before a Kafka command (broker-check.ts) against real sockets on
 * loopback: a port nothing listens on, a listener that never answers, a TLS listener (Node's TLS
 * server with a certificate made here by openssl: the handshake side of a TLS broker), a listener that
 * answers a Kafka request (the ApiVersions answer shape), and what each failure says to do.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkBroker,
  checkBrokers,
  errorOfOutcomes,
  KafkaTlsError,
  KafkaUnreachableError,
} from '../../../functions/core/kafka/broker-check.js';
import { kafkaConfigOf } from '../../../functions/core/kafka/kafka-client.js';

async function listen(server: TcpServer | TlsServer): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `127.0.0.1:${(server.address() as { port: number }).port}`;
}

async function close(server: TcpServer | TlsServer | undefined): Promise<void> {
  if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** Answers every request with a response header carrying the request's correlation id, as a broker does. */
function kafkaLikeServer(): TcpServer {
  return createTcpServer((socket: Socket) => {
    socket.on('data', (request: Buffer) => {
      const answer = Buffer.alloc(10);
      answer.writeInt32BE(6, 0);
      answer.writeInt32BE(request.readInt32BE(8), 4);
      answer.writeInt16BE(0, 8);
      socket.write(answer);
    });
  });
}

describe('checkBroker', () => {
  let certDir: string;
  let tlsServer: TlsServer;
  let tlsAddress: string;
  const sockets = new Set<Socket>();
  const silent = createTcpServer((socket) => sockets.add(socket));
  let silentAddress: string;
  const kafka = kafkaLikeServer();
  let kafkaAddress: string;

  beforeAll(async () => {
    certDir = await mkdtemp(join(tmpdir(), 'floe-tls-'));
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost'].concat([
        '-keyout',
        join(certDir, 'key.pem'),
        '-out',
        join(certDir, 'cert.pem'),
      ]),
      { stdio: 'ignore' },
    );
    tlsServer = createTlsServer({
      key: await readFile(join(certDir, 'key.pem')),
      cert: await readFile(join(certDir, 'cert.pem')),
    });
    tlsServer.on('tlsClientError', () => undefined);
    tlsAddress = await listen(tlsServer);
    silentAddress = await listen(silent);
    kafkaAddress = await listen(kafka);
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await Promise.all([close(tlsServer), close(silent), close(kafka)]);
    if (certDir) await rm(certDir, { recursive: true, force: true });
  });

  it('finds a listener that answers a Kafka request', async () => {
    expect(await checkBroker(kafkaAddress, undefined, 5_000)).toEqual({
      broker: kafkaAddress,
      kind: 'kafka',
    });
    await expect(checkBrokers([kafkaAddress], undefined, 5_000)).resolves.toBeUndefined();
  });

  it('tells refused from a listener that never answers', async () => {
    // Prepare: a port that was just free
    const gone = createTcpServer();
    const goneAddress = await listen(gone);
    await close(gone);

    // Act
    const refused = await checkBroker(goneAddress, undefined, 5_000);
    const silentOutcome = await checkBroker(silentAddress, undefined, 200);

    // Assess
    expect(refused).toMatchObject({ kind: 'refused', detail: 'connection refused' });
    expect(silentOutcome).toMatchObject({
      kind: 'timeout',
      detail: expect.stringMatching(/connected, but no answer/),
    });
  });

  it('plaintext against a TLS listener: an error saying to add --tls', async () => {
    // Act
    const outcome = await checkBroker(tlsAddress, undefined, 5_000);
    const error = await checkBrokers([tlsAddress], undefined, 5_000).catch((e: unknown) => e);

    // Assess
    expect(['closed', 'tls-listener']).toContain(outcome.kind);
    expect(error).toBeInstanceOf(KafkaTlsError);
    expect((error as Error).message).toMatch(
      new RegExp(`no Kafka answer over plaintext from --bootstrap-servers ${tlsAddress} .*add --tls`),
    );
  });

  it('--tls and a certificate no CA vouches for: --tls-ca or --tls-insecure', async () => {
    const error = await checkBrokers([tlsAddress], {}, 5_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KafkaTlsError);
    expect((error as Error).message).toMatch(
      /certificate was refused .*self-signed.*--tls-ca FILE.*--tls-insecure/,
    );
  });

  it('--tls against a listener that never answers the handshake: looks plaintext', async () => {
    const outcome = await checkBroker(silentAddress, {}, 200);
    expect(outcome).toMatchObject({ kind: 'tls-handshake' });
    const error = errorOfOutcomes([outcome], true);
    expect(error).toBeInstanceOf(KafkaTlsError);
    expect(error?.message).toMatch(/--tls: no TLS handshake with .*looks plaintext; leave out --tls/);
  });
});

describe('errorOfOutcomes', () => {
  it('needs only one broker to answer', () => {
    expect(
      errorOfOutcomes(
        [
          { broker: 'a:9092', kind: 'refused', detail: 'connection refused' },
          { broker: 'b:9092', kind: 'kafka' },
        ],
        false,
      ),
    ).toBeUndefined();
  });

  it('names --bootstrap-servers, every address and what happened there, on one line', () => {
    // Act
    const error = errorOfOutcomes(
      [
        { broker: 'a:9092', kind: 'refused', detail: 'connection refused' },
        { broker: 'nohost:9092', kind: 'dns', detail: 'host name not found (ENOTFOUND)' },
        { broker: 'c:9092', kind: 'timeout', detail: 'no connection within 5 s' },
      ],
      false,
    );

    // Assess
    expect(error).toBeInstanceOf(KafkaUnreachableError);
    expect(error?.message).not.toContain('\n');
    expect(error?.message).toBe(
      'cannot reach Kafka at --bootstrap-servers a:9092,nohost:9092,c:9092 (a:9092: connection refused; ' +
        'nohost:9092: host name not found (ENOTFOUND); c:9092: no connection within 5 s): check the ' +
        'addresses, that the brokers are running and that this machine can reach them (VPC, security group, VPN)',
    );
    expect(error?.retryable).toBe(true);
  });

  it('a host name that is not found is not worth retrying', () => {
    const error = errorOfOutcomes(
      [{ broker: 'nohost:9092', kind: 'dns', detail: 'host name not found' }],
      false,
    );
    expect(error?.message).toMatch(/check the host names$/);
    expect(error?.retryable).toBe(false);
  });
});

describe("kafkajs's log", () => {
  it('keeps its connection retries quiet and every other warning or error', async () => {
    // Prepare
    const lines: string[] = [];
    const config = await kafkaConfigOf({ brokers: ['127.0.0.1:1'], log: (line) => lines.push(line) });
    const logger = config.logCreator!(logLevel.WARN);
    const entry = (namespace: string, message: string) => ({
      namespace,
      level: logLevel.ERROR,
      label: 'ERROR',
      log: { timestamp: '', logger: 'kafkajs', message },
    });

    // Act
    logger(entry('Connection', 'Connection error: connect ECONNREFUSED 127.0.0.1:1'));
    logger(entry('BrokerPool', 'Failed to connect to seed broker, trying another broker from the list'));
    logger(entry('Connection', 'Connection timeout'));
    logger(entry('Consumer', 'Crash: KafkaJSGroupCoordinatorNotFound'));
    logger(entry('Connection', 'Response Metadata(key: 3, version: 6)'));

    // Assess
    expect(lines).toEqual([
      'kafka error: Consumer: Crash: KafkaJSGroupCoordinatorNotFound',
      'kafka error: Connection: Response Metadata(key: 3, version: 6)',
    ]);
  });
});
