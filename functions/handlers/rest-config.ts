/**
 * REST catalog from the handler environment. The credential lives in Secrets Manager (never in an
 * environment variable): `{"credential":"id:secret"}` for OAuth2 client credentials, or `{"token":"..."}`.
 * The sign-in settings around it (token endpoint, scope, audience, resource, extra parameters) are not
 * secret and are plain variables, named after Iceberg's catalog properties.
 */
import type { Catalog } from '../core/catalog/catalog.js';
import { RestCatalog, type RestCatalogOptions } from '../core/catalog/rest/rest-catalog.js';
import { ValidationError } from '../core/errors.js';
import { createSecretsManagerReader, type SecretReader, secretString } from './secrets.js';

type Env = Record<string, string | undefined>;

/** Variable → option, for the settings that are plain strings. */
const STRING_SETTINGS = [
  ['FLOE_REST_OAUTH2_SERVER_URI', 'oauth2ServerUri'],
  ['FLOE_REST_SCOPE', 'scope'],
  ['FLOE_REST_AUDIENCE', 'audience'],
  ['FLOE_REST_RESOURCE', 'resource'],
] as const;

async function readCredential(
  secrets: SecretReader,
  arn: string,
): Promise<{ credential?: string; token?: string }> {
  const secret = await secrets.readJson(arn);
  const credential = secretString(secret, 'credential', arn);
  const token = secretString(secret, 'token', arn);
  if (credential === undefined && token === undefined) {
    throw new ValidationError(`secret ${arn} holds neither "credential" nor "token"`);
  }
  return { credential, token };
}

/**
 * `FLOE_REST_OAUTH2_PARAMS`: a JSON object of strings, the token request's extra form fields.
 * @throws ValidationError for anything else
 */
export function parseOAuth2Params(text: string | undefined): Record<string, string> | undefined {
  if (text === undefined || text === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (
    typeof parsed !== 'object' ||
    parsed === null ||
    Array.isArray(parsed) ||
    Object.entries(parsed).some(([k, v]) => k === '' || typeof v !== 'string')
  ) {
    throw new ValidationError(
      'FLOE_REST_OAUTH2_PARAMS must be a JSON object of strings, e.g. {"prompt":"none"}',
    );
  }
  return parsed as Record<string, string>;
}

/**
 * The REST catalog options the environment names, without the secret (read by the caller).
 * @throws ValidationError for a missing FLOE_REST_URI or a malformed setting
 */
export function restOptionsFromEnv(env: Env): RestCatalogOptions {
  const uri = env.FLOE_REST_URI;
  if (!uri)
    throw new ValidationError('environment variable FLOE_REST_URI is required when FLOE_CATALOG=rest');
  const options: RestCatalogOptions = { uri, warehouse: env.FLOE_REST_WAREHOUSE };
  for (const [variable, option] of STRING_SETTINGS) if (env[variable]) options[option] = env[variable];
  options.oauth2Params = parseOAuth2Params(env.FLOE_REST_OAUTH2_PARAMS);
  const clientAuth = env.FLOE_REST_OAUTH2_CLIENT_AUTH;
  if (clientAuth) {
    if (clientAuth !== 'post' && clientAuth !== 'basic') {
      throw new ValidationError(`FLOE_REST_OAUTH2_CLIENT_AUTH must be post or basic, not '${clientAuth}'`);
    }
    options.oauth2ClientAuth = clientAuth;
  }
  if (env.FLOE_REST_SIGV4_SIGNING_NAME) options.sigv4 = { signingName: env.FLOE_REST_SIGV4_SIGNING_NAME };
  return options;
}

/** @throws ValidationError for missing variables or a malformed secret */
export async function createRestCatalogFromEnv(
  env: Env,
  secrets: SecretReader = createSecretsManagerReader(),
): Promise<Catalog> {
  const options = restOptionsFromEnv(env);
  if (env.FLOE_REST_CREDENTIAL_SECRET_ARN)
    Object.assign(options, await readCredential(secrets, env.FLOE_REST_CREDENTIAL_SECRET_ARN));
  return new RestCatalog(options);
}
