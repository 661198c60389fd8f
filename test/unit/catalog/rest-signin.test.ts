/**
 * Signing in to a REST catalog, one flow per test, against loopback servers that check exactly what is
 * posted: the catalog's own token endpoint, an identity provider on another port (custom
 * `oauth2-server-uri`), scope / audience / resource / extra fields, HTTP Basic client authentication, the
 * server's config defaults and overrides, refresh before expiry (the client's clock is driven, never
 * slept on), one refresh after a 401, shared refreshes, and token endpoints that fail.
 */
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RestCatalog, type RestCatalogOptions } from '../../../functions/core/catalog/rest/rest-catalog.js';
import { OAuth2ClientCredentials, type RestRequest } from '../../../functions/core/catalog/rest/rest-auth.js';
import { RestAuthError, RestCatalogError } from '../../../functions/core/catalog/rest/rest-errors.js';
import { CommitStateUnknownError } from '../../../functions/core/errors.js';
import { appendChange, CONTRACT_SCHEMA } from '../../contract/catalog-contract.js';
import { OAuth2TokenServer, type TokenServerOptions } from '../../support/oauth2-token-server.js';
import { RestCatalogServer, type RestCatalogServerOptions } from '../../support/rest-catalog-server.js';

const ID = { namespace: ['db'], name: 'events' };
const SECRET = 'idp-s3cret+/=&x';
const FORM = 'application/x-www-form-urlencoded';

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function startIdp(options: Partial<TokenServerOptions> = {}): Promise<OAuth2TokenServer> {
  const idp = await OAuth2TokenServer.start({ clientId: 'floe', clientSecret: SECRET, ...options });
  cleanups.push(() => idp.close());
  return idp;
}

/** A catalog that takes the identity provider's tokens (and has no token endpoint of its own). */
async function startCatalog(
  idp: OAuth2TokenServer,
  options: Omit<RestCatalogServerOptions, 'warehouse'> = {},
): Promise<RestCatalogServer> {
  const warehouse = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-rest-signin-'));
  const server = await RestCatalogServer.start({ warehouse, externalTokens: idp.accepts, ...options });
  cleanups.push(async () => {
    await server.close();
    await fs.rm(warehouse, { recursive: true, force: true });
  });
  return server;
}

const catalogRequests = (server: RestCatalogServer) =>
  server.requests.filter((r) => !r.url.startsWith('/v1/oauth'));
const lastBearer = (server: RestCatalogServer) => catalogRequests(server).at(-1)?.headers.authorization;

function client(
  server: RestCatalogServer,
  idp: OAuth2TokenServer,
  options: Partial<RestCatalogOptions> = {},
) {
  return new RestCatalog({
    uri: server.uri,
    credential: `floe:${SECRET}`,
    oauth2ServerUri: idp.tokenUri,
    ...options,
  });
}

describe('the token request', () => {
  it("posts to the catalog's own /v1/oauth/tokens by default, form-encoded, scope catalog", async () => {
    // Prepare
    const warehouse = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-rest-signin-'));
    const server = await RestCatalogServer.start({
      warehouse,
      oauth: { clientId: 'floe', clientSecret: SECRET },
    });
    cleanups.push(async () => {
      await server.close();
      await fs.rm(warehouse, { recursive: true, force: true });
    });

    // Act
    await new RestCatalog({ uri: server.uri, credential: `floe:${SECRET}` }).properties();

    // Assess
    const posted = server.requests.filter((r) => r.url === '/v1/oauth/tokens');
    expect(posted).toHaveLength(1);
    expect(posted[0].method).toBe('POST');
    expect(posted[0].headers['content-type']).toBe(FORM);
    expect(posted[0].headers.authorization).toBeUndefined();
    expect(Object.fromEntries(new URLSearchParams(posted[0].body))).toEqual({
      grant_type: 'client_credentials',
      client_id: 'floe',
      client_secret: SECRET,
      scope: 'catalog',
    });
  });

  it('posts to a custom oauth2-server-uri on another port, with scope, and uses its token', async () => {
    // Prepare
    const idp = await startIdp();
    const server = await startCatalog(idp);

    // Act
    await client(server, idp, { scope: 'PRINCIPAL_ROLE:ALL' }).createTable(ID, { schema: CONTRACT_SCHEMA });

    // Assess
    expect(new URL(idp.tokenUri).port).not.toBe(new URL(server.uri).port);
    expect(idp.requests).toHaveLength(1);
    expect(idp.requests[0]).toMatchObject({ method: 'POST', path: '/oauth2/token', contentType: FORM });
    expect(idp.requests[0].authorization).toBeUndefined();
    expect(idp.requests[0].form).toEqual({
      grant_type: 'client_credentials',
      client_id: 'floe',
      client_secret: SECRET,
      scope: 'PRINCIPAL_ROLE:ALL',
    });
    expect(server.countRequests('POST', '/v1/oauth/tokens')).toBe(0);
    for (const request of catalogRequests(server))
      expect(request.headers.authorization).toBe('Bearer idp-token-1');
  });

  it('adds audience, resource and extra fields, exactly as given', async () => {
    // Prepare
    const idp = await startIdp();
    const server = await startCatalog(idp);

    // Act
    await client(server, idp, {
      audience: 'https://catalog.example.com',
      resource: 'urn:lake:catalog',
      oauth2Params: { prompt: 'none', 'x-tenant': 'a b&c' },
    }).properties();

    // Assess
    expect(idp.requests[0].form).toEqual({
      grant_type: 'client_credentials',
      client_id: 'floe',
      client_secret: SECRET,
      scope: 'catalog',
      audience: 'https://catalog.example.com',
      resource: 'urn:lake:catalog',
      prompt: 'none',
      'x-tenant': 'a b&c',
    });
  });

  it('sends the client id and secret in an HTTP Basic header, each part form-encoded, with clientAuth basic', async () => {
    // Prepare
    const idp = await startIdp({ clientId: 'floe app' });
    const server = await startCatalog(idp);

    // Act
    await client(server, idp, { credential: `floe app:${SECRET}`, oauth2ClientAuth: 'basic' }).properties();

    // Assess: both parts form-encoded (a space as +), as the server decodes them
    const expected = Buffer.from(`floe+app:${new URLSearchParams({ v: SECRET }).toString().slice(2)}`);
    expect(idp.requests[0].authorization).toBe(`Basic ${expected.toString('base64')}`);
    expect(idp.requests[0].form).toEqual({ grant_type: 'client_credentials', scope: 'catalog' });
    expect(lastBearer(server)).toBe('Bearer idp-token-1');
  });

  it('refuses a token endpoint that is not an http(s) URL when the catalog is built', () => {
    for (const oauth2ServerUri of ['idp.example.com/token', 'file:///etc/passwd']) {
      const build = () => new RestCatalog({ uri: 'http://127.0.0.1:9', credential: 'a:b', oauth2ServerUri });
      expect(build).toThrow(/oauth2-server-uri\) must be an http\(s\) URL/);
    }
  });

  it('refuses extra fields that would replace the credentials or the grant', () => {
    expect(
      () =>
        new RestCatalog({
          uri: 'http://127.0.0.1:9',
          credential: 'a:b',
          oauth2Params: { client_secret: 'x' },
        }),
    ).toThrow(/client_secret is set by floe itself/);
  });
});

describe("the server's config", () => {
  it('fills in what the client left unset (defaults) and signs in again with it; the client wins where it set a value', async () => {
    // Prepare
    const idp = await startIdp();
    const server = await startCatalog(idp, {
      configDefaults: { scope: 'from-default', audience: 'aud-from-default' },
    });

    // Act
    await client(server, idp, { scope: 'mine' })
      .loadNamespace(['db'])
      .catch(() => undefined);

    // Assess: the config call with the client's own settings, the rest with the merged ones
    expect(idp.requests.map((r) => r.form.scope)).toEqual(['mine', 'mine']);
    expect(idp.requests.map((r) => r.form.audience)).toEqual([undefined, 'aud-from-default']);
    expect(lastBearer(server)).toBe('Bearer idp-token-2');
  });

  it('overrides what the client set: scope and a token endpoint on the same origin', async () => {
    // Prepare
    const idp = await startIdp({ path: '/realms/lake/token' });
    const server = await startCatalog(idp, {
      configOverrides: { scope: 'PRINCIPAL_ROLE:writer', 'oauth2-server-uri': idp.tokenUri },
    });

    // Act
    await client(server, idp, { oauth2ServerUri: `${idp.origin}/old-path`, scope: 'mine' })
      .properties()
      .catch(() => undefined);
    const catalog = client(server, idp, {
      oauth2ServerUri: `${idp.origin}/realms/lake/token`,
      scope: 'mine',
    });
    await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });

    // Assess: the first client signed in at its own (wrong) path and never reached the config
    expect(idp.requests[0].path).toBe('/old-path');
    expect(idp.requests.slice(1).map((r) => [r.path, r.form.scope])).toEqual([
      ['/realms/lake/token', 'mine'],
      ['/realms/lake/token', 'PRINCIPAL_ROLE:writer'],
    ]);
    expect(lastBearer(server)).toBe('Bearer idp-token-2');
  });

  it('keeps the first token when the config changes nothing about signing in', async () => {
    // Prepare
    const idp = await startIdp();
    const server = await startCatalog(idp, { configDefaults: { scope: 'catalog' } });

    // Act
    await client(server, idp).createTable(ID, { schema: CONTRACT_SCHEMA });

    // Assess
    expect(idp.requests).toHaveLength(1);
  });

  it('refuses a config that moves the token endpoint to another origin, posting nothing there', async () => {
    // Prepare
    const idp = await startIdp();
    const elsewhere = await startIdp();
    const server = await startCatalog(idp, { configOverrides: { 'oauth2-server-uri': elsewhere.tokenUri } });

    // Act
    const attempt = client(server, idp).properties();

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(RestAuthError);
    await expect(attempt).rejects.toMatchObject({ retryable: false });
    await expect(attempt).rejects.toThrow(`moves the OAuth2 token endpoint to ${elsewhere.origin}`);
    expect(elsewhere.requests).toHaveLength(0);
  });
});

describe('refresh', () => {
  it('fetches a new token a minute before expires_in runs out, on the injected clock, and not before', async () => {
    // Prepare
    const idp = await startIdp({ expiresIn: 600 });
    const server = await startCatalog(idp);
    let now = 1_000_000;
    const catalog = client(server, idp, { now: () => now });
    await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });

    // Act
    now += 540_000 - 1;
    await catalog.loadTable(ID);
    const beforeMargin = idp.requests.length;
    now += 1;
    await catalog.loadTable(ID);

    // Assess
    expect(beforeMargin).toBe(1);
    expect(idp.requests).toHaveLength(2);
    expect(
      server.requests.filter((r) => r.url.includes('/tables/events')).at(-1)?.headers.authorization,
    ).toBe('Bearer idp-token-2');
    expect(catalogRequests(server).every((r) => r.headers.authorization !== undefined)).toBe(true);
  });

  it('renews within a day a token whose expires_in is absurdly long', async () => {
    // Prepare
    const idp = await startIdp({ expiresIn: 1e12 });
    const server = await startCatalog(idp);
    let now = 1_000_000;
    const catalog = client(server, idp, { now: () => now });
    await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });

    // Act
    now += 86_400_000;
    await catalog.loadTable(ID);

    // Assess
    expect(idp.requests).toHaveLength(2);
  });

  it('after a 401 fetches one token and resends once; a second 401 is final', async () => {
    // Prepare
    const idp = await startIdp();
    let refuseAll = false;
    const server = await startCatalog(idp, { externalTokens: (t) => !refuseAll && idp.accepts(t) });
    const catalog = client(server, idp);
    await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });
    idp.revokeAll();

    // Act
    const loaded = await catalog.loadTable(ID);
    refuseAll = true;
    const refused = catalog.loadTable(ID);

    // Assess
    expect(loaded.identifier).toEqual(ID);
    await expect(refused).rejects.toBeInstanceOf(RestCatalogError);
    await expect(refused).rejects.toMatchObject({ status: 401, retryable: false });
    expect(idp.requests).toHaveLength(3); // the first token, the refresh after the revocation, one more
    const loads = server.requests.filter((r) => r.method === 'GET' && r.url.includes('/tables/events'));
    expect(loads).toHaveLength(4); // each load refused once and resent once
  });

  it('shares one token request among concurrent requests, on expiry and after a 401', async () => {
    // Prepare
    const idp = await startIdp({ expiresIn: 600 });
    const server = await startCatalog(idp);
    let now = 1_000_000;
    const catalog = client(server, idp, { now: () => now });
    await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });

    // Act
    now += 600_000;
    await Promise.all(Array.from({ length: 6 }, () => catalog.loadTable(ID)));
    const afterExpiry = idp.requests.length;
    idp.revokeAll();
    await Promise.all(Array.from({ length: 6 }, () => catalog.loadTable(ID)));

    // Assess
    expect(afterExpiry).toBe(2);
    expect(idp.requests).toHaveLength(3);
  });
});

describe('OAuth2ClientCredentials.refresh', () => {
  it('fetches no second token for a 401 to a request sent with a token already replaced', async () => {
    // Prepare: two requests signed with the first token, both refused one after the other
    const idp = await startIdp();
    const auth = new OAuth2ClientCredentials({ credential: `floe:${SECRET}`, tokenUri: idp.tokenUri });
    const request = (): RestRequest => ({ method: 'GET', url: new URL(idp.origin), headers: {} });
    const first = request();
    const second = request();
    await auth.authorize(first);
    await auth.authorize(second);

    // Act
    const refreshedFirst = await auth.refresh(first);
    const refreshedSecond = await auth.refresh(second);
    const resent = request();
    await auth.authorize(resent);

    // Assess
    expect([refreshedFirst, refreshedSecond]).toEqual([true, true]);
    expect(first.headers.authorization).toBe('Bearer idp-token-1');
    expect(resent.headers.authorization).toBe('Bearer idp-token-2');
    expect(idp.requests).toHaveLength(2);
  });
});

describe('a token endpoint that fails', () => {
  it('answers 500 (echoing the form): retryable, and the secret is not in the message', async () => {
    // Prepare
    const idp = await startIdp();
    const server = await startCatalog(idp);
    idp.failNext({ kind: 'status', status: 500, echo: true });

    // Act
    const attempt = client(server, idp).properties();

    // Assess
    const error = await attempt.catch((e: unknown) => e as RestAuthError);
    expect(error).toBeInstanceOf(RestAuthError);
    expect(error).toMatchObject({ retryable: true });
    expect(error.message).toMatch(
      /OAuth2 token request to http:\/\/127\.0\.0\.1:\d+\/oauth2\/token failed: HTTP 500/,
    );
    expect(error.message).not.toContain(SECRET);
    expect(error.message).not.toContain(encodeURIComponent(SECRET));
  });

  it('answers HTML with 200: not retryable, says to check oauth2-server-uri', async () => {
    // Prepare
    const idp = await startIdp();
    const server = await startCatalog(idp);
    idp.failNext({ kind: 'garbage' });

    // Act
    const attempt = client(server, idp).properties();

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(RestAuthError);
    await expect(attempt).rejects.toMatchObject({ retryable: false });
    await expect(attempt).rejects.toThrow(/not JSON .*oauth2-server-uri/);
  });

  it('does not answer: a retryable timeout', async () => {
    // Prepare
    const idp = await startIdp();
    const server = await startCatalog(idp);
    idp.failNext({ kind: 'hang' });

    // Act
    const attempt = client(server, idp, { timeoutMs: 300 }).properties();

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(RestAuthError);
    await expect(attempt).rejects.toMatchObject({ retryable: true });
    await expect(attempt).rejects.toThrow('no answer within 300 ms');
  });

  it('is not a catalog at the default endpoint: a 404 that says to set oauth2-server-uri', async () => {
    // Prepare
    const idp = await startIdp();
    const server = await startCatalog(idp);

    // Act
    const attempt = new RestCatalog({ uri: server.uri, credential: `floe:${SECRET}` }).properties();

    // Assess
    await expect(attempt).rejects.toMatchObject({ retryable: false });
    await expect(attempt).rejects.toThrow(/HTTP 404.*oauth2-server-uri/);
  });

  it('fails a commit whose token cannot be had as a sign-in error, never as an unknown commit outcome', async () => {
    // Prepare
    const idp = await startIdp();
    const server = await startCatalog(idp);
    const catalog = client(server, idp, { timeoutMs: 300 });
    const base = await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });
    idp.revokeAll();
    idp.failNext({ kind: 'hang' });

    // Act: the commit is refused (401), and the token endpoint then does not answer
    const change = appendChange(base);
    const attempt = catalog.commitTable(ID, change.requirements, change.updates);

    // Assess
    const error = await attempt.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RestAuthError);
    expect(error).not.toBeInstanceOf(CommitStateUnknownError);
    expect((await catalog.loadTable(ID)).metadata.snapshots ?? []).toHaveLength(0);
  });

  it('fails a resend whose token cannot be had as an unknown outcome: the first send may have landed', async () => {
    // Prepare: the first send lands but is answered 503 (unknown); while the server holds it, every
    // token is revoked and the token endpoint refuses the client, so the resend cannot be signed
    const idp = await startIdp();
    const server = await startCatalog(idp, { idempotency: true });
    const catalog = client(server, idp);
    const base = await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });
    server.failNextCommit({ status: 503, afterApply: true, delayMs: 300 });
    const change = appendChange(base);
    const commits = () =>
      catalogRequests(server).filter((r) => r.method === 'POST' && r.url.endsWith('/events'));

    // Act
    const attempt = catalog.commitTable(ID, change.requirements, change.updates).catch((e: unknown) => e);
    while (commits().length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    idp.revokeAll();
    idp.failNext({ kind: 'status', status: 400 });
    const error = await attempt;

    // Assess: not "failed" (a caller would delete the files of a commit that is in the table)
    expect(error).toBeInstanceOf(CommitStateUnknownError);
    expect(commits()).toHaveLength(2);
    expect(idp.requests.length).toBeGreaterThanOrEqual(2);
  });
});
