/**
 * Configuration of the REST catalog client: its options, the authentication they select, and the
 * server's `GET /v1/config` answer merged the spec's way (defaults, then client properties, then overrides).
 */
import { LakeError, ValidationError } from '../../errors.js';
import type { FileIO } from '../../io/file-io.js';
import { resolveByteLimit } from '../../io/http-body.js';
import type { S3FileIOOptions } from '../../io/s3-file-io.js';
import { redactUrl } from '../../redact.js';
import { parseJsonLossless } from '../../spec/json-codec.js';
import type { OAuth2ClientAuth, RestAuth } from './rest-auth.js';
import type { RestResponse } from './rest-http.js';
import type { SigV4Options } from './rest-sigv4.js';

export interface RestCatalogOptions {
  /** The catalog's base URI, e.g. `https://catalog.example.com/api/catalog` (without `/v1`). */
  uri: string;
  /** Sent as `GET /v1/config?warehouse=`. */
  warehouse?: string;
  /** Client properties, merged between the server's defaults and overrides. */
  properties?: Record<string, string>;
  /** A fixed bearer token. */
  token?: string;
  /** OAuth2 client credentials, `id:secret`. */
  credential?: string;
  /**
   * The OAuth2 token endpoint (Iceberg's `oauth2-server-uri`); the server's config may set it (see
   * rest-signin.ts). @default `${uri}/v1/oauth/tokens`
   */
  oauth2ServerUri?: string;
  /** The token request's `scope` (e.g. `PRINCIPAL_ROLE:ALL` for Polaris). @default 'catalog' */
  scope?: string;
  /** The token request's `audience`. @default none */
  audience?: string;
  /** The token request's `resource`. @default none */
  resource?: string;
  /** Further token request fields (not `grant_type`, `client_*`, `scope`, `audience`, `resource`). */
  oauth2Params?: Record<string, string>;
  /** Client id and secret as form fields (`post`) or in an HTTP Basic header (`basic`). @default 'post' */
  oauth2ClientAuth?: OAuth2ClientAuth;
  /** Sign requests with SigV4 (`signingName: 's3tables'` for S3 Tables, `'glue'` for Glue). */
  sigv4?: boolean | SigV4Options;
  /** Any other authentication; wins over token/credential/sigv4. */
  auth?: RestAuth;
  /** Ask for vended credentials on create and load. @default true */
  vendedCredentials?: boolean;
  /** `auto`: send Idempotency-Key when the server advertises support. @default 'auto' */
  idempotency?: 'auto' | 'always' | 'never';
  /** Resends of a commit with an unknown outcome, with the same Idempotency-Key (only when keys are sent). @default 2 */
  commitRetries?: number;
  /** Per request, headers and body. @default 30000 */
  timeoutMs?: number;
  /**
   * The largest response body read, in bytes (a table-load answer grows with the table's snapshots).
   * @default the client property `rest.max-response-bytes`, else the environment variable
   * `FLOE_REST_MAX_RESPONSE_BYTES`, else 64 MiB
   */
  maxResponseBytes?: number;
  /** FileIO for tables the server vends no credentials for. @default by the table location's scheme */
  io?: FileIO;
  /** Base options for the S3FileIOs built for tables. */
  s3?: S3FileIOOptions;
  headers?: Record<string, string>;
  /** Clock for OAuth2 token expiry. @default Date.now */
  now?: () => number;
  /** @default 'rest' */
  name?: string;
}

/** What the client needs from the server's config answer. */
export interface RestServerConfig {
  /** `${uri}/v1` or `${uri}/v1/${prefix}`. */
  base: string;
  properties: Record<string, string>;
  /** The endpoints the server lists, or undefined for the spec's default set. */
  endpoints: Set<string> | undefined;
  /** Send `Idempotency-Key` on mutations. */
  idempotency: boolean;
  /** The namespace separator in URL-encoded form. */
  separator: string;
}

export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
export const MAX_RESPONSE_BYTES_PROPERTY = 'rest.max-response-bytes';
export const MAX_RESPONSE_BYTES_ENV = 'FLOE_REST_MAX_RESPONSE_BYTES';
/** How to raise the cap, for the error that names it. */
export const RAISE_RESPONSE_LIMIT = `the catalog option ${MAX_RESPONSE_BYTES_PROPERTY} (or the environment variable ${MAX_RESPONSE_BYTES_ENV})`;

/**
 * The response size cap: `maxResponseBytes`, else the `rest.max-response-bytes` property, else
 * `FLOE_REST_MAX_RESPONSE_BYTES`, else 64 MiB. @throws ValidationError for a value that is not a positive integer
 */
export function maxResponseBytesOf(
  options: RestCatalogOptions,
  env: Record<string, string | undefined> = process.env,
): number {
  return resolveByteLimit(
    [
      { name: 'maxResponseBytes', value: options.maxResponseBytes },
      { name: MAX_RESPONSE_BYTES_PROPERTY, value: options.properties?.[MAX_RESPONSE_BYTES_PROPERTY] },
      { name: MAX_RESPONSE_BYTES_ENV, value: env[MAX_RESPONSE_BYTES_ENV] },
    ],
    DEFAULT_MAX_RESPONSE_BYTES,
  );
}

/**
 * The client's own properties, the middle layer of the config merge: `properties`, then the typed options
 * under their Iceberg names (`uri`, `oauth2-server-uri`, `scope`, `audience`, `resource`).
 */
export function clientProperties(options: RestCatalogOptions): Record<string, string> {
  const out: Record<string, string> = { ...(options.properties ?? {}), uri: options.uri };
  const typed: [string, string | undefined][] = [
    ['oauth2-server-uri', options.oauth2ServerUri],
    ['scope', options.scope],
    ['audience', options.audience],
    ['resource', options.resource],
  ];
  for (const [name, value] of typed) if (value !== undefined) out[name] = value;
  return out;
}

/**
 * Merges a `GET /v1/config` body: defaults, then client properties, then overrides (the spec's
 * ConfigResponse: "defaults ... used as default configuration", "overrides ... used to override client
 * configuration"). Of the merged properties floe reads `uri` and `prefix` here, for every later request's
 * URL, and `namespace-separator`, as Iceberg Java (RESTSessionCatalog builds its client and paths from the
 * merged properties) and PyIceberg (`_fetch_config`) do; the sign-in ones are read by rest-signin.ts.
 * @throws LakeError (not retryable) when the merged `uri` is not an http(s) URL
 */
export function buildServerConfig(
  body: Record<string, unknown>,
  options: RestCatalogOptions,
): RestServerConfig {
  const properties = {
    ...stringMap(body.defaults),
    ...clientProperties(options),
    ...stringMap(body.overrides),
  };
  const uri = (properties.uri || options.uri).replace(/\/+$/, '');
  // Every later request's URL is built on it: refused here, not as a TypeError on the next request.
  if (!/^https?:$/.test(protocolOf(uri))) {
    throw new LakeError(
      `GET /v1/config: the catalog's config sets uri to '${redactUrl(uri)}', which is not an http(s) URL; floe sends no request there. Fix the catalog's config (its defaults or overrides)`,
    );
  }
  const prefix = properties.prefix?.replace(/^\/+|\/+$/g, '');
  const mode = options.idempotency ?? 'auto';
  return {
    base: prefix ? `${uri}/v1/${prefix}` : `${uri}/v1`,
    properties,
    endpoints: Array.isArray(body.endpoints) ? new Set(body.endpoints.map(String)) : undefined,
    // The spec: "Presence of this field indicates the server supports Idempotency-Key semantics".
    idempotency:
      mode === 'always' || (mode === 'auto' && typeof body['idempotency-key-lifetime'] === 'string'),
    separator: properties['namespace-separator'] ?? '%1F',
  };
}

function protocolOf(uri: string): string {
  try {
    return new URL(uri).protocol;
  } catch {
    return '';
  }
}

/** `${base}/namespaces/a%1Fb`: levels URL-encoded, joined by the separator. @throws ValidationError for empty levels */
export function namespacePath(config: RestServerConfig, namespace: string[]): string {
  if (namespace.length === 0 || namespace.some((level) => level.length === 0)) {
    throw new ValidationError(`namespace [${namespace.join(', ')}] must have non-empty levels`);
  }
  return `${config.base}/namespaces/${namespace.map(encodeURIComponent).join(config.separator)}`;
}

/** The string-valued entries of a JSON object (anything else is ignored). */
export function stringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) if (typeof v === 'string') out[k] = v;
  }
  return out;
}

/** @throws LakeError when the body is not a JSON object */
export function parseJsonObject(response: RestResponse, what: string): Record<string, unknown> {
  try {
    // 64-bit snapshot ids beyond 2^53 come back as exact bigints
    const json: unknown = parseJsonLossless(response.text);
    if (typeof json === 'object' && json !== null && !Array.isArray(json))
      return json as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new LakeError(
    `${what}: the server answered HTTP ${response.status} with a body that is not a JSON object`,
  );
}
