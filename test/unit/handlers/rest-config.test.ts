/**
 * The REST catalog's sign-in settings from the handlers' environment: the FLOE_REST_* variables the
 * construct sets, checked at cold start, and carried to the token request together with the credential
 * read from Secrets Manager (a fixed reader here).
 */
import { afterEach, describe, expect, it } from 'vitest';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { RestCatalog } from '../../../functions/core/catalog/rest/rest-catalog.js';
import { ValidationError } from '../../../functions/core/errors.js';
import { createRestCatalogFromEnv, restOptionsFromEnv } from '../../../functions/handlers/rest-config.js';
import type { SecretReader } from '../../../functions/handlers/secrets.js';
import { OAuth2TokenServer } from '../../support/oauth2-token-server.js';
import { RestCatalogServer } from '../../support/rest-catalog-server.js';

const ARN = 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:catalog-AbCdEf';

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

describe('restOptionsFromEnv', () => {
  it('maps every sign-in variable to its option', () => {
    // Act
    const options = restOptionsFromEnv({
      FLOE_REST_URI: 'https://catalog.example.com',
      FLOE_REST_WAREHOUSE: 'lake',
      FLOE_REST_OAUTH2_SERVER_URI: 'https://idp.example.com/token',
      FLOE_REST_SCOPE: 'PRINCIPAL_ROLE:ALL',
      FLOE_REST_AUDIENCE: 'aud',
      FLOE_REST_RESOURCE: 'urn:res',
      FLOE_REST_OAUTH2_PARAMS: '{"tenant":"t1"}',
      FLOE_REST_OAUTH2_CLIENT_AUTH: 'basic',
    });

    // Assess
    expect(options).toEqual({
      uri: 'https://catalog.example.com',
      warehouse: 'lake',
      oauth2ServerUri: 'https://idp.example.com/token',
      scope: 'PRINCIPAL_ROLE:ALL',
      audience: 'aud',
      resource: 'urn:res',
      oauth2Params: { tenant: 't1' },
      oauth2ClientAuth: 'basic',
    });
  });

  it.each([
    ['FLOE_REST_OAUTH2_PARAMS', 'tenant=t1', /FLOE_REST_OAUTH2_PARAMS must be a JSON object of strings/],
    ['FLOE_REST_OAUTH2_PARAMS', '{"n":1}', /FLOE_REST_OAUTH2_PARAMS must be a JSON object of strings/],
    ['FLOE_REST_OAUTH2_PARAMS', '["a"]', /FLOE_REST_OAUTH2_PARAMS must be a JSON object of strings/],
    ['FLOE_REST_OAUTH2_CLIENT_AUTH', 'jwt', /FLOE_REST_OAUTH2_CLIENT_AUTH must be post or basic, not 'jwt'/],
  ])('refuses %s=%s', (variable, value, message) => {
    const attempt = () => restOptionsFromEnv({ FLOE_REST_URI: 'http://h', [variable]: value });
    expect(attempt).toThrow(ValidationError);
    expect(attempt).toThrow(message);
  });
});

describe('createRestCatalogFromEnv', () => {
  it('signs in with the secret’s credential and the variables’ settings', async () => {
    // Prepare
    const idp = await OAuth2TokenServer.start({ clientId: 'floe', clientSecret: 'env-s3cret' });
    const warehouse = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-env-signin-'));
    const server = await RestCatalogServer.start({ warehouse, externalTokens: idp.accepts });
    cleanups.push(async () => {
      await server.close();
      await idp.close();
      await fs.rm(warehouse, { recursive: true, force: true });
    });
    const secrets: SecretReader = { readJson: async () => ({ credential: 'floe:env-s3cret' }) };

    // Act
    const catalog = await createRestCatalogFromEnv(
      {
        FLOE_REST_URI: server.uri,
        FLOE_REST_CREDENTIAL_SECRET_ARN: ARN,
        FLOE_REST_OAUTH2_SERVER_URI: idp.tokenUri,
        FLOE_REST_SCOPE: 'PRINCIPAL_ROLE:ALL',
        FLOE_REST_RESOURCE: 'urn:lake',
        FLOE_REST_OAUTH2_PARAMS: '{"tenant":"t1"}',
        FLOE_REST_OAUTH2_CLIENT_AUTH: 'basic',
      },
      secrets,
    );
    await (catalog as RestCatalog).properties();

    // Assess
    expect(idp.requests).toHaveLength(1);
    expect(idp.requests[0].authorization).toBe(`Basic ${Buffer.from('floe:env-s3cret').toString('base64')}`);
    expect(idp.requests[0].form).toEqual({
      grant_type: 'client_credentials',
      scope: 'PRINCIPAL_ROLE:ALL',
      resource: 'urn:lake',
      tenant: 't1',
    });
  });
});
