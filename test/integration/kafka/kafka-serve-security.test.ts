/**
 * kafka-serve's TLS and SASL in front of a real Kafka-protocol cluster (librdkafka's mock through
 * kcat), with clients no one here wrote: kcat/librdkafka over SASL_SSL with SCRAM-SHA-256 and a kafkajs
 * consumer group over TLS with SCRAM-SHA-512, plus raw requests for what a client library would not
 * send (a wrong password, plaintext to the TLS port, an API before authentication). The mock cluster
 * speaks neither TLS nor SASL, so the cluster side is checked against a secured kafka-serve: a second
 * endpoint whose upstream is the first one, reached with TLS (trusting the test's CA) and SCRAM.
 * No table: every fetch goes to the cluster, which is all the security layer needs.
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect as connectTcp, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as connectTls, TLSSocket } from 'node:tls';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ColdView } from '../../../functions/core/kafka/serve/cold-view.js';
import { type KafkaProxy, startKafkaProxy } from '../../../functions/core/kafka/serve/kafka-proxy.js';
import { Decoder, Encoder, type KafkaDecoder } from '../../../functions/core/kafka/serve/kafkajs-protocol.js';
import { SaslUsers } from '../../../functions/core/kafka/serve/listener-sasl.js';
import { ColdBatches } from '../../../functions/core/kafka/serve/cold-batches.js';
import { TableRecords } from '../../../functions/core/kafka/serve/table-records.js';
import { UpstreamAuthError, upstreamSecurityOf } from '../../../functions/core/kafka/serve/upstream-auth.js';
import { FrameReader, framed } from '../../../functions/core/kafka/serve/wire.js';
import { kcatAvailable, type MockKafka, startMockKafka } from '../../support/kafka-broker.js';
import { kafkaClient } from './kafka-kit.js';

const RECORDS = 12;
const PASSWORD = 'correct horse battery';

function selfSigned(dir: string, name: string): { cert: string; key: string } {
  const cert = join(dir, `${name}.pem`);
  const key = join(dir, `${name}.key`);
  execFileSync(
    'openssl',
    [
      ...[
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
      ],
      ...['-subj', `/CN=${name}`, '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', cert],
    ],
    { stdio: 'ignore' },
  );
  return { cert, key };
}

function request(apiKey: number, version: number, body: Buffer, correlationId = 7): Buffer {
  const header = Buffer.alloc(10);
  header.writeInt16BE(apiKey, 0);
  header.writeInt16BE(version, 2);
  header.writeInt32BE(correlationId, 4);
  header.writeInt16BE(-1, 8);
  return framed(Buffer.concat([header, body]));
}

/**
 * Sends the requests one after the other, each once the previous one is answered; resolves with the
 * answers (after their correlation id) once the connection closes.
 */
function converse(socket: Socket, requests: Buffer[]): Promise<Buffer[]> {
  const answers: Buffer[] = [];
  const reader = new FrameReader();
  return new Promise((resolve) => {
    const next = () => {
      const r = requests.shift();
      if (r) socket.write(r);
    };
    socket.on('data', (chunk: Buffer) => {
      for (const frame of reader.push(chunk)) answers.push(frame.subarray(4));
      next();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(answers));
    if (socket instanceof TLSSocket) socket.once('secureConnect', next);
    else socket.once('connect', next);
  });
}

/** The API keys of an ApiVersions v0 answer. @throws when its error code is not 0 */
function apiKeys(d: KafkaDecoder): number[] {
  const code = d.readInt16();
  if (code !== 0) throw new Error(`ApiVersions error ${code}`);
  return Array.from({ length: d.readInt32() }, () => [d.readInt16(), d.readInt16(), d.readInt16()][0]);
}

const handshake = (mechanism: string) => request(17, 1, new Encoder().writeString(mechanism).buffer);
const authenticate = (bytes: string) => request(36, 1, new Encoder().writeBytes(Buffer.from(bytes)).buffer);
const METADATA_ALL = request(3, 1, new Encoder().writeInt32(-1).buffer);

describe.skipIf(!kcatAvailable())('floe kafka-serve: TLS and SASL on both sides', () => {
  let mock: MockKafka;
  let dir: string;
  let server: { cert: string; key: string };
  let secured: KafkaProxy;
  let chained: KafkaProxy | undefined;
  const log: string[] = [];
  const topic = `secure-${randomUUID()}`;
  const at = (p: KafkaProxy) => `${p.endpoint.host}:${p.endpoint.port}`;
  const tableless = () => ({
    cold: new ColdView([], { kind: 'committed' }, async () => undefined),
    batches: new ColdBatches(new TableRecords(() => () => Buffer.alloc(0))),
  });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'floe-kserve-tls-'));
    server = selfSigned(dir, 'server');
    mock = await startMockKafka(1);
    const producer = kafkaClient(mock.bootstrapServers).producer({ allowAutoTopicCreation: true });
    await producer.connect();
    await producer.send({
      topic,
      acks: -1,
      messages: Array.from({ length: RECORDS }, (_, i) => ({ partition: 0, key: `k${i}`, value: `v${i}` })),
    });
    await producer.disconnect();
    const [host, port] = mock.bootstrapServers.split(':');
    secured = await startKafkaProxy({
      bootstrap: [{ host, port: Number(port) }],
      host: '127.0.0.1',
      port: 0,
      ...tableless(),
      log: (l) => log.push(l),
      listener: {
        tls: { cert: await readFile(server.cert), key: await readFile(server.key) },
        sasl: {
          mechanisms: ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'],
          users: SaslUsers.parse(`alice:${PASSWORD}\nfloe:${PASSWORD}!\n`, 'users', [
            'PLAIN',
            'SCRAM-SHA-256',
            'SCRAM-SHA-512',
          ]),
        },
      },
    });
  });
  afterAll(async () => {
    await chained?.close();
    await secured?.close();
    await mock?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('kcat reads every record over SASL_SSL with SCRAM-SHA-256, trusting the CA made here', async () => {
    // Act
    const { stdout } = await promisify(execFile)(
      'kcat',
      [
        ...[
          '-C',
          '-b',
          at(secured),
          '-t',
          topic,
          '-p',
          '0',
          '-o',
          'beginning',
          '-e',
          '-q',
          '-f',
          '%o %k %s\\n',
        ],
        ...['-X', 'security.protocol=SASL_SSL', '-X', 'sasl.mechanisms=SCRAM-SHA-256'],
        ...[
          '-X',
          'sasl.username=alice',
          '-X',
          `sasl.password=${PASSWORD}`,
          '-X',
          `ssl.ca.location=${server.cert}`,
        ],
      ],
      { timeout: 30_000 },
    );
    // Assess
    expect(stdout.split('\n').filter(Boolean)).toEqual(
      Array.from({ length: RECORDS }, (_, i) => `${i} k${i} v${i}`),
    );
  });

  it('a kafkajs consumer group reads through TLS and SCRAM-SHA-512', async () => {
    // Prepare
    const kafka = new Kafka({
      brokers: [at(secured)],
      clientId: 'floe-test',
      logLevel: logLevel.NOTHING,
      ssl: { ca: [await readFile(server.cert, 'utf8')] },
      sasl: { mechanism: 'scram-sha-512', username: 'alice', password: PASSWORD },
    });
    const consumer = kafka.consumer({ groupId: `g-${randomUUID()}`, maxWaitTimeInMs: 100 });
    const seen: string[] = [];
    // Act
    await consumer.connect();
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        consumer
          .run({
            eachMessage: async ({ message }) => {
              seen.push(`${message.offset} ${message.key} ${message.value}`);
              if (seen.length === RECORDS) resolve();
            },
          })
          .catch(reject);
      });
    } finally {
      await consumer.disconnect();
    }
    // Assess
    expect(seen).toEqual(Array.from({ length: RECORDS }, (_, i) => `${i} k${i} v${i}`));
  });

  it('answers a wrong password with SASL_AUTHENTICATION_FAILED (58) and closes', async () => {
    // Act
    const answers = await converse(connectTls({ ...secured.endpoint, ca: await readFile(server.cert) }), [
      handshake('PLAIN'),
      authenticate(`\u0000alice\u0000${PASSWORD}.`),
      METADATA_ALL,
    ]);
    // Assess: the handshake and the refusal, nothing for the Metadata after it
    expect(answers).toHaveLength(2);
    expect(answers[0].readInt16BE(0)).toBe(0);
    const refusal = new Decoder(answers[1]);
    expect(refusal.readInt16()).toBe(58);
    expect(refusal.readString()).toMatch(/Authentication failed .* SASL mechanism PLAIN/);
  });

  it('closes a plaintext client at the TLS port, and an API before authentication, without an answer', async () => {
    // Act
    const plaintext = await converse(connectTcp(secured.endpoint), [request(18, 0, Buffer.alloc(0))]);
    const early = await converse(connectTls({ ...secured.endpoint, ca: await readFile(server.cert) }), [
      request(18, 0, Buffer.alloc(0)),
      METADATA_ALL,
    ]);
    const outOfOrder = await converse(connectTls({ ...secured.endpoint, ca: await readFile(server.cert) }), [
      authenticate('\u0000alice\u0000x'),
    ]);
    // Assess
    expect(plaintext).toEqual([]);
    expect(early).toHaveLength(1); // ApiVersions only, which advertises SASL
    const apis = new Decoder(early[0]);
    const keys = apiKeys(apis);
    expect(keys).toEqual(expect.arrayContaining([17, 36, 1, 3]));
    expect(outOfOrder.map((a) => a.readInt16BE(0))).toEqual([34]);
    expect(log.join('\n')).toMatch(/refused a TLS connection/);
  });

  it('with client certificates required, answers a client presenting one signed by the CA and closes one without', async () => {
    // Prepare
    const client = selfSigned(dir, 'client');
    const mutual = await startKafkaProxy({
      bootstrap: [secured.endpoint],
      host: '127.0.0.1',
      port: 0,
      ...tableless(),
      listener: {
        tls: {
          cert: await readFile(server.cert),
          key: await readFile(server.key),
          ca: await readFile(client.cert),
          requestCert: true,
          rejectUnauthorized: true,
        },
      },
      upstream: await upstreamSecurityOf({
        tls: { caFile: server.cert },
        sasl: { mechanism: 'plain', username: 'floe', password: `${PASSWORD}!` },
      }),
    });
    try {
      const ca = await readFile(server.cert);
      // Act
      const withCert = await converse(
        connectTls({
          ...mutual.endpoint,
          ca,
          cert: await readFile(client.cert),
          key: await readFile(client.key),
        }),
        [request(18, 0, Buffer.alloc(0)), request(99, 0, Buffer.alloc(0))],
      );
      const without = await converse(connectTls({ ...mutual.endpoint, ca }), [
        request(18, 0, Buffer.alloc(0)),
      ]);
      // Assess: ApiVersions answered (the unknown API after it closes the connection), nothing without a certificate
      expect(withCert).toHaveLength(1);
      const keys = apiKeys(new Decoder(withCert[0]));
      expect(keys).toContain(1);
      expect(keys).not.toContain(17); // no SASL here: SaslHandshake and SaslAuthenticate not advertised
      expect(keys).not.toContain(36);
      expect(without).toEqual([]);
    } finally {
      await mutual.close();
    }
  });

  it('reaches a cluster over TLS and SCRAM as floe: a plaintext endpoint in front of the secured one serves kcat', async () => {
    // Prepare
    const caFile = server.cert;
    const upstream = (password: string) =>
      upstreamSecurityOf({
        tls: { caFile },
        sasl: { mechanism: 'scram-sha-512', username: 'floe', password },
      });
    const refused = await startKafkaProxy({
      bootstrap: [secured.endpoint],
      host: '127.0.0.1',
      port: 0,
      ...tableless(),
      upstream: await upstream(PASSWORD),
    }).catch((e: unknown) => e);
    chained = await startKafkaProxy({
      bootstrap: [secured.endpoint],
      host: '127.0.0.1',
      port: 0,
      ...tableless(),
      upstream: await upstream(`${PASSWORD}!`),
    });
    // Act
    const { stdout } = await promisify(execFile)(
      'kcat',
      ['-C', '-b', at(chained), '-t', topic, '-p', '0', '-o', 'beginning', '-e', '-q', '-f', '%o %s\\n'],
      { timeout: 30_000 },
    );
    // Assess
    expect(refused).toBeInstanceOf(UpstreamAuthError);
    expect((refused as Error).message).toMatch(/refused floe's SASL SCRAM-SHA-512 authentication/);
    expect(stdout.split('\n').filter(Boolean)).toEqual(
      Array.from({ length: RECORDS }, (_, i) => `${i} v${i}`),
    );
  });
});
