/**
 * `floe kafka-serve`'s security flags: what a listener reachable from other machines needs, where
 * users come from, which TLS flags go together, and the cluster side read by the same parser as every
 * other Kafka command. The files' contents are not parsed here (node:tls does at start).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkaServeSecurityFrom, USERS_ENV } from '../../../functions/cli/kafka-serve-security.js';
import { UsageError } from '../../../functions/cli/options.js';

describe('floe kafka-serve security flags', () => {
  let dir: string;
  let tls: Record<string, string>;
  let users: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'floe-kserve-flags-'));
    for (const f of ['cert', 'key', 'ca']) await writeFile(join(dir, f), `${f} pem`);
    users = join(dir, 'users');
    await writeFile(users, 'alice:a long password\nbob:another one\n');
    tls = { 'listener-tls-cert': join(dir, 'cert'), 'listener-tls-key': join(dir, 'key') };
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const base = { 'bootstrap-servers': 'broker:9092' };

  it('opens a non-loopback listener with TLS and SASL users, saying what it is open to', async () => {
    // Act
    const security = await kafkaServeSecurityFrom(
      { ...base, ...tls, 'listener-sasl-users': users },
      '0.0.0.0',
      {},
    );
    // Assess
    expect(security.listenerText).toBe('TLS, SASL PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (2 users)');
    expect(security.warning).toBeUndefined();
    expect(security.listener.sasl?.users.checkPlain('bob', 'another one')).toBe(true);
    expect(security.upstreamText).toBe('plaintext');
  });

  it('refuses a non-loopback listener missing TLS or client authentication, unless --insecure, and then warns', async () => {
    // Act
    const noTls = await kafkaServeSecurityFrom(
      { ...base, 'listener-sasl-users': users },
      '10.0.0.5',
      {},
    ).catch((e: unknown) => e);
    const noAuth = await kafkaServeSecurityFrom({ ...base, ...tls }, '10.0.0.5', {}).catch((e: unknown) => e);
    const insecure = await kafkaServeSecurityFrom(
      { ...base, 'listener-sasl-users': users, insecure: true },
      '10.0.0.5',
      {},
    );
    // Assess
    expect(noTls).toBeInstanceOf(UsageError);
    expect((noTls as Error).message).toMatch(/--host 10\.0\.0\.5 .* no TLS \(--listener-tls-cert/);
    expect((noAuth as Error).message).toMatch(/no client authentication: .* or add --insecure/);
    expect(insecure.warning).toMatch(/plaintext, SASL .*passwords cross the network in clear/);
  });

  it('takes required client certificates as authentication, with their CA', async () => {
    // Act
    const mtls = await kafkaServeSecurityFrom(
      { ...base, ...tls, 'listener-tls-ca': join(dir, 'ca'), 'listener-tls-client-auth': 'required' },
      '0.0.0.0',
      {},
    );
    const caAlone = await kafkaServeSecurityFrom(
      { ...base, ...tls, 'listener-tls-ca': join(dir, 'ca') },
      '127.0.0.1',
      {},
    ).catch((e: unknown) => e);
    const halfPair = await kafkaServeSecurityFrom(
      { ...base, 'listener-tls-cert': join(dir, 'cert') },
      '127.0.0.1',
      {},
    ).catch((e: unknown) => e);
    // Assess
    expect(mtls.listenerText).toBe('TLS with client certificates');
    expect(mtls.listener.tls).toMatchObject({ requestCert: true, rejectUnauthorized: true });
    expect((caAlone as Error).message).toMatch(/--listener-tls-client-auth required go together/);
    expect((halfPair as Error).message).toMatch(/--listener-tls-cert and --listener-tls-key go together/);
  });

  it(`reads users from ${USERS_ENV}, and refuses a bad mechanism or mechanisms without users`, async () => {
    // Act
    const fromEnv = await kafkaServeSecurityFrom(
      { ...base, 'listener-sasl-mechanisms': 'scram-sha-512' },
      '127.0.0.1',
      { [USERS_ENV]: 'carol:pw' },
    );
    const badMechanism = await kafkaServeSecurityFrom(
      { ...base, 'listener-sasl-mechanisms': 'GSSAPI' },
      '127.0.0.1',
      { [USERS_ENV]: 'carol:pw' },
    ).catch((e: unknown) => e);
    const noUsers = await kafkaServeSecurityFrom(
      { ...base, 'listener-sasl-mechanisms': 'PLAIN' },
      '127.0.0.1',
      {},
    ).catch((e: unknown) => e);
    // Assess
    expect(fromEnv.listenerText).toBe('plaintext, SASL SCRAM-SHA-512 (1 user)');
    expect(fromEnv.listener.sasl?.users.scramCredential('carol', 'sha512')).toBeDefined();
    expect((badMechanism as Error).message).toMatch(
      /--listener-sasl-mechanisms takes PLAIN, .* got 'GSSAPI'/,
    );
    expect((noUsers as Error).message).toMatch(/needs users/);
  });

  it("reaches the cluster with the Kafka commands' own --tls/--sasl-* flags and FLOE_KAFKA_SASL_PASSWORD", async () => {
    // Act
    const scram = await kafkaServeSecurityFrom(
      {
        ...base,
        tls: true,
        'tls-ca': join(dir, 'ca'),
        'sasl-mechanism': 'scram-sha-512',
        'sasl-username': 'floe',
      },
      '127.0.0.1',
      { FLOE_KAFKA_SASL_PASSWORD: 'secret' },
    );
    const iamWithoutTls = await kafkaServeSecurityFrom(
      { ...base, 'sasl-mechanism': 'aws-msk-iam', 'aws-region': 'eu-west-1' },
      '127.0.0.1',
      {},
    ).catch((e: unknown) => e);
    // Assess
    expect(scram.upstream).toEqual({
      tls: {
        caFile: join(dir, 'ca'),
        certFile: undefined,
        keyFile: undefined,
        rejectUnauthorized: undefined,
      },
      sasl: { mechanism: 'scram-sha-512', username: 'floe', password: 'secret' },
    });
    expect(scram.upstreamText).toBe('TLS, SASL scram-sha-512 as floe');
    expect((iamWithoutTls as Error).message).toMatch(/aws-msk-iam needs --tls/);
  });
});
