/**
 * REST catalog from the handler environment. The credential lives in Secrets Manager (never in an
 * environment variable): `{"credential":"id:secret"}` for OAuth2 client credentials, or `{"token":"..."}`.
 */
import type { Catalog } from '../core/catalog/catalog.js';
import { RestCatalog, type RestCatalogOptions } from '../core/catalog/rest/rest-catalog.js';
import { ValidationError } from '../core/errors.js';
import { createSecretsManagerReader, type SecretReader, secretString } from './secrets.js';

type Env = Record<string, string | undefined>;

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

/** @throws ValidationError for missing variables or a malformed secret */
export async function createRestCatalogFromEnv(
  env: Env,
  secrets: SecretReader = createSecretsManagerReader(),
): Promise<Catalog> {
  const uri = env.FLOE_REST_URI;
  if (!uri)
    throw new ValidationError('environment variable FLOE_REST_URI is required when FLOE_CATALOG=rest');
  const options: RestCatalogOptions = { uri, warehouse: env.FLOE_REST_WAREHOUSE };
  if (env.FLOE_REST_CREDENTIAL_SECRET_ARN)
    Object.assign(options, await readCredential(secrets, env.FLOE_REST_CREDENTIAL_SECRET_ARN));
  if (env.FLOE_REST_SIGV4_SIGNING_NAME) options.sigv4 = { signingName: env.FLOE_REST_SIGV4_SIGNING_NAME };
  return new RestCatalog(options);
}
