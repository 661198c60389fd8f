/**
 * MSK IAM auth: the flags, the kafkajs configuration built from them (kafkajs's `oauthbearer` with the
 * signer's token), and the token reuse. The signer is mocked: nothing here reaches AWS or MSK — this
 * cannot be checked against a real MSK cluster on this machine.
 */
import { describe, expect, it, vi } from 'vitest';

const generateAuthToken = vi.fn(async ({ region }: { region: string }) => ({
  token: `signed-for-${region}-${generateAuthToken.mock.calls.length}`,
  expiryTime: Date.now() + 900_000,
}));
vi.mock('aws-msk-iam-sasl-signer-js', () => ({ generateAuthToken }));

const { connectionFromOptions, parseKafkaArgs } = await import('../../../functions/cli/kafka-options.js');
const { kafkaConfigOf } = await import('../../../functions/core/kafka/kafka-client.js');
const { mskIamTokenProvider, MSK_TOKEN_REFRESH_MARGIN_MS, MskIamAuthError } = await import(
  '../../../functions/core/kafka/msk-iam.js'
);

const base = ['--bootstrap-servers', 'b-1.msk.example:9098', '--warehouse', 'wh', '--table', 'ns.t'];
const iam = ['--sasl-mechanism', 'aws-msk-iam'];

describe('MSK IAM flags', () => {
  it('takes the region from --aws-region, else AWS_REGION', () => {
    const flagged = connectionFromOptions(
      parseKafkaArgs([...base, ...iam, '--tls', '--aws-region', 'eu-west-1'], 'run'),
      { AWS_REGION: 'us-east-1' },
    );
    expect(flagged.sasl).toEqual({ mechanism: 'aws-msk-iam', region: 'eu-west-1' });
    expect(flagged.tls).toBeDefined();
    const fromEnv = connectionFromOptions(parseKafkaArgs([...base, ...iam, '--tls'], 'run'), {
      AWS_REGION: 'us-east-1',
    });
    expect(fromEnv.sasl).toEqual({ mechanism: 'aws-msk-iam', region: 'us-east-1' });
  });

  it.each([
    [[...iam, '--aws-region', 'eu-west-1'], /needs --tls/],
    [[...iam, '--tls'], /needs the cluster's region: --aws-region or AWS_REGION/],
    [[...iam, '--tls', '--aws-region', 'r', '--sasl-username', 'u'], /leave out --sasl-username/],
    [['--aws-region', 'eu-west-1'], /--aws-region goes with --sasl-mechanism aws-msk-iam/],
  ])('refuses %j', (flags, message) => {
    expect(() => connectionFromOptions(parseKafkaArgs([...base, ...flags], 'run'), {})).toThrow(message);
  });
});

describe('the kafkajs configuration for MSK IAM', () => {
  it('is oauthbearer over TLS with the signed token as the value', async () => {
    generateAuthToken.mockClear();
    const config = await kafkaConfigOf({
      brokers: ['b-1.msk.example:9098'],
      sasl: { mechanism: 'aws-msk-iam', region: 'eu-west-1' },
      tls: {},
    });
    expect(config.ssl).toBeTruthy();
    expect(config.sasl?.mechanism).toBe('oauthbearer');
    const sasl = config.sasl as { oauthBearerProvider: () => Promise<{ value: string }> };
    expect(generateAuthToken).not.toHaveBeenCalled(); // signed at connect time, not when configured
    const first = await sasl.oauthBearerProvider();
    expect(first).toEqual({ value: 'signed-for-eu-west-1-1' });
    expect(generateAuthToken).toHaveBeenCalledWith({ region: 'eu-west-1' });
    // Every broker connection asks; one token serves them all while it is fresh.
    expect(await sasl.oauthBearerProvider()).toEqual(first);
    expect(generateAuthToken).toHaveBeenCalledTimes(1);
  });

  it('refuses MSK IAM without TLS (a library caller, past the CLI check)', async () => {
    await expect(
      kafkaConfigOf({ brokers: ['b:9098'], sasl: { mechanism: 'aws-msk-iam', region: 'eu-west-1' } }),
    ).rejects.toThrow(/MSK IAM authentication needs TLS/);
  });

  it('leaves SCRAM as it was', async () => {
    const config = await kafkaConfigOf({
      brokers: ['b:9096'],
      sasl: { mechanism: 'scram-sha-512', username: 'u', password: 'p' },
    });
    expect(config.sasl).toEqual({ mechanism: 'scram-sha-512', username: 'u', password: 'p' });
    expect(config.ssl).toBeUndefined();
  });
});

describe('mskIamTokenProvider', () => {
  it('signs again once the token is within the refresh margin of its expiry', async () => {
    let clock = 1_000_000;
    let n = 0;
    const generate = vi.fn(async () => ({ token: `t${++n}`, expiryTime: clock + 900_000 }));
    const provide = mskIamTokenProvider(generate, 'eu-west-1', () => clock);
    expect(await provide()).toEqual({ value: 't1' });
    clock += 900_000 - MSK_TOKEN_REFRESH_MARGIN_MS - 1;
    expect(await provide()).toEqual({ value: 't1' });
    clock += 2;
    expect(await provide()).toEqual({ value: 't2' });
    expect(generate).toHaveBeenCalledTimes(2);
  });

  it('shares one signing among concurrent connections, and a failure is retried on the next ask', async () => {
    let fail = true;
    const generate = vi.fn(async () => {
      if (fail) throw new Error('Could not load credentials from any providers');
      return { token: 'ok', expiryTime: Date.now() + 900_000 };
    });
    const provide = mskIamTokenProvider(generate, 'eu-west-1');
    const both = await Promise.allSettled([provide(), provide()]);
    expect(generate).toHaveBeenCalledTimes(1);
    for (const r of both) {
      expect(r.status).toBe('rejected');
      if (r.status === 'rejected') {
        expect(r.reason).toBeInstanceOf(MskIamAuthError);
        expect(String(r.reason.message)).toMatch(/eu-west-1.*Could not load credentials/);
      }
    }
    fail = false;
    expect(await provide()).toEqual({ value: 'ok' });
  });
});
