/**
 * Handler configuration from the environment the CDK construct sets (see README.md here).
 * Read once per cold start; every problem is one clear ValidationError naming the variable.
 */
import type { Catalog } from '../core/catalog/catalog.js';
import { ValidationError } from '../core/errors.js';
import { parseRoutes, type TableRoute } from '../core/ingest/routes.js';
import type { CommitLock } from '../core/lock/commit-lock.js';

export interface HandlerConfig {
  catalog: Catalog;
  lock?: CommitLock;
  routes: TableRoute[];
}

export type Env = Record<string, string | undefined>;

function required(env: Env, name: string): string {
  const v = env[name];
  if (!v) throw new ValidationError(`environment variable ${name} is required`);
  return v;
}

export async function createCatalogFromEnv(env: Env): Promise<Catalog> {
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
      return createRestCatalogFromEnv(env);
    }
    default:
      throw new ValidationError(`FLOE_CATALOG must be embedded, s3tables or rest, not '${kind}'`);
  }
}

export async function createLockFromEnv(env: Env): Promise<CommitLock | undefined> {
  if (!env.FLOE_LOCK_TABLE) return undefined;
  const leaseMs = env.FLOE_LOCK_LEASE_MS ? Number(env.FLOE_LOCK_LEASE_MS) : undefined;
  if (leaseMs !== undefined && !(leaseMs > 0))
    throw new ValidationError('FLOE_LOCK_LEASE_MS must be a positive number');
  const { DynamoDbLock } = await import('../core/lock/dynamodb-lock.js');
  return new DynamoDbLock({ tableName: env.FLOE_LOCK_TABLE, leaseMs });
}

/** @throws ValidationError for a missing or malformed variable */
export async function loadHandlerConfig(env: Env = process.env): Promise<HandlerConfig> {
  let routesJson: unknown;
  try {
    routesJson = JSON.parse(required(env, 'FLOE_TABLES'));
  } catch (error) {
    if (error instanceof ValidationError) throw error;
    throw new ValidationError(`FLOE_TABLES is not valid JSON: ${(error as Error).message}`);
  }
  return {
    catalog: await createCatalogFromEnv(env),
    lock: await createLockFromEnv(env),
    routes: parseRoutes(routesJson),
  };
}
