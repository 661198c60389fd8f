/**
 * Which catalog (and commit lock) a `floe` command works on. The flags are translated into the very
 * environment the Lambda handlers read (functions/handlers/README.md) and handed to the handlers' own
 * constructors, so the CLI opens a deployed stack's tables exactly as its functions do. The `FLOE_*`
 * variables already in the environment are the defaults, flags win over them; AWS settings (region,
 * credentials, `AWS_ENDPOINT_URL` for moto or LocalStack) come from the standard environment, read by
 * the SDK clients themselves.
 *
 * `--warehouse DIR` alone is the embedded catalog, whatever FLOE_CATALOG says: that is what the
 * README's commands and `npm start` have always meant.
 */
import type { Catalog } from '../core/catalog/catalog.js';
import type { CommitLock } from '../core/lock/commit-lock.js';
// Types only at load: the handlers' config loads the routes and formats code, ~0.5 s of CPU that
// `floe --help` (which prints CATALOG_USAGE) must not pay. openCatalog imports it when it runs.
import type { Env } from '../handlers/config.js';
import { UsageError } from './usage-error.js';

export const CATALOG_OPTIONS = {
  catalog: { type: 'string' },
  'table-bucket-arn': { type: 'string' },
  uri: { type: 'string' },
  'rest-warehouse': { type: 'string' },
  credential: { type: 'string' },
  token: { type: 'string' },
  sigv4: { type: 'boolean' },
  'signing-name': { type: 'string' },
  'oauth2-server-uri': { type: 'string' },
  scope: { type: 'string' },
  audience: { type: 'string' },
  resource: { type: 'string' },
  'oauth2-param': { type: 'string', multiple: true },
  'oauth2-client-auth': { type: 'string' },
  'lock-table': { type: 'string' },
} as const;

export const CATALOG_USAGE = `catalog options (every command but demo):
  --warehouse DIR          the embedded catalog on a local or s3:// warehouse (FLOE_WAREHOUSE)
  --catalog embedded|s3tables|rest
                           which catalog (FLOE_CATALOG); implied by the flags below when left out
  --table-bucket-arn ARN   S3 Tables: the table bucket (FLOE_TABLE_BUCKET_ARN)
  --uri URL                REST: the catalog's base URI, without /v1 (FLOE_REST_URI)
  --rest-warehouse W       REST: the warehouse sent to GET /v1/config (FLOE_REST_WAREHOUSE)
  --credential ID:SECRET | --token T
                           REST: OAuth2 client credentials or a bearer token (both visible in \`ps\`:
                           FLOE_REST_CREDENTIAL_SECRET_ARN reads them from Secrets Manager instead)
  --sigv4 [--signing-name N]
                           REST: sign requests with SigV4 as N (default execute-api; s3tables, glue)
                           (FLOE_REST_SIGV4_SIGNING_NAME)
  --oauth2-server-uri URL  REST: the OAuth2 token endpoint, default URI/v1/oauth/tokens
                           (FLOE_REST_OAUTH2_SERVER_URI)
  --scope S, --audience A, --resource R
                           REST: the token request's scope (default catalog), audience and resource
                           (FLOE_REST_SCOPE, FLOE_REST_AUDIENCE, FLOE_REST_RESOURCE)
  --oauth2-param K=V       REST: one more token request field, repeatable (FLOE_REST_OAUTH2_PARAMS,
                           a JSON object)
  --oauth2-client-auth post|basic
                           REST: client id and secret as form fields (default) or HTTP Basic
                           (FLOE_REST_OAUTH2_CLIENT_AUTH)
  --lock-table NAME        DynamoDB commit lock for the commands that commit (ingest, maintain,
                           alter, dlq), created when missing (FLOE_LOCK_TABLE; lease FLOE_LOCK_LEASE_MS)
  AWS region, credentials and endpoint from the standard environment (AWS_REGION, AWS_PROFILE,
  AWS_ENDPOINT_URL for moto or LocalStack)
`;

export type CatalogKind = 'embedded' | 's3tables' | 'rest';
const KINDS: readonly CatalogKind[] = ['embedded', 's3tables', 'rest'];

/** The catalog flags as parseArgs returns them. */
export interface CatalogFlags {
  warehouse?: string;
  catalog?: string;
  'table-bucket-arn'?: string;
  uri?: string;
  'rest-warehouse'?: string;
  credential?: string;
  token?: string;
  sigv4?: boolean;
  'signing-name'?: string;
  'oauth2-server-uri'?: string;
  scope?: string;
  audience?: string;
  resource?: string;
  'oauth2-param'?: string[];
  'oauth2-client-auth'?: string;
  'lock-table'?: string;
}

type CatalogFlag = Exclude<keyof CatalogFlags, 'catalog' | 'lock-table'>;

/** The flags that belong to one kind of catalog only. */
const FLAGS_OF: Record<CatalogKind, readonly CatalogFlag[]> = {
  embedded: ['warehouse'],
  s3tables: ['table-bucket-arn'],
  rest: [
    'uri',
    'rest-warehouse',
    'credential',
    'token',
    'sigv4',
    'signing-name',
    'oauth2-server-uri',
    'scope',
    'audience',
    'resource',
    'oauth2-param',
    'oauth2-client-auth',
  ],
};

/** The OAuth2 client-credentials flags, and the variables they set. */
const OAUTH2_FLAGS = [
  ['oauth2-server-uri', 'FLOE_REST_OAUTH2_SERVER_URI'],
  ['scope', 'FLOE_REST_SCOPE'],
  ['audience', 'FLOE_REST_AUDIENCE'],
  ['resource', 'FLOE_REST_RESOURCE'],
  ['oauth2-client-auth', 'FLOE_REST_OAUTH2_CLIENT_AUTH'],
] as const;

/** Token request fields the flags own (grant_type and the client's id and secret are floe's). */
const RESERVED_PARAMS = ['grant_type', 'client_id', 'client_secret', 'scope', 'audience', 'resource'];

/** What the flags and the environment select. */
export interface CatalogSettings {
  kind: CatalogKind;
  /** The handlers' environment shape: what createCatalogFromEnv / createLockFromEnv read. */
  env: Env;
  /** REST auth given on the command line (the handlers' environment has no place for a secret itself). */
  credential?: string;
  token?: string;
}

const given = (flags: CatalogFlags, flag: CatalogFlag): boolean =>
  flags[flag] !== undefined &&
  flags[flag] !== false &&
  !(Array.isArray(flags[flag]) && flags[flag].length === 0);

function parseKind(text: string, source: string): CatalogKind {
  if (!KINDS.includes(text as CatalogKind)) {
    throw new UsageError(`${source} must be embedded, s3tables or rest, not '${text}'`);
  }
  return text as CatalogKind;
}

function chooseKind(flags: CatalogFlags, env: Env): CatalogKind {
  const used = KINDS.flatMap((kind) =>
    FLAGS_OF[kind].filter((f) => given(flags, f)).map((flag) => ({ kind, flag })),
  );
  if (flags.catalog !== undefined) {
    const kind = parseKind(flags.catalog, '--catalog');
    const foreign = used.find((u) => u.kind !== kind);
    if (foreign) {
      throw new UsageError(
        `--${foreign.flag} is for --catalog ${foreign.kind}, not --catalog ${kind}: leave one of them out`,
      );
    }
    return kind;
  }
  const first = used[0];
  const other = used.find((u) => u.kind !== first?.kind);
  if (first && other) {
    throw new UsageError(
      `--${first.flag} (${first.kind} catalog) and --${other.flag} (${other.kind} catalog) conflict: give the flags of one catalog`,
    );
  }
  if (first) return first.kind;
  if (env.FLOE_CATALOG) return parseKind(env.FLOE_CATALOG, 'FLOE_CATALOG');
  if (env.FLOE_WAREHOUSE) return 'embedded';
  throw new UsageError(
    'no catalog given: use --warehouse DIR (local or s3://), --table-bucket-arn ARN (S3 Tables) or --uri URL (REST), or set FLOE_CATALOG and its variables',
  );
}

/**
 * Flags + environment → the handlers' environment for the chosen catalog. Pure: no AWS call.
 * @throws UsageError for conflicting flags, a missing setting, or a malformed value
 */
export function resolveCatalogSettings(flags: CatalogFlags, env: Env = process.env): CatalogSettings {
  const kind = chooseKind(flags, env);
  const out: Env = {
    FLOE_CATALOG: kind,
    FLOE_LOCK_TABLE: flags['lock-table'] ?? env.FLOE_LOCK_TABLE,
    FLOE_LOCK_LEASE_MS: env.FLOE_LOCK_LEASE_MS,
  };
  if (flags['lock-table'] === '') throw new UsageError('--lock-table needs a table name');
  const settings: CatalogSettings = { kind, env: out };
  switch (kind) {
    case 'embedded':
      out.FLOE_WAREHOUSE = flags.warehouse ?? env.FLOE_WAREHOUSE;
      if (!out.FLOE_WAREHOUSE)
        throw new UsageError('the embedded catalog needs --warehouse DIR (or FLOE_WAREHOUSE)');
      break;
    case 's3tables':
      out.FLOE_TABLE_BUCKET_ARN = flags['table-bucket-arn'] ?? env.FLOE_TABLE_BUCKET_ARN;
      if (!out.FLOE_TABLE_BUCKET_ARN)
        throw new UsageError(
          '--catalog s3tables needs --table-bucket-arn ARN (or FLOE_TABLE_BUCKET_ARN), e.g. arn:aws:s3tables:us-east-1:123456789012:bucket/NAME',
        );
      break;
    case 'rest':
      Object.assign(settings, restSettings(flags, env, out));
      break;
  }
  return settings;
}

function restSettings(flags: CatalogFlags, env: Env, out: Env): Partial<CatalogSettings> {
  out.FLOE_REST_URI = flags.uri ?? env.FLOE_REST_URI;
  if (!out.FLOE_REST_URI) throw new UsageError('--catalog rest needs --uri URL (or FLOE_REST_URI)');
  out.FLOE_REST_WAREHOUSE = flags['rest-warehouse'] ?? env.FLOE_REST_WAREHOUSE;
  const { credential, token } = flags;
  if (credential !== undefined && token !== undefined)
    throw new UsageError('--credential and --token conflict: give one way to authenticate');
  if (flags.sigv4 && (credential !== undefined || token !== undefined))
    throw new UsageError(
      `--sigv4 and --${credential !== undefined ? 'credential' : 'token'} conflict: give one way to authenticate`,
    );
  if (flags['signing-name'] !== undefined && !flags.sigv4)
    throw new UsageError('--signing-name goes with --sigv4 (e.g. --sigv4 --signing-name s3tables)');
  if (credential !== undefined && !/^[^:]+:.+$/.test(credential))
    throw new UsageError('--credential must be CLIENT_ID:SECRET');
  if (token === '') throw new UsageError('--token needs a value');
  // Auth on the command line replaces the environment's: a secret ARN or signing name there would
  // otherwise win or mix with it.
  const authByFlags = flags.sigv4 || credential !== undefined || token !== undefined;
  out.FLOE_REST_CREDENTIAL_SECRET_ARN = authByFlags ? undefined : env.FLOE_REST_CREDENTIAL_SECRET_ARN;
  out.FLOE_REST_SIGV4_SIGNING_NAME = flags.sigv4
    ? (flags['signing-name'] ?? 'execute-api')
    : authByFlags
      ? undefined
      : env.FLOE_REST_SIGV4_SIGNING_NAME;
  oauth2Settings(flags, env, out);
  return { credential, token };
}

/** The OAuth2 flags into the environment: each wins over its variable. @throws UsageError */
function oauth2Settings(flags: CatalogFlags, env: Env, out: Env): void {
  const used: string[] = OAUTH2_FLAGS.filter(([flag]) => flags[flag] !== undefined).map(([flag]) => flag);
  if (flags['oauth2-param']?.length) used.push('oauth2-param');
  const other = flags.token !== undefined ? 'token' : flags.sigv4 ? 'sigv4' : undefined;
  if (used.length > 0 && other) {
    throw new UsageError(
      `--${used[0]} goes with OAuth2 client credentials (--credential, or a credential secret), not --${other}`,
    );
  }
  for (const [flag, variable] of OAUTH2_FLAGS) {
    const value = flags[flag];
    if (value === '') throw new UsageError(`--${flag} needs a value`);
    out[variable] = value ?? env[variable];
  }
  const serverUri = flags['oauth2-server-uri'];
  if (serverUri !== undefined && !/^https?:\/\/[^/]/.test(serverUri))
    throw new UsageError(`--oauth2-server-uri must be an http(s) URL, not '${serverUri}'`);
  const clientAuth = flags['oauth2-client-auth'];
  if (clientAuth !== undefined && clientAuth !== 'post' && clientAuth !== 'basic')
    throw new UsageError(`--oauth2-client-auth must be post or basic, not '${clientAuth}'`);
  out.FLOE_REST_OAUTH2_PARAMS = env.FLOE_REST_OAUTH2_PARAMS;
  const params = flags['oauth2-param'] ?? [];
  if (params.length > 0) out.FLOE_REST_OAUTH2_PARAMS = JSON.stringify(parseParams(params, env));
}

/** `--oauth2-param K=V` flags over FLOE_REST_OAUTH2_PARAMS. @throws UsageError */
function parseParams(params: string[], env: Env): Record<string, string> {
  let merged: Record<string, string> = {};
  if (env.FLOE_REST_OAUTH2_PARAMS) {
    const parsed: unknown = (() => {
      try {
        return JSON.parse(env.FLOE_REST_OAUTH2_PARAMS);
      } catch {
        return undefined;
      }
    })();
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new UsageError('FLOE_REST_OAUTH2_PARAMS must be a JSON object of strings');
    merged = { ...(parsed as Record<string, string>) };
  }
  for (const param of params) {
    const equals = param.indexOf('=');
    if (equals <= 0) throw new UsageError(`--oauth2-param must be KEY=VALUE, not '${param}'`);
    const key = param.slice(0, equals);
    if (RESERVED_PARAMS.includes(key))
      throw new UsageError(
        `--oauth2-param ${key}=... is not allowed: ${key === 'scope' || key === 'audience' || key === 'resource' ? `use --${key}` : 'floe sets it from the credential'}`,
      );
    merged[key] = param.slice(equals + 1);
  }
  return merged;
}

export interface OpenedCatalog {
  kind: CatalogKind;
  catalog: Catalog;
  /** The DynamoDB lock when a lock table is configured (and `withLock`). */
  lock?: CommitLock;
}

/**
 * Opens the catalog the flags (and environment) select, and with `withLock` the commit lock, creating
 * its DynamoDB table when missing (for local use; a deployed stack's table is only looked up).
 * @throws UsageError for bad flags; ValidationError / LakeError from the catalog or lock constructors
 */
export async function openCatalog(
  flags: CatalogFlags,
  options: { withLock?: boolean; env?: Env } = {},
): Promise<OpenedCatalog> {
  const settings = resolveCatalogSettings(flags, options.env ?? process.env);
  const catalog = await createCatalog(settings);
  if (!options.withLock) return { kind: settings.kind, catalog };
  const { createLockFromEnv } = await import('../handlers/config.js');
  const lock = await createLockFromEnv(settings.env);
  if (lock) {
    // Loaded only when a lock is configured: most local runs never need the DynamoDB SDK.
    const [{ DynamoDbLock }, { ensureLockTable }] = await Promise.all([
      import('../core/lock/dynamodb-lock.js'),
      import('../core/lock/ensure-lock-table.js'),
    ]);
    if (lock instanceof DynamoDbLock) await ensureLockTable(lock.client, lock.tableName);
  }
  return { kind: settings.kind, catalog, lock };
}

async function createCatalog(settings: CatalogSettings): Promise<Catalog> {
  if (settings.credential === undefined && settings.token === undefined)
    return (await import('../handlers/config.js')).createCatalogFromEnv(settings.env);
  // The handlers read REST auth from Secrets Manager only; given on the command line it goes straight
  // to the same RestCatalog the handlers build, with the same settings.
  const [{ RestCatalog }, { restOptionsFromEnv }] = await Promise.all([
    import('../core/catalog/rest/rest-catalog.js'),
    import('../handlers/rest-config.js'),
  ]);
  return new RestCatalog({
    ...restOptionsFromEnv(settings.env),
    credential: settings.credential,
    token: settings.token,
  });
}
