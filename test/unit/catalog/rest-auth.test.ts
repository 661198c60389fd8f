/**
 * REST catalog authentication and credential vending, against the in-process test server: OAuth2 client
 * credentials (fetch, refresh on 401 and on expiry), bearer tokens, SigV4, vended storage credentials.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterEach, describe, expect, it } from 'vitest';
import { RestCatalog, type RestCatalogOptions } from '../../../functions/core/catalog/rest/rest-catalog.js';
import { RestCatalogError } from '../../../functions/core/catalog/rest/rest-errors.js';
import { isCertainlyNotSent } from '../../../functions/core/catalog/rest/rest-http.js';
import { LakeError } from '../../../functions/core/errors.js';
import { LocalFileIO } from '../../../functions/core/io/local-file-io.js';
import { S3FileIO } from '../../../functions/core/io/s3-file-io.js';
import { appendChange, CONTRACT_SCHEMA } from '../../contract/catalog-contract.js';
import {
  type RecordedRequest,
  RestCatalogServer,
  type RestCatalogServerOptions,
} from '../../support/rest-catalog-server.js';

const ID = { namespace: ['db'], name: 'events' };
const OAUTH = { clientId: 'floe', clientSecret: 's3cret' };

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function startServer(options: Omit<RestCatalogServerOptions, 'warehouse'> = {}) {
  const warehouse = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-rest-auth-'));
  const server = await RestCatalogServer.start({ warehouse, ...options });
  cleanups.push(async () => {
    await server.close();
    await fs.rm(warehouse, { recursive: true, force: true });
  });
  return { server, warehouse };
}

const client = (server: RestCatalogServer, options: Partial<RestCatalogOptions> = {}) =>
  new RestCatalog({ uri: server.uri, ...options });

const bearerOf = (request: RecordedRequest) => request.headers.authorization;

describe('OAuth2 client credentials', () => {
  it('fetches a token with the client credentials and scope catalog, then sends it as a bearer token', async () => {
    // Prepare
    const { server } = await startServer({ oauth: OAUTH });
    const catalog = client(server, { credential: 'floe:s3cret' });

    // Act
    await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });
    await catalog.loadTable(ID);

    // Assess
    expect(server.tokenRequests).toHaveLength(1);
    const form = server.tokenRequests[0];
    expect(Object.fromEntries(form)).toEqual({
      grant_type: 'client_credentials',
      client_id: 'floe',
      client_secret: 's3cret',
      scope: 'catalog',
    });
    const catalogRequests = server.requests.filter((r) => !r.url.startsWith('/v1/oauth'));
    expect(catalogRequests.length).toBeGreaterThan(2);
    for (const request of catalogRequests) expect(bearerOf(request)).toMatch(/^Bearer token-/);
  });

  it('refreshes the token once after a 401 and repeats the request', async () => {
    // Prepare
    const { server } = await startServer({ oauth: OAUTH });
    const catalog = client(server, { credential: 'floe:s3cret' });
    const base = await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });
    server.revokeTokens();
    const before = server.requests.length;

    // Act
    const change = appendChange(base);
    const committed = await catalog.commitTable(ID, change.requirements, change.updates);

    // Assess
    expect(committed.metadata.snapshots).toHaveLength(1);
    expect(server.tokenRequests).toHaveLength(2);
    const after = server.requests.slice(before).filter((r) => !r.url.startsWith('/v1/oauth'));
    expect(after).toHaveLength(2); // the refused commit and its resend
    expect(bearerOf(after[0])).not.toBe(bearerOf(after[1]));
  });

  it('refreshes a token that is about to expire before using it', async () => {
    // Prepare
    const { server } = await startServer({ oauth: OAUTH });
    let clock = Date.now();
    const catalog = client(server, { credential: 'floe:s3cret', now: () => clock });
    await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });
    const firstToken = bearerOf(server.requests[server.requests.length - 1]);

    // Act: an hour later (the server's tokens live 3600 s)
    clock += 3_600_000;
    const before = server.requests.filter((r) => !r.url.startsWith('/v1/oauth')).length;
    await catalog.loadTable(ID);

    // Assess
    expect(server.tokenRequests).toHaveLength(2);
    const catalogRequests = server.requests.filter((r) => !r.url.startsWith('/v1/oauth'));
    expect(catalogRequests.length - before).toBe(1); // no 401 round trip
    expect(bearerOf(catalogRequests[catalogRequests.length - 1])).not.toBe(firstToken);
  });

  it('fails clearly, without retrying, when the credentials are wrong', async () => {
    // Prepare
    const { server } = await startServer({ oauth: OAUTH });
    const catalog = client(server, { credential: 'floe:wrong' });

    // Act
    const attempt = catalog.loadTable(ID);

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(LakeError);
    await expect(attempt).rejects.toThrow(/HTTP 401 invalid_client/);
    await expect(attempt).rejects.toMatchObject({ retryable: false });
  });

  it('uses a configured token endpoint and scope', async () => {
    // Prepare
    const { server } = await startServer({ oauth: OAUTH });
    const catalog = client(server, {
      credential: 'floe:s3cret',
      oauth2ServerUri: `${server.uri}/v1/oauth/tokens`,
      scope: 'PRINCIPAL_ROLE:ALL',
    });

    // Act
    await catalog.properties();

    // Assess
    expect(server.tokenRequests[0].get('scope')).toBe('PRINCIPAL_ROLE:ALL');
  });
});

describe('bearer tokens', () => {
  it('sends a static token and reports a refused one as a non-retryable 401', async () => {
    // Prepare
    const { server } = await startServer({ bearerTokens: ['good-token'] });

    // Act
    await client(server, { token: 'good-token' }).properties();
    const refused = client(server, { token: 'bad-token' }).properties();

    // Assess
    expect(bearerOf(server.requests[0])).toBe('Bearer good-token');
    await expect(refused).rejects.toBeInstanceOf(RestCatalogError);
    await expect(refused).rejects.toMatchObject({ status: 401, retryable: false });
  });
});

describe('SigV4', () => {
  const credentials = {
    accessKeyId: 'AKIDEXAMPLE',
    secretAccessKey: 'wJalrXUtnFEMI/K7MDENG',
    sessionToken: 'session-1',
  };

  /** Re-signs the request the server received, with the signing time it carries: same signature or not. */
  async function resign(request: RecordedRequest, signingName: string): Promise<string> {
    const authorization = String(request.headers.authorization);
    const signedHeaders = /SignedHeaders=([^,]+)/.exec(authorization)?.[1].split(';') ?? [];
    const headers: Record<string, string> = {};
    for (const name of signedHeaders) headers[name] = String(request.headers[name]);
    const url = new URL(request.url, `http://${headers.host}`);
    const amzDate = String(request.headers['x-amz-date']);
    const signingDate = new Date(
      `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
    );
    const signer = new SignatureV4({
      service: signingName,
      region: 'us-east-1',
      credentials,
      sha256: Sha256,
    });
    const signed = await signer.sign(
      {
        method: request.method,
        protocol: 'http:',
        hostname: url.hostname,
        port: Number(url.port),
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers,
        body: request.body === '' ? undefined : request.body,
      },
      { signingDate },
    );
    return String(signed.headers.authorization);
  }

  it.each(['s3tables', 'glue'])(
    'signs every request for signing name %s, verifiably',
    async (signingName) => {
      // Prepare
      const { server } = await startServer();
      const catalog = client(server, { sigv4: { region: 'us-east-1', signingName, credentials } });

      // Act
      const base = await catalog.createTable(
        { namespace: ['db', 'sub'], name: 'events' },
        { schema: CONTRACT_SCHEMA },
      );
      const change = appendChange(base);
      await catalog.commitTable(
        { namespace: ['db', 'sub'], name: 'events' },
        change.requirements,
        change.updates,
      );

      // Assess
      expect(server.requests.length).toBeGreaterThanOrEqual(4);
      for (const request of server.requests) {
        const authorization = String(request.headers.authorization);
        expect(authorization).toMatch(
          new RegExp(
            `^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/\\d{8}/us-east-1/${signingName}/aws4_request, SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}$`,
          ),
        );
        expect(authorization).toMatch(
          /SignedHeaders=[^,]*host;[^,]*x-amz-content-sha256;x-amz-date;x-amz-security-token/,
        );
        expect(request.headers['x-amz-security-token']).toBe('session-1');
        expect(request.headers['x-amz-content-sha256']).toBe(
          createHash('sha256').update(request.body).digest('hex'),
        );
        expect(await resign(request, signingName)).toBe(authorization);
      }
      // the same request sent to another path would not verify
      const commit = server.requests[server.requests.length - 1];
      const elsewhere = { ...commit, url: commit.url.replace('/tables/events', '/tables/other') };
      expect(await resign(elsewhere, signingName)).not.toBe(commit.headers.authorization);
    },
  );
});

describe('vended credentials', () => {
  const vended = {
    's3.access-key-id': 'AKIAVENDED',
    's3.secret-access-key': 'vended-secret',
    's3.session-token': 'vended-token',
    'client.region': 'eu-west-1',
  };

  it('asks for vended credentials and builds an S3FileIO with them from the table config', async () => {
    // Prepare
    const { server } = await startServer({ vendedCredentials: vended });
    const catalog = client(server);
    await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });

    // Act
    const loaded = await catalog.loadTable(ID);

    // Assess
    const load = server.requests.find((r) => r.method === 'GET' && r.url.includes('/tables/events'));
    expect(load?.headers['x-iceberg-access-delegation']).toBe('vended-credentials');
    expect(loaded.io).toBeInstanceOf(S3FileIO);
    const s3 = (loaded.io as S3FileIO).client;
    expect(await s3.config.credentials()).toMatchObject({
      accessKeyId: 'AKIAVENDED',
      secretAccessKey: 'vended-secret',
      sessionToken: 'vended-token',
    });
    expect(await s3.config.region()).toBe('eu-west-1');
    expect((await catalog.loadTable(ID)).io).toBe(loaded.io); // same credentials: same client
  });

  it('uses storage-credentials whose prefix matches the table location, and only those', async () => {
    // Prepare: the warehouse lives under the temp directory
    const matching = await startServer({ vendedCredentials: vended, vendAsStorageCredential: os.tmpdir() });
    const other = await startServer({
      vendedCredentials: vended,
      vendAsStorageCredential: 's3://another-bucket/',
    });
    const catalogs = [client(matching.server), client(other.server)];
    for (const catalog of catalogs) await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });

    // Act
    const [withCredentials, without] = await Promise.all(catalogs.map((catalog) => catalog.loadTable(ID)));

    // Assess
    expect(withCredentials.io).toBeInstanceOf(S3FileIO);
    expect(await (withCredentials.io as S3FileIO).client.config.credentials()).toMatchObject({
      accessKeyId: 'AKIAVENDED',
    });
    expect(without.io).toBeInstanceOf(LocalFileIO);
  });

  it('keeps the default FileIO when vending is off, and reuses the table FileIO after a commit', async () => {
    // Prepare
    const { server } = await startServer({ vendedCredentials: vended });
    const catalog = client(server, { vendedCredentials: false });
    const base = await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });

    // Act
    const change = appendChange(base);
    const committed = await catalog.commitTable(ID, change.requirements, change.updates);

    // Assess
    expect(server.requests.some((r) => r.headers['x-iceberg-access-delegation'] !== undefined)).toBe(false);
    expect(base.io).toBeInstanceOf(LocalFileIO);
    expect(committed.io).toBe(base.io);
  });
});

describe('network failure classification', () => {
  it('treats refused connections as never sent and resets as maybe sent', () => {
    // Prepare
    const refused = new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }),
    });
    const reset = new TypeError('fetch failed', {
      cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
    });
    const timeout = new DOMException('The operation was aborted due to timeout', 'TimeoutError');

    // Assess
    expect(isCertainlyNotSent(refused)).toBe(true);
    expect(isCertainlyNotSent(reset)).toBe(false);
    expect(isCertainlyNotSent(timeout)).toBe(false);
  });
});
