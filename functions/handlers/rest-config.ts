/**
 * REST catalog from the handler environment. The credential lives in Secrets Manager (never in an
 * environment variable): `{"credential":"id:secret"}` for OAuth2 client credentials, or `{"token":"..."}`.
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Catalog } from '../core/catalog/catalog.js';
import { RestCatalog, type RestCatalogOptions } from '../core/catalog/rest/rest-catalog.js';
import { ValidationError } from '../core/errors.js';

type Env = Record<string, string | undefined>;

async function readSecret(arn: string): Promise<{ credential?: string; token?: string }> {
  const out = await new SecretsManagerClient({}).send(new GetSecretValueCommand({ SecretId: arn }));
  let parsed: unknown;
  try {
    parsed = JSON.parse(out.SecretString ?? '');
  } catch {
    throw new ValidationError(`secret ${arn} must be JSON: {"credential":"id:secret"} or {"token":"..."}`);
  }
  const s = parsed as { credential?: unknown; token?: unknown };
  if (typeof s.credential !== 'string' && typeof s.token !== 'string') {
    throw new ValidationError(`secret ${arn} holds neither "credential" nor "token"`);
  }
  return {
    credential: typeof s.credential === 'string' ? s.credential : undefined,
    token: typeof s.token === 'string' ? s.token : undefined,
  };
}

/** @throws ValidationError for missing variables or a malformed secret */
export async function createRestCatalogFromEnv(env: Env): Promise<Catalog> {
  const uri = env.FLOE_REST_URI;
  if (!uri)
    throw new ValidationError('environment variable FLOE_REST_URI is required when FLOE_CATALOG=rest');
  const options: RestCatalogOptions = { uri, warehouse: env.FLOE_REST_WAREHOUSE };
  if (env.FLOE_REST_CREDENTIAL_SECRET_ARN)
    Object.assign(options, await readSecret(env.FLOE_REST_CREDENTIAL_SECRET_ARN));
  if (env.FLOE_REST_SIGV4_SIGNING_NAME) options.sigv4 = { signingName: env.FLOE_REST_SIGV4_SIGNING_NAME };
  return new RestCatalog(options);
}
