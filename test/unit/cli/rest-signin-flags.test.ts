/**
 * The REST sign-in flags: parsed as `floe` parses them, translated into the handlers' FLOE_REST_*
 * variables (flags over the environment), refused when they contradict each other, and carried through
 * to the token request a real `openCatalog` makes.
 */
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type CatalogFlags,
  openCatalog,
  resolveCatalogSettings,
} from '../../../functions/cli/catalog-options.js';
import { parseOptions } from '../../../functions/cli/options.js';
import { UsageError } from '../../../functions/cli/usage-error.js';
import type { RestCatalog } from '../../../functions/core/catalog/rest/rest-catalog.js';
import { OAuth2TokenServer } from '../../support/oauth2-token-server.js';
import { RestCatalogServer } from '../../support/rest-catalog-server.js';

const flagsOf = (args: string[]): CatalogFlags => parseOptions(args).values;

function usageError(args: string[], env: Record<string, string> = {}): string {
  try {
    resolveCatalogSettings(flagsOf(args), env);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('expected a UsageError');
}

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

describe('REST sign-in flags', () => {
  it('become the FLOE_REST_* variables, --oauth2-param repeatable and merged over FLOE_REST_OAUTH2_PARAMS', () => {
    // Act
    const settings = resolveCatalogSettings(
      flagsOf([
        '--uri',
        'https://catalog.example.com/api/catalog',
        '--credential',
        'id:secret',
        '--oauth2-server-uri',
        'https://idp.example.com/realms/lake/protocol/openid-connect/token',
        '--scope',
        'PRINCIPAL_ROLE:ALL',
        '--audience',
        'lake',
        '--resource',
        'urn:lake',
        '--oauth2-param',
        'prompt=none',
        '--oauth2-param',
        'x=a=b',
        '--oauth2-client-auth',
        'basic',
      ]),
      { FLOE_REST_OAUTH2_PARAMS: '{"prompt":"login","tenant":"t1"}', FLOE_REST_SCOPE: 'from-env' },
    );

    // Assess
    expect(settings.credential).toBe('id:secret');
    expect(settings.env).toMatchObject({
      FLOE_REST_OAUTH2_SERVER_URI: 'https://idp.example.com/realms/lake/protocol/openid-connect/token',
      FLOE_REST_SCOPE: 'PRINCIPAL_ROLE:ALL',
      FLOE_REST_AUDIENCE: 'lake',
      FLOE_REST_RESOURCE: 'urn:lake',
      FLOE_REST_OAUTH2_CLIENT_AUTH: 'basic',
    });
    expect(JSON.parse(settings.env.FLOE_REST_OAUTH2_PARAMS ?? '')).toEqual({
      prompt: 'none',
      tenant: 't1',
      x: 'a=b',
    });
  });

  it('leaves the environment’s settings in place when no flag is given', () => {
    // Act
    const settings = resolveCatalogSettings(flagsOf(['--uri', 'http://h']), {
      FLOE_REST_OAUTH2_SERVER_URI: 'http://idp/token',
      FLOE_REST_SCOPE: 's',
      FLOE_REST_OAUTH2_PARAMS: '{"a":"b"}',
    });

    // Assess
    expect(settings.env).toMatchObject({
      FLOE_REST_OAUTH2_SERVER_URI: 'http://idp/token',
      FLOE_REST_SCOPE: 's',
      FLOE_REST_OAUTH2_PARAMS: '{"a":"b"}',
    });
  });

  it('refuses flags that contradict each other or are malformed', () => {
    expect(usageError(['--uri', 'http://h', '--token', 't', '--scope', 's'])).toBe(
      '--scope goes with OAuth2 client credentials (--credential, or a credential secret), not --token',
    );
    expect(usageError(['--uri', 'http://h', '--sigv4', '--oauth2-param', 'a=b'])).toMatch(
      /^--oauth2-param goes with OAuth2 client credentials .* not --sigv4$/,
    );
    expect(usageError(['--uri', 'http://h', '--oauth2-param', 'novalue'])).toMatch(/must be KEY=VALUE/);
    expect(usageError(['--uri', 'http://h', '--oauth2-param', '=v'])).toMatch(/must be KEY=VALUE/);
    expect(usageError(['--uri', 'http://h', '--oauth2-param', 'client_secret=x'])).toMatch(
      /client_secret=\.\.\. is not allowed: floe sets it from the credential/,
    );
    expect(usageError(['--uri', 'http://h', '--oauth2-param', 'scope=x'])).toMatch(/use --scope/);
    expect(usageError(['--uri', 'http://h', '--oauth2-client-auth', 'jwt'])).toMatch(
      /--oauth2-client-auth must be post or basic, not 'jwt'/,
    );
    expect(usageError(['--uri', 'http://h', '--oauth2-server-uri', 'idp.example.com/token'])).toMatch(
      /--oauth2-server-uri must be an http\(s\) URL/,
    );
    expect(usageError(['--uri', 'http://h', '--scope', ''])).toMatch(/--scope needs a value/);
    expect(
      usageError(['--uri', 'http://h', '--oauth2-param', 'a=b'], { FLOE_REST_OAUTH2_PARAMS: '[1]' }),
    ).toMatch(/FLOE_REST_OAUTH2_PARAMS must be a JSON object/);
    expect(usageError(['--warehouse', 'wh', '--scope', 's'])).toMatch(
      /--warehouse .* and --scope \(rest catalog\) conflict/,
    );
  });

  it('reach the token request of the catalog openCatalog builds', async () => {
    // Prepare
    const idp = await OAuth2TokenServer.start({ clientId: 'floe', clientSecret: 'cli-s3cret' });
    const warehouse = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-cli-signin-'));
    const server = await RestCatalogServer.start({ warehouse, externalTokens: idp.accepts });
    cleanups.push(async () => {
      await server.close();
      await idp.close();
      await fs.rm(warehouse, { recursive: true, force: true });
    });
    const flags = flagsOf([
      '--uri',
      server.uri,
      '--credential',
      'floe:cli-s3cret',
      '--oauth2-server-uri',
      idp.tokenUri,
      '--scope',
      'PRINCIPAL_ROLE:ALL',
      '--audience',
      'lake',
      '--oauth2-param',
      'tenant=t1',
    ]);

    // Act
    const { catalog } = await openCatalog(flags, { env: {} });
    await (catalog as RestCatalog).properties();

    // Assess
    expect(idp.requests).toHaveLength(1);
    expect(idp.requests[0].form).toEqual({
      grant_type: 'client_credentials',
      client_id: 'floe',
      client_secret: 'cli-s3cret',
      scope: 'PRINCIPAL_ROLE:ALL',
      audience: 'lake',
      tenant: 't1',
    });
    expect(server.requests[0].headers.authorization).toBe('Bearer idp-token-1');
  });
});
