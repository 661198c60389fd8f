/**
 * `floe serve --live` exposed: 200 concurrent loads of one table share one tail read (one cache
 * folder, all 200 OK), bad identifiers get 400 without a path, a stopped broker gives 503 with
 * Retry-After, a token-protected serve refuses missing and wrong tokens and serves REST clients
 * signing in as PyIceberg does (form-encoded client credentials, then Bearer) and floe's own REST
 * catalog client, and TLS with a certificate made here. Against librdkafka's mock cluster (kcat).
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RestCatalog } from '../../../functions/core/catalog/rest/rest-catalog.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { kcatAvailable, type MockKafka, startMockKafka } from '../../support/kafka-broker.js';
import { exitOf, kafkaClient, makeWarehouse, produce, spawnFloe } from '../kafka/kafka-kit.js';
import { commitAll, idsOf, type Served, startServe } from './live-kit.js';

const TABLE_URL = '/v1/namespaces/app/tables/events';
const TOKEN = `token-${randomUUID()}`;
const CLIENT_ID = 'engine';
const CLIENT_SECRET = `secret-${randomUUID()}`;
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

/** A table of 40 committed records and `tail` more only in Kafka. */
async function tableWithTail(bootstrap: string, tail: number): Promise<string> {
  const topic = `serve-${randomUUID()}`;
  const { dir, schemaFile } = await makeWarehouse();
  const kafka = kafkaClient(bootstrap);
  await produce(kafka, topic, 0, 40);
  await commitAll(bootstrap, topic, dir, `g-${randomUUID()}`, ['--schema', schemaFile]);
  await produce(kafka, topic, 40, tail, 500);
  return dir;
}

/** A REST client signing in the way PyIceberg's REST catalog does with `credential=id:secret`. */
async function pyicebergStyleToken(uri: string, scope: string): Promise<string> {
  const response = await fetch(`${uri}/v1/oauth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      scope,
    }).toString(),
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { access_token: string; token_type: string; expires_in: number };
  expect(body.token_type).toBe('bearer');
  expect(body.expires_in).toBeGreaterThan(0);
  return body.access_token;
}

describe.skipIf(!kcatAvailable())('floe serve --live, exposed', () => {
  let broker: MockKafka;
  /**
   * The table the token and TLS cases both serve (40 rows and a tail of 30): made once, by whichever runs
   * first, as each `floe run` into a new group waits out the mock cluster's 3 s first-join delay.
   */
  let served30: Promise<string> | undefined;
  const tableWithTail30 = () => {
    served30 ??= tableWithTail(broker.bootstrapServers, 30);
    return served30;
  };

  beforeAll(async () => {
    broker = await startMockKafka(1);
  });
  afterAll(async () => {
    await broker?.stop();
  });

  it('answers 200 concurrent loads of one table from one tail read, and bad identifiers with 400', async () => {
    // Prepare
    const dir = await tableWithTail(broker.bootstrapServers, 2_000);
    const served = await startServe(dir, ['--live', '--bootstrap-servers', broker.bootstrapServers]);
    try {
      // Act
      const answers = await Promise.all(
        Array.from({ length: 200 }, async () => {
          const response = await fetch(`${served.uri}${TABLE_URL}`);
          return { status: response.status, body: (await response.json()) as Record<string, unknown> };
        }),
      );
      // Assess: all OK, one live version, one cache folder
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
      expect(new Set(answers.map((a) => a.body['metadata-location'])).size).toBe(1);
      const folders = await readdir(join(dir, 'app', 'events', 'floe-live'));
      expect(folders).toHaveLength(1);
      expect(served.floe.output()).toMatch(/warning: http:\/\/127\.0\.0\.1:\d+ is open/);

      // Act + Assess: identifiers no filesystem takes
      for (const name of ['x'.repeat(300), '..%2F..%2Fetc', 'a%00b', 'a%09b']) {
        const response = await fetch(`${served.uri}/v1/namespaces/app/tables/${name}`);
        const text = await response.text();
        expect(response.status, name).toBe(400);
        expect(JSON.parse(text).error.type).toBe('BadRequestException');
        expect(text).not.toContain(dir);
      }
    } finally {
      await served.stop();
    }
  });

  it('answers 503 with Retry-After when the broker stops mid-load, never 500', async () => {
    // Prepare: a broker of its own, stopped while 20 loads are in flight
    const own = await startMockKafka(1);
    const dir = await tableWithTail(own.bootstrapServers, 5_000);
    const served = await startServe(dir, [
      '--live',
      '--bootstrap-servers',
      own.bootstrapServers,
      // How long each load waits on the stopped broker before its 503: no assertion depends on the length.
      '--kafka-timeout',
      '2s',
    ]);
    try {
      // Act
      const inFlight = Array.from({ length: 20 }, () => fetch(`${served.uri}${TABLE_URL}`));
      await own.stop();
      const during = await Promise.all(inFlight);
      const after = await fetch(`${served.uri}${TABLE_URL}`);
      // Assess
      for (const response of [...during, after]) expect([200, 503]).toContain(response.status);
      expect(after.status).toBe(503);
      expect(after.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(await after.json()).toEqual({
        error: { code: 503, type: 'ServiceUnavailableException', message: expect.any(String) },
      });
    } finally {
      await served.stop();
      await own.stop();
    }
  }, 240_000);

  it('refuses a missing or wrong token and serves REST clients with the right one', async () => {
    // Prepare
    const dir = await tableWithTail30();
    const credentials = join(await mkdtemp(join(tmpdir(), 'floe-serve-creds-')), 'clients');
    await writeFile(credentials, `# engines\n${CLIENT_ID}:${CLIENT_SECRET}\n`);
    const served: Served = await startServeWith(dir, broker, ['--client-credentials-file', credentials], {
      FLOE_SERVE_TOKEN: TOKEN,
    });
    try {
      // Act + Assess: no token, a wrong one, a wrong client secret
      expect((await fetch(`${served.uri}${TABLE_URL}`)).status).toBe(401);
      const wrong = await fetch(`${served.uri}${TABLE_URL}`, { headers: { authorization: 'Bearer not-it' } });
      expect(wrong.status).toBe(401);
      expect(((await wrong.json()) as { error: { type: string } }).error.type).toBe('NotAuthorizedException');
      await expect(
        new RestCatalog({ uri: served.uri }).loadTable({ namespace: ['app'], name: 'events' }),
      ).rejects.toThrow();
      await expect(
        new RestCatalog({ uri: served.uri, credential: `${CLIENT_ID}:wrong` }).loadTable({
          namespace: ['app'],
          name: 'events',
        }),
      ).rejects.toThrow();

      // Act + Assess: PyIceberg's sign-in (both scopes it sends), then its calls with the Bearer token
      for (const scope of ['catalog', 'PRINCIPAL_ROLE:ALL']) {
        const token = await pyicebergStyleToken(served.uri, scope);
        const headers = { authorization: `Bearer ${token}` };
        expect((await fetch(`${served.uri}/v1/config`, { headers })).status).toBe(200);
        const listed = await fetch(`${served.uri}/v1/namespaces/app/tables`, { headers });
        expect(await listed.json()).toEqual({ identifiers: [{ namespace: ['app'], name: 'events' }] });
        const loaded = await fetch(`${served.uri}${TABLE_URL}`, { headers });
        expect(loaded.status).toBe(200);
      }

      // Act + Assess: floe's REST client with the fixed token, and with client credentials
      for (const options of [{ token: TOKEN }, { credential: `${CLIENT_ID}:${CLIENT_SECRET}` }]) {
        const catalog = new RestCatalog({ uri: served.uri, ...options });
        const table = await catalog.loadTable({ namespace: ['app'], name: 'events' });
        expect(idsOf(await readScanRows(table, await planScan(table)))).toEqual(range(0, 70));
      }
      expect(served.floe.output()).not.toMatch(/warning:/);
    } finally {
      await served.stop();
    }
  });

  it('serves HTTPS with a certificate made here, to a client that trusts it', async () => {
    // Prepare: a self-signed certificate for 127.0.0.1
    const dir = await tableWithTail30();
    const tls = await mkdtemp(join(tmpdir(), 'floe-serve-tls-'));
    const cert = join(tls, 'cert.pem');
    const key = join(tls, 'key.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        key,
        '-out',
        cert,
      ],
      { stdio: 'ignore' },
    );
    const served = await startServeWith(dir, broker, ['--https-cert', cert, '--https-key', key], {
      FLOE_SERVE_TOKEN: TOKEN,
    });
    try {
      // Act
      const trusted = await httpsGet(`${served.uri}${TABLE_URL}`, { ca: await readText(cert), token: TOKEN });
      // Assess
      expect(served.uri).toMatch(/^https:/);
      expect(trusted.status, trusted.body).toBe(200);
      expect(JSON.parse(trusted.body)['metadata-location']).toContain('floe-live');
      await expect(httpsGet(`${served.uri}${TABLE_URL}`, { token: TOKEN })).rejects.toThrow(
        /self[- ]signed/i,
      );
    } finally {
      await served.stop();
    }
  });

  it('refuses to bind a non-loopback address with neither authentication nor TLS, unless --insecure', async () => {
    const { dir } = await makeWarehouse();
    await mkdir(dir, { recursive: true }); // serve refuses a warehouse folder that is not there
    const refused = spawnFloe(['serve', '--warehouse', dir, '--port', '0', '--host', '0.0.0.0']);
    const { code } = await exitOf(refused);
    expect(code).toBe(2);
    expect(refused.output()).toMatch(/--insecure/);
    const open = spawnFloe(['serve', '--warehouse', dir, '--port', '0', '--host', '0.0.0.0', '--insecure']);
    try {
      await open.waitFor(/at http:\/\/0\.0\.0\.0:\d+/);
      expect(open.output().match(/^warning: /gm)).toHaveLength(1);
    } finally {
      open.child.kill('SIGTERM');
      await exitOf(open);
    }
  });
});

async function readText(path: string): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  return readFile(path, 'utf8');
}

/** `floe serve --live` with extra flags and environment, resolved once it prints its URL. */
async function startServeWith(
  dir: string,
  broker: MockKafka,
  extra: string[],
  env: NodeJS.ProcessEnv,
): Promise<Served> {
  const floe = spawnFloe(
    [
      'serve',
      '--warehouse',
      dir,
      '--port',
      '0',
      '--live',
      '--bootstrap-servers',
      broker.bootstrapServers,
      ...extra,
    ],
    env,
  );
  await floe.waitFor(/at https?:\/\/127\.0\.0\.1:\d+/);
  const uri = /at (https?:\/\/127\.0\.0\.1:\d+)/.exec(floe.output())![1]!;
  return {
    floe,
    uri,
    stop: async () => {
      floe.child.kill('SIGTERM');
      await exitOf(floe);
    },
  };
}

/** A GET over HTTPS trusting `ca` (Node's fetch takes no CA of its own). */
function httpsGet(
  url: string,
  options: { ca?: string; token: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { ca: options.ca, headers: { authorization: `Bearer ${options.token}` } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}
