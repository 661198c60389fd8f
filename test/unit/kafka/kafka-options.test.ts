/** Flags of `floe run` and `floe backfill`, and the pure helpers under them; no broker. */
import { describe, expect, it } from 'vitest';
import { backfillConfigFromOptions } from '../../../functions/cli/commands/backfill.js';
import { connectionFromOptions, parseKafkaArgs } from '../../../functions/cli/kafka-options.js';
import { runConfigFromOptions } from '../../../functions/cli/commands/run.js';
import { main } from '../../../functions/cli/main.js';
import { UsageError } from '../../../functions/cli/options.js';
import { LakeError, CommitFailedError, ValidationError } from '../../../functions/core/errors.js';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveRanges } from '../../../functions/core/kafka/backfill.js';
import { createKafka } from '../../../functions/core/kafka/kafka-client.js';
import { backoffDelay, deliverWithRetry } from '../../../functions/core/kafka/deliver-with-retry.js';
import { isCaughtUp, lagOf } from '../../../functions/core/kafka/partition-progress.js';

const base = ['--bootstrap-servers', 'b1:9092,b2:9093', '--warehouse', 'wh', '--table', 'ns.t'];

describe('floe run flags', () => {
  it('takes the ESM defaults: batch size 100, window 500 ms, latest', () => {
    const config = runConfigFromOptions(parseKafkaArgs([...base, '--topics', 'a, b'], 'run'), {});
    expect(config).toMatchObject({
      topics: ['a', 'b'],
      batchSize: 100,
      batchingWindowMs: 500,
      startingPosition: 'latest',
      connection: { brokers: ['b1:9092', 'b2:9093'], clientId: 'floe' },
    });
    expect(config.exitWhenIdleMs).toBeUndefined();
  });

  it('reads batching, starting position and idleness', () => {
    const config = runConfigFromOptions(
      parseKafkaArgs(
        [
          ...base,
          '--topics',
          'a',
          '--batch-size',
          '10000',
          '--batching-window-ms',
          '0',
          '--starting-position',
          'at-timestamp',
          '--starting-timestamp',
          '2026-11-30T12:00:00Z',
          '--exit-when-idle',
          '3000',
          '--group',
          'g',
        ],
        'run',
      ),
      {},
    );
    expect(config).toMatchObject({
      batchSize: 10_000,
      batchingWindowMs: 0,
      startingPosition: 'at-timestamp',
      startingTimestampMs: Date.parse('2026-11-30T12:00:00Z'),
      exitWhenIdleMs: 3000,
      group: 'g',
    });
  });

  it.each([
    [['--batch-size', '10001'], /--batch-size must be an integer from 1 to 10000/],
    [['--batch-size', '1.5'], /--batch-size/],
    [['--batching-window-ms', '300001'], /--batching-window-ms/],
    [
      ['--starting-position', 'earliest'],
      /--starting-position must be one of latest, trim-horizon, at-timestamp/,
    ],
    [['--starting-position', 'at-timestamp'], /needs --starting-timestamp/],
    [['--starting-position', 'at-timestamp', '--starting-timestamp', 'yesterday'], /ISO-8601/],
    [['--starting-timestamp', '2026-11-30T00:00:00Z'], /goes with --starting-position at-timestamp/],
  ])('refuses %j', (flags, message) => {
    expect(() =>
      runConfigFromOptions(parseKafkaArgs([...base, '--topics', 'a', ...flags], 'run'), {}),
    ).toThrow(message);
  });

  it('needs brokers and topics, and refuses unknown flags and arguments', () => {
    expect(() => runConfigFromOptions(parseKafkaArgs(['--topics', 'a'], 'run'), {})).toThrow(
      /--bootstrap-servers is required/,
    );
    expect(() => runConfigFromOptions(parseKafkaArgs(base, 'run'), {})).toThrow(/--topics is required/);
    expect(() => parseKafkaArgs([...base, '--bogus', 'x'], 'run')).toThrow(UsageError);
    expect(() => parseKafkaArgs([...base, 'extra'], 'run')).toThrow(/takes no arguments/);
    expect(() =>
      runConfigFromOptions(parseKafkaArgs(['--bootstrap-servers', 'nohost', '--topics', 'a'], 'run'), {}),
    ).toThrow(/not HOST:PORT/);
  });
});

describe('dispatch from the floe command line', () => {
  it('hands run, backfill and redrive-failed their own flags; bad usage exits 2', async () => {
    const stderr = process.stderr.write;
    let text = '';
    process.stderr.write = ((chunk: string) => {
      text += chunk;
      return true;
    }) as typeof process.stderr.write;
    try {
      expect(await main(['run', '--topics', 'a'])).toBe(2);
      expect(text).toMatch(/--bootstrap-servers is required/);
      expect(
        await main(['backfill', '--bootstrap-servers', 'b:1', '--warehouse', 'wh', '--table', 'a.b']),
      ).toBe(2);
      expect(text).toMatch(/--topic is required/);
      expect(await main(['redrive-failed', '--warehouse', 'wh', '--table', 'a.b'])).toBe(2);
      expect(text).toMatch(/one of --from s3:\/\/bucket\/prefix, --from-file PATH, --from-topic T/);
    } finally {
      process.stderr.write = stderr;
    }
  });
});

describe('Kafka connection flags', () => {
  it('SASL/SCRAM with the password from the environment', () => {
    const values = parseKafkaArgs(
      [...base, '--sasl-mechanism', 'scram-sha-512', '--sasl-username', 'u'],
      'run',
    );
    expect(connectionFromOptions(values, { FLOE_KAFKA_SASL_PASSWORD: 'p' }).sasl).toEqual({
      mechanism: 'scram-sha-512',
      username: 'u',
      password: 'p',
    });
  });

  it('SASL/PLAIN needs a user and a password; a user needs a mechanism', () => {
    expect(() =>
      connectionFromOptions(parseKafkaArgs([...base, '--sasl-mechanism', 'plain'], 'run'), {}),
    ).toThrow(/needs --sasl-username and a password/);
    expect(() =>
      connectionFromOptions(parseKafkaArgs([...base, '--sasl-mechanism', 'gssapi'], 'run'), {}),
    ).toThrow(/plain, scram-sha-256, scram-sha-512/);
    expect(() => connectionFromOptions(parseKafkaArgs([...base, '--sasl-username', 'u'], 'run'), {})).toThrow(
      /need --sasl-mechanism/,
    );
  });

  it('TLS and mutual TLS from PEM files; half a pair is refused', () => {
    expect(connectionFromOptions(parseKafkaArgs([...base, '--tls'], 'run'), {}).tls).toEqual({
      caFile: undefined,
      certFile: undefined,
      keyFile: undefined,
      rejectUnauthorized: undefined,
    });
    const mtls = connectionFromOptions(
      parseKafkaArgs([...base, '--tls-ca', 'ca.pem', '--tls-cert', 'c.pem', '--tls-key', 'k.pem'], 'run'),
      {},
    );
    expect(mtls.tls).toMatchObject({ caFile: 'ca.pem', certFile: 'c.pem', keyFile: 'k.pem' });
    expect(() => connectionFromOptions(parseKafkaArgs([...base, '--tls-cert', 'c.pem'], 'run'), {})).toThrow(
      /both --tls-cert and --tls-key/,
    );
  });
});

describe('createKafka', () => {
  it('reads the TLS files (no connection is made until used)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'floe-tls-'));
    for (const f of ['ca.pem', 'c.pem', 'k.pem']) await writeFile(join(dir, f), '-----BEGIN X-----\n');
    const kafka = await createKafka({
      brokers: ['b:9093'],
      tls: { caFile: join(dir, 'ca.pem'), certFile: join(dir, 'c.pem'), keyFile: join(dir, 'k.pem') },
      sasl: { mechanism: 'scram-sha-256', username: 'u', password: 'p' },
    });
    expect(typeof kafka.consumer).toBe('function');
  });

  it('says which TLS file it cannot read, and refuses half an mTLS pair', async () => {
    await expect(
      createKafka({ brokers: ['b:9093'], tls: { caFile: '/nonexistent/ca.pem' } }),
    ).rejects.toThrow(/cannot read the CA certificate \/nonexistent\/ca\.pem: ENOENT/);
    await expect(createKafka({ brokers: ['b:9093'], tls: { certFile: 'c.pem' } })).rejects.toThrow(
      ValidationError,
    );
  });
});

describe('floe backfill flags', () => {
  it('defaults to the whole topic in full ESM batches', () => {
    expect(backfillConfigFromOptions(parseKafkaArgs([...base, '--topic', 't'], 'backfill'))).toMatchObject({
      topic: 't',
      from: 'earliest',
      to: 'latest',
      batchSize: 10_000,
    });
  });

  it('takes ISO times and refuses a reversed or malformed range', () => {
    const config = backfillConfigFromOptions(
      parseKafkaArgs(
        [...base, '--topic', 't', '--from', '2026-11-01T00:00:00Z', '--to', '2026-11-02'],
        'backfill',
      ),
    );
    expect(config.from).toBe(Date.parse('2026-11-01T00:00:00Z'));
    expect(config.to).toBe(Date.parse('2026-11-02'));
    expect(() =>
      backfillConfigFromOptions(
        parseKafkaArgs([...base, '--topic', 't', '--from', '2026-11-02', '--to', '2026-11-01'], 'backfill'),
      ),
    ).toThrow(/before --from/);
    expect(() =>
      backfillConfigFromOptions(parseKafkaArgs([...base, '--topic', 't', '--from', 'monday'], 'backfill')),
    ).toThrow(/ISO-8601/);
    expect(() => backfillConfigFromOptions(parseKafkaArgs([...base, '--topics', 't'], 'backfill'))).toThrow(
      /--topic is required/,
    );
  });

  it.each([
    ['--group', 'g'],
    ['--session-timeout-ms', '6000'],
  ])('refuses the consumer group flag %s (backfill joins no group)', (flag, value) => {
    expect(() =>
      backfillConfigFromOptions(parseKafkaArgs([...base, '--topic', 't', flag, value], 'backfill')),
    ).toThrow(`${flag} is floe run's (its consumer group's): backfill reads without a consumer group`);
  });
});

describe('resolveRanges', () => {
  const watermarks = [
    { partition: 1, low: 10n, high: 50n },
    { partition: 0, low: 0n, high: 100n },
  ];

  it('is [low, high) per partition without bounds', () => {
    expect(resolveRanges('t', watermarks)).toEqual([
      { topic: 't', partition: 0, start: 0n, end: 100n },
      { topic: 't', partition: 1, start: 10n, end: 50n },
    ]);
  });

  it('clamps time lookups into the watermarks and never ends before it starts', () => {
    const from = new Map([
      [0, 40n],
      [1, 5n],
    ]);
    const to = new Map([
      [0, 30n],
      [1, 70n],
    ]);
    expect(resolveRanges('t', watermarks, from, to)).toEqual([
      { topic: 't', partition: 0, start: 40n, end: 40n },
      { topic: 't', partition: 1, start: 10n, end: 50n },
    ]);
  });
});

describe('partition progress', () => {
  it('is caught up when the committed position reached the high watermark', () => {
    expect(isCaughtUp({ topic: 't', partition: 0, committed: 10n, high: 10n }, 'trim-horizon')).toBe(true);
    expect(isCaughtUp({ topic: 't', partition: 0, committed: 9n, high: 10n }, 'trim-horizon')).toBe(false);
    expect(isCaughtUp({ topic: 't', partition: 0, high: 10n }, 'trim-horizon')).toBe(false);
  });

  it('counts a partition nothing was committed on by where the group started', () => {
    expect(isCaughtUp({ topic: 't', partition: 0, low: 4n, high: 4n }, 'trim-horizon')).toBe(true);
    expect(isCaughtUp({ topic: 't', partition: 0, low: 0n, high: 4n, startHigh: 4n }, 'latest')).toBe(true);
    expect(isCaughtUp({ topic: 't', partition: 0, low: 0n, high: 5n, startHigh: 4n }, 'latest')).toBe(false);
    expect(lagOf({ topic: 't', partition: 0, low: 2n, high: 9n }, 'trim-horizon')).toBe(7n);
    expect(lagOf({ topic: 't', partition: 0, committed: 9n, high: 9n }, 'latest')).toBe(0n);
    expect(lagOf({ topic: 't', partition: 0, high: 9n }, 'at-timestamp')).toBeUndefined();
  });
});

describe('deliverWithRetry', () => {
  const noSleep = async () => undefined;

  it('retries a retryable failure with doubling backoff until it succeeds', async () => {
    let calls = 0;
    const delays: number[] = [];
    const outcome = await deliverWithRetry(
      async () => {
        calls++;
        if (calls < 4) throw new CommitFailedError('conflict');
        return 'ok';
      },
      { shouldStop: () => false, sleep: noSleep, onRetry: (_e, _a, d) => delays.push(d) },
    );
    expect(outcome).toEqual({ status: 'delivered', result: 'ok', attempts: 4 });
    expect(delays).toEqual([500, 1000, 2000]);
    expect(backoffDelay({ initialDelayMs: 500, maxDelayMs: 30_000 }, 20)).toBe(30_000);
  });

  it('hands back an error retrying cannot fix, and abandons on stop', async () => {
    const failed = await deliverWithRetry(
      async () => {
        throw new ValidationError('no route');
      },
      { shouldStop: () => false, sleep: noSleep },
    );
    expect(failed.status).toBe('failed');
    const abandoned = await deliverWithRetry(
      async () => {
        throw new LakeError('flaky', { retryable: true });
      },
      { shouldStop: () => true, sleep: noSleep },
    );
    expect(abandoned).toMatchObject({ status: 'abandoned', attempts: 1 });
  });
});
