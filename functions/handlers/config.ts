/**
 * Handler configuration from the environment the CDK construct sets (see README.md here).
 * Read once per cold start; every problem is one clear ValidationError naming the variable.
 *
 * Routes come from `FLOE_TABLES_FILE` (a JSON file shipped in the function's asset: Lambda allows only
 * 4 KB of environment variables, which a few tables with schemas fill) or, for local use and the CLI,
 * inline in `FLOE_TABLES`. Secrets are never in either: a route names a Secrets Manager secret and it is
 * read here, once.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Catalog } from '../core/catalog/catalog.js';
import { ValidationError } from '../core/errors.js';
import type { RegistryConfig } from '../core/formats/format-config.js';
import { parseRoutes, type TableRoute } from '../core/routing/routes.js';
import type { CommitLock } from '../core/lock/commit-lock.js';
import { createSecretsManagerReader, type SecretReader, secretString } from './secrets.js';

export interface HandlerConfig {
  catalog: Catalog;
  lock?: CommitLock;
  routes: TableRoute[];
}

/** The variables a handler reads (`process.env` in Lambda). */
export type Env = Record<string, string | undefined>;

/** What a test (or the CLI) may swap. */
export interface HandlerConfigDependencies {
  /** @default Secrets Manager through the standard AWS environment */
  secrets?: SecretReader;
}

function required(env: Env, name: string): string {
  const v = env[name];
  if (!v) throw new ValidationError(`environment variable ${name} is required`);
  return v;
}

/**
 * The catalog `FLOE_CATALOG` names (`embedded` when unset), configured from the other `FLOE_*` variables.
 * @throws ValidationError for a missing or malformed variable or a malformed credential secret
 */
export async function createCatalogFromEnv(
  env: Env,
  secrets: SecretReader = createSecretsManagerReader(),
): Promise<Catalog> {
  const kind = env.FLOE_CATALOG ?? 'embedded';
  switch (kind) {
    case 'embedded': {
      const { EmbeddedCatalog } = await import('../core/catalog/embedded-catalog.js');
      return new EmbeddedCatalog({ warehouse: required(env, 'FLOE_WAREHOUSE') });
    }
    case 's3tables': {
      const { S3TablesCatalog } = await import('../core/catalog/s3tables-catalog.js');
      return new S3TablesCatalog({ tableBucketArn: required(env, 'FLOE_TABLE_BUCKET_ARN') });
    }
    case 'rest': {
      const { createRestCatalogFromEnv } = await import('./rest-config.js');
      return createRestCatalogFromEnv(env, secrets);
    }
    default:
      throw new ValidationError(`FLOE_CATALOG must be embedded, s3tables or rest, not '${kind}'`);
  }
}

/**
 * The DynamoDB commit lock `FLOE_LOCK_TABLE` names, or undefined without one.
 * @throws ValidationError for a malformed `FLOE_LOCK_LEASE_MS`
 */
export async function createLockFromEnv(env: Env): Promise<CommitLock | undefined> {
  if (!env.FLOE_LOCK_TABLE) return undefined;
  const leaseMs = env.FLOE_LOCK_LEASE_MS ? Number(env.FLOE_LOCK_LEASE_MS) : undefined;
  if (leaseMs !== undefined && !(leaseMs > 0))
    throw new ValidationError('FLOE_LOCK_LEASE_MS must be a positive number');
  const { DynamoDbLock } = await import('../core/lock/dynamodb-lock.js');
  return new DynamoDbLock({ tableName: env.FLOE_LOCK_TABLE, leaseMs });
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ValidationError(`${what} is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * The routes' JSON: the file `FLOE_TABLES_FILE` names (a relative path is read from the function's
 * code directory, `LAMBDA_TASK_ROOT`), or `FLOE_TABLES` itself. Setting both is refused, so it is never
 * a guess which one is in force.
 */
async function readRoutesJson(env: Env): Promise<unknown> {
  const file = env.FLOE_TABLES_FILE;
  if (file && env.FLOE_TABLES) {
    throw new ValidationError('set FLOE_TABLES or FLOE_TABLES_FILE, not both');
  }
  if (!file) {
    if (!env.FLOE_TABLES) {
      throw new ValidationError(
        'environment variable FLOE_TABLES is required (the routes as JSON, or FLOE_TABLES_FILE naming a file holding them)',
      );
    }
    return parseJson(env.FLOE_TABLES, 'FLOE_TABLES');
  }
  const resolved = path.resolve(env.LAMBDA_TASK_ROOT ?? process.cwd(), file);
  let text: string;
  try {
    text = await readFile(resolved, 'utf8');
  } catch (error) {
    throw new ValidationError(`FLOE_TABLES_FILE ${resolved} cannot be read: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return parseJson(text, `FLOE_TABLES_FILE ${resolved}`);
}

/**
 * Fills a registry's `basicAuth` / `bearerToken` from the secret it names. Error messages name the
 * secret and the route, never a value.
 */
async function resolveRegistryCredentials(
  registry: RegistryConfig,
  where: string,
  env: Env,
  secrets: SecretReader,
): Promise<void> {
  let arn = registry.credentialsSecretArn;
  if (registry.credentialsSecretArnEnv !== undefined) {
    arn = env[registry.credentialsSecretArnEnv];
    if (!arn) {
      throw new ValidationError(
        `${where}.credentialsSecretArnEnv: environment variable ${registry.credentialsSecretArnEnv} is not set`,
      );
    }
  }
  if (arn === undefined) return;
  const secret = await secrets.readJson(arn);
  const basicAuth = secretString(secret, 'basicAuth', arn);
  const username = secretString(secret, 'username', arn);
  const password = secretString(secret, 'password', arn);
  const bearerToken = secretString(secret, 'bearerToken', arn);
  const fromPair = username !== undefined && password !== undefined ? `${username}:${password}` : undefined;
  const kinds = [basicAuth, fromPair, bearerToken].filter((v) => v !== undefined);
  if (kinds.length !== 1 || (fromPair === undefined && (username ?? password) !== undefined)) {
    throw new ValidationError(
      `secret ${arn} (${where}) must hold exactly one of {"username","password"}, {"basicAuth":"user:password"} or {"bearerToken":"..."}`,
    );
  }
  const pair = basicAuth ?? fromPair;
  if (pair !== undefined) {
    if (!pair.includes(':'))
      throw new ValidationError(`secret ${arn} (${where}): basicAuth must be "user:password"`);
    registry.basicAuth = pair;
  } else {
    registry.bearerToken = bearerToken;
  }
}

/**
 * Fills in every route's registry credentials from the secrets the routes name (in place), for the
 * handlers and for the CLI's routes files alike. Routes naming no secret are left as they are.
 * @throws ValidationError for a missing variable or a malformed secret
 */
export async function resolveRouteCredentials(
  routes: readonly TableRoute[],
  env: Env = process.env,
  secrets: SecretReader = createSecretsManagerReader(),
): Promise<void> {
  await Promise.all(
    routes.map((route, i) =>
      route.format?.registry
        ? resolveRegistryCredentials(route.format.registry, `routes[${i}].format.registry`, env, secrets)
        : undefined,
    ),
  );
}

/** @throws ValidationError for a missing or malformed variable, routes file or secret */
export async function loadHandlerConfig(
  env: Env = process.env,
  dependencies: HandlerConfigDependencies = {},
): Promise<HandlerConfig> {
  const secrets = dependencies.secrets ?? createSecretsManagerReader();
  const routes = parseRoutes(await readRoutesJson(env));
  await resolveRouteCredentials(routes, env, secrets);
  return {
    catalog: await createCatalogFromEnv(env, secrets),
    lock: await createLockFromEnv(env),
    routes,
  };
}
