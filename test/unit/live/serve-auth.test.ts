import { mkdtemp } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { servedCatalogOf } from '../../../functions/cli/commands/serve.js';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { startRestServer } from '../../../functions/core/live/rest-server.js';
import { ServeAuth } from '../../../functions/core/live/serve-auth.js';

const TOKEN = 'fixed-token-0123456789abcdef';
const CLIENT = { id: 'engine', secret: 'engine-secret-0123456789' };

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A served empty warehouse behind `auth`, on a loopback port. */
async function serve(auth: ServeAuth): Promise<string> {
  const warehouse = await mkdtemp(join(tmpdir(), 'floe-serve-auth-'));
  server = await startRestServer(servedCatalogOf(new EmbeddedCatalog({ warehouse })), {
    port: 0,
    host: '127.0.0.1',
    auth,
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

async function askToken(uri: string, body: string, headers: Record<string, string> = FORM) {
  const response = await fetch(`${uri}/v1/oauth/tokens`, { method: 'POST', headers, body });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, unknown>,
    headers: response.headers,
  };
}

async function getConfig(uri: string, authorization?: string) {
  const response = await fetch(`${uri}/v1/config`, {
    headers: authorization === undefined ? {} : { authorization },
  });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, unknown>,
    headers: response.headers,
  };
}

const clientCredentials = (overrides: Record<string, string> = {}) =>
  form({
    grant_type: 'client_credentials',
    client_id: CLIENT.id,
    client_secret: CLIENT.secret,
    scope: 'catalog',
    ...overrides,
  });

describe('floe serve with a bearer token', () => {
  it.each([
    ['no Authorization header', undefined],
    ['a wrong token', 'Bearer wrong-token-0123456789abcdef'],
    ['the token with one character changed', `Bearer ${TOKEN.slice(0, -1)}X`],
    ['Basic instead of Bearer', `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}`],
  ])('refuses %s with 401 in the ErrorModel shape', async (_, authorization) => {
    // Prepare
    const uri = await serve(new ServeAuth({ tokens: [TOKEN] }));
    // Act
    const answer = await getConfig(uri, authorization);
    // Assess
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({
      error: { code: 401, type: 'NotAuthorizedException', message: expect.any(String) },
    });
    expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer realm="floe serve"/);
  });

  it('serves the right token', async () => {
    const uri = await serve(new ServeAuth({ tokens: [TOKEN] }));
    const answer = await getConfig(uri, `Bearer ${TOKEN}`);
    expect(answer.status).toBe(200);
    expect(answer.body).toHaveProperty('endpoints');
  });

  it('checks every route, HEAD and refused writes included', async () => {
    const uri = await serve(new ServeAuth({ tokens: [TOKEN] }));
    const head = await fetch(`${uri}/v1/namespaces/app`, { method: 'HEAD' });
    const write = await fetch(`${uri}/v1/namespaces`, { method: 'POST', body: '{}' });
    expect([head.status, write.status]).toEqual([401, 401]);
  });

  it('does not issue tokens when it has no clients', async () => {
    const uri = await serve(new ServeAuth({ tokens: [TOKEN] }));
    const answer = await askToken(uri, clientCredentials());
    expect(answer.status).toBe(401);
    expect(answer.body.error).toBe('invalid_client');
  });
});

describe('floe serve with OAuth2 client credentials (POST /v1/oauth/tokens)', () => {
  it('issues an expiring bearer token for the right client, as the spec’s OAuthTokenResponse, and serves it', async () => {
    // Prepare
    const uri = await serve(new ServeAuth({ clients: [CLIENT], tokenTtlSeconds: 600 }));
    // Act
    const token = await askToken(uri, clientCredentials({ scope: 'PRINCIPAL_ROLE:ALL' }));
    const config = await getConfig(uri, `Bearer ${token.body.access_token}`);
    // Assess
    expect(token.status).toBe(200);
    expect(token.body).toEqual({
      access_token: expect.stringMatching(/^floe1\./),
      token_type: 'bearer',
      expires_in: 600,
      issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      scope: 'PRINCIPAL_ROLE:ALL',
    });
    expect(token.headers.get('cache-control')).toBe('no-store');
    expect(config.status).toBe(200);
  });

  it('takes the client’s credentials in HTTP Basic too', async () => {
    const uri = await serve(new ServeAuth({ clients: [CLIENT] }));
    const basic = Buffer.from(`${CLIENT.id}:${CLIENT.secret}`).toString('base64');
    const answer = await askToken(uri, form({ grant_type: 'client_credentials', scope: 'catalog' }), {
      ...FORM,
      authorization: `Basic ${basic}`,
    });
    expect(answer.status).toBe(200);
  });

  it.each([
    [
      'a JSON body',
      JSON.stringify({ grant_type: 'client_credentials' }),
      { 'content-type': 'application/json' },
      400,
      'invalid_request',
    ],
    [
      'no grant_type',
      form({ client_id: CLIENT.id, client_secret: CLIENT.secret }),
      FORM,
      400,
      'invalid_request',
    ],
    [
      'grant_type=password',
      clientCredentials({ grant_type: 'password' }),
      FORM,
      400,
      'unsupported_grant_type',
    ],
    [
      'a token exchange',
      clientCredentials({ grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange' }),
      FORM,
      400,
      'unsupported_grant_type',
    ],
    [
      'a wrong secret',
      clientCredentials({ client_secret: `${CLIENT.secret}x` }),
      FORM,
      401,
      'invalid_client',
    ],
    ['an unknown client', clientCredentials({ client_id: 'other' }), FORM, 401, 'invalid_client'],
    [
      'no secret',
      form({ grant_type: 'client_credentials', client_id: CLIENT.id }),
      FORM,
      401,
      'invalid_client',
    ],
    ['a repeated parameter', `${clientCredentials()}&client_id=other`, FORM, 400, 'invalid_request'],
    ['a scope with a quote', clientCredentials({ scope: 'cata"log' }), FORM, 400, 'invalid_scope'],
    [
      'Basic and form credentials at once',
      clientCredentials(),
      { ...FORM, authorization: `Basic ${Buffer.from(`${CLIENT.id}:${CLIENT.secret}`).toString('base64')}` },
      400,
      'invalid_request',
    ],
  ])('refuses %s with the OAuthError shape', async (_, body, headers, status, error) => {
    // Prepare
    const uri = await serve(new ServeAuth({ clients: [CLIENT] }));
    // Act
    const answer = await askToken(uri, body, headers);
    // Assess
    expect(answer.status).toBe(status);
    expect(answer.body).toEqual({ error, error_description: expect.any(String) });
  });

  it('refuses an expired token with 401', async () => {
    // Prepare: a clock the test moves
    let now = Date.UTC(2026, 0, 1);
    const uri = await serve(new ServeAuth({ clients: [CLIENT], tokenTtlSeconds: 60, now: () => now }));
    const token = (await askToken(uri, clientCredentials())).body.access_token as string;
    const before = await getConfig(uri, `Bearer ${token}`);
    // Act
    now += 61_000;
    const after = await getConfig(uri, `Bearer ${token}`);
    // Assess
    expect(before.status).toBe(200);
    expect(after.status).toBe(401);
    expect(after.body).toEqual({
      error: { code: 401, type: 'NotAuthorizedException', message: expect.stringContaining('expired') },
    });
    expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('refuses a token whose payload was altered, and one another server issued', async () => {
    // Prepare
    const uri = await serve(new ServeAuth({ clients: [CLIENT], tokenTtlSeconds: 60 }));
    const token = (await askToken(uri, clientCredentials())).body.access_token as string;
    const [prefix, payload, mac] = token.split('.') as [string, string, string];
    const longer = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), e: 9_999_999_999 }),
    ).toString('base64url');
    const other = new ServeAuth({ clients: [CLIENT], tokenTtlSeconds: 60 });
    const foreign = JSON.parse(
      other.answerTokenRequest({
        contentType: FORM['content-type'],
        authorization: undefined,
        body: clientCredentials(),
      }).body!,
    ).access_token as string;
    // Act
    const altered = await getConfig(uri, `Bearer ${prefix}.${longer}.${mac}`);
    const fromOther = await getConfig(uri, `Bearer ${foreign}`);
    // Assess
    expect([altered.status, fromOther.status]).toEqual([401, 401]);
  });

  it('refuses secrets shorter than 16 characters', () => {
    expect(() => new ServeAuth({ tokens: ['short'] })).toThrow('at least 16');
    expect(() => new ServeAuth({ clients: [{ id: 'a', secret: 'short' }] })).toThrow('at least 16');
  });
});
