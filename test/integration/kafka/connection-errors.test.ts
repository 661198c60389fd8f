/**
 * What `floe` says when Kafka is not what the flags expect, as a user runs it (the CLI as a child
 * process): a broker that does not answer, `--tls` against a plaintext listener (librdkafka's mock
 * cluster through kcat), and a time lookup the broker cannot answer (the mock cluster cannot look
 * offsets up by time). Each fails with exit 1 and one line saying what to do. Plaintext against a TLS
 * listener and a refused certificate are test/unit/kafka/broker-check.test.ts's (no child process).
 */
import { randomUUID } from 'node:crypto';
import { createServer as createTcpServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kcatAvailable, type MockKafka, startMockKafka } from '../../support/kafka-broker.js';
import { exitOf, kafkaClient, makeWarehouse, produce, spawnFloe } from './kafka-kit.js';

/** A loopback port nothing listens on: a server's, closed. */
async function closedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** floe's output lines that are not blank. */
function linesOf(output: string): string[] {
  return output.split('\n').filter((line) => line.trim() !== '');
}

describe.skipIf(!kcatAvailable())('floe against Kafka that is not what the flags say', () => {
  let broker: MockKafka;

  beforeAll(async () => {
    broker = await startMockKafka(1);
  });
  afterAll(async () => {
    await broker?.stop();
  });

  async function backfill(servers: string, extra: string[] = []) {
    const { dir, schemaFile } = await makeWarehouse();
    const floe = spawnFloe([
      'backfill',
      '--bootstrap-servers',
      servers,
      '--topic',
      `t-${randomUUID()}`,
      '--warehouse',
      dir,
      '--table',
      'app.events',
      '--schema',
      schemaFile,
      ...extra,
    ]);
    const { code } = await exitOf(floe, 60_000);
    return { code, output: floe.output() };
  }

  it('a broker that does not answer: one line naming --bootstrap-servers, the address and "refused"', async () => {
    // Prepare
    const address = `127.0.0.1:${await closedPort()}`;

    // Act
    const { code, output } = await backfill(address);

    // Assess: no kafkajs retry lines, no catalog hint
    expect(code, output).toBe(1);
    const errors = linesOf(output).filter((line) => line.startsWith('floe: cannot'));
    expect(errors).toEqual([
      expect.stringMatching(
        new RegExp(`--bootstrap-servers ${address} .*connection refused.*is the broker running`),
      ),
    ]);
    expect(output).not.toMatch(/kafka error|KafkaJS|--uri|AWS_ENDPOINT_URL/);
  });

  it('--tls against a plaintext listener says TLS and to leave it out', async () => {
    const { code, output } = await backfill(broker.bootstrapServers, ['--tls']);
    expect(code, output).toBe(1);
    expect(output).toMatch(
      /floe: --tls: no TLS handshake with --bootstrap-servers 127\.0\.0\.1:\d+ .*leave out --tls/,
    );
    expect(output).not.toMatch(/kafka error|KafkaJS/);
  });

  it('backfill --from a time the broker cannot look up fails instead of reading nothing', async () => {
    // Prepare: records the lookup should find
    const { dir, schemaFile } = await makeWarehouse();
    const topic = `bytime-${randomUUID()}`;
    await produce(kafkaClient(broker.bootstrapServers), topic, 0, 40, 20);

    // Act
    const floe = spawnFloe([
      'backfill',
      '--bootstrap-servers',
      broker.bootstrapServers,
      '--topic',
      topic,
      '--warehouse',
      dir,
      '--table',
      'app.events',
      '--schema',
      schemaFile,
      '--from',
      '2026-11-01T00:00:00Z',
      '--to',
      'latest',
    ]);
    const { code } = await exitOf(floe, 60_000);

    // Assess
    expect(code, floe.output()).toBe(1);
    expect(floe.output()).toMatch(/cannot look up the offsets of .* by time.*--from earliest/);
    expect(floe.output()).not.toMatch(/done: 0 records read/);
  });

  it('run --starting-position at-timestamp fails the same way instead of waiting', async () => {
    // Prepare
    const { dir, schemaFile } = await makeWarehouse();
    const topic = `bytime-run-${randomUUID()}`;
    await produce(kafkaClient(broker.bootstrapServers), topic, 0, 40, 20);

    // Act
    const floe = spawnFloe([
      'run',
      '--bootstrap-servers',
      broker.bootstrapServers,
      '--topics',
      topic,
      '--warehouse',
      dir,
      '--table',
      'app.events',
      '--schema',
      schemaFile,
      '--starting-position',
      'at-timestamp',
      '--starting-timestamp',
      '2026-11-01T00:00:00Z',
      '--exit-when-idle',
      '2000',
    ]);
    const { code } = await exitOf(floe, 60_000);

    // Assess
    expect(code, floe.output()).toBe(1);
    expect(floe.output()).toMatch(
      /cannot look up the offsets of .* by time.*--starting-position trim-horizon/,
    );
  });
});
