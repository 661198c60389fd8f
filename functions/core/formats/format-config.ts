/**
 * How a route's record values and keys are encoded, validated once at start-up so a typo is one
 * clear error naming the field, not a dead letter per record.
 */
import { ValidationError } from '../errors.js';

/**
 * - `json`: UTF-8 JSON (any JSON value).
 * - `string`: UTF-8 text, kept as one string (plain-text keys).
 * - `confluent`: Confluent wire format (magic byte 0, 4-byte schema id) — Avro, Protobuf or JSON Schema.
 * - `glue`: AWS Glue Schema Registry wire format (header byte 3, compression byte, schema version UUID).
 * - `auto`: by the first byte — 0 → confluent, 3 → glue, `{` or `[` (after whitespace) → json,
 *   anything else → string.
 */
export type PayloadFormat = 'json' | 'string' | 'confluent' | 'glue' | 'auto';
export const PAYLOAD_FORMATS: readonly PayloadFormat[] = ['json', 'string', 'confluent', 'glue', 'auto'];

export interface RegistryConfig {
  /** Base URL of a Confluent-compatible Schema Registry (a path prefix is kept). */
  url: string;
  /**
   * `user:password` for HTTP basic auth. Plain text in a route is for local use (the CLI); a deployed
   * route names a secret instead (`credentialsSecretArn`), which the handler resolves into this field.
   */
  basicAuth?: string;
  /** Bearer token, for registries behind OAuth (not together with basicAuth); see `basicAuth`. */
  bearerToken?: string;
  /**
   * Secrets Manager secret (ARN or name) holding the credentials: `{"username","password"}`,
   * `{"basicAuth":"user:password"}` or `{"bearerToken":"..."}`. Read once per cold start by the handler.
   */
  credentialsSecretArn?: string;
  /**
   * Name of an environment variable holding that ARN: the CDK construct's way of naming a secret whose
   * ARN is known only at deploy time (the routes file is written at synth).
   */
  credentialsSecretArnEnv?: string;
  /** Per-request timeout. @default 5000 */
  timeoutMs: number;
}

export interface GlueConfig {
  /** When set, a schema version from another Glue registry is refused (the record is dead-lettered). */
  registryName?: string;
  /** @default the Lambda's region (AWS_REGION) */
  region?: string;
}

export interface FormatConfig {
  value: PayloadFormat;
  /** Absent: keys are not decoded here (the mapper sees their raw bytes). */
  key?: PayloadFormat;
  registry?: RegistryConfig;
  glue?: GlueConfig;
}

export const DEFAULT_REGISTRY_TIMEOUT_MS = 5_000;

function fail(path: string, message: string): never {
  throw new ValidationError(`${path}: ${message}`);
}

function checkKeys(obj: Record<string, unknown>, allowed: string[], path: string): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key))
      fail(`${path}.${key}`, `unknown field (expected one of ${allowed.join(', ')})`);
  }
}

function asObject(raw: unknown, path: string): Record<string, unknown> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) fail(path, 'must be an object');
  return raw as Record<string, unknown>;
}

function parseFormat(raw: unknown, path: string): PayloadFormat {
  if (typeof raw !== 'string' || !PAYLOAD_FORMATS.includes(raw as PayloadFormat)) {
    fail(path, `must be one of ${PAYLOAD_FORMATS.join(', ')} (got ${JSON.stringify(raw)})`);
  }
  return raw as PayloadFormat;
}

function optionalString(raw: unknown, path: string): string | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || raw.trim() === '') fail(path, 'must be a non-empty string');
  return raw;
}

function parseRegistry(raw: unknown, path: string): RegistryConfig {
  const r = asObject(raw, path);
  checkKeys(
    r,
    ['url', 'basicAuth', 'bearerToken', 'credentialsSecretArn', 'credentialsSecretArnEnv', 'timeoutMs'],
    path,
  );
  if (typeof r.url !== 'string') fail(`${path}.url`, 'must be the registry URL (http:// or https://)');
  let url: URL;
  try {
    url = new URL(r.url);
  } catch {
    fail(`${path}.url`, `'${r.url}' is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    fail(`${path}.url`, 'must be http:// or https://');
  const basicAuth = optionalString(r.basicAuth, `${path}.basicAuth`);
  if (basicAuth !== undefined && !basicAuth.includes(':'))
    fail(`${path}.basicAuth`, 'must be "user:password"');
  const bearerToken = optionalString(r.bearerToken, `${path}.bearerToken`);
  const credentialsSecretArn = optionalString(r.credentialsSecretArn, `${path}.credentialsSecretArn`);
  const credentialsSecretArnEnv = optionalString(
    r.credentialsSecretArnEnv,
    `${path}.credentialsSecretArnEnv`,
  );
  if (basicAuth !== undefined && bearerToken !== undefined) {
    fail(path, 'set basicAuth or bearerToken, not both');
  }
  const secrets = [credentialsSecretArn, credentialsSecretArnEnv].filter((v) => v !== undefined).length;
  if (secrets > 1 || (secrets === 1 && (basicAuth !== undefined || bearerToken !== undefined))) {
    fail(
      path,
      'name the credentials one way: basicAuth, bearerToken, credentialsSecretArn or credentialsSecretArnEnv',
    );
  }
  const timeoutMs = r.timeoutMs ?? DEFAULT_REGISTRY_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || (timeoutMs as number) < 1 || (timeoutMs as number) > 120_000) {
    fail(`${path}.timeoutMs`, 'must be an integer number of milliseconds between 1 and 120000');
  }
  return {
    url: r.url,
    basicAuth,
    bearerToken,
    ...(credentialsSecretArn === undefined ? {} : { credentialsSecretArn }),
    ...(credentialsSecretArnEnv === undefined ? {} : { credentialsSecretArnEnv }),
    timeoutMs: timeoutMs as number,
  };
}

function parseGlue(raw: unknown, path: string): GlueConfig {
  const g = asObject(raw, path);
  checkKeys(g, ['registryName', 'region'], path);
  return {
    registryName: optionalString(g.registryName, `${path}.registryName`),
    region: optionalString(g.region, `${path}.region`),
  };
}

/**
 * Parses a route's `format` setting. Absent → `{ value: 'json' }`.
 * @throws ValidationError naming the offending field (e.g. `format.registry.url: ...`)
 */
export function parseFormatConfig(raw: unknown, path = 'format'): FormatConfig {
  if (raw === undefined) return { value: 'json' };
  const f = asObject(raw, path);
  checkKeys(f, ['value', 'key', 'registry', 'glue'], path);
  const config: FormatConfig = {
    value: f.value === undefined ? 'json' : parseFormat(f.value, `${path}.value`),
  };
  if (f.key !== undefined) config.key = parseFormat(f.key, `${path}.key`);
  if (f.registry !== undefined) config.registry = parseRegistry(f.registry, `${path}.registry`);
  if (f.glue !== undefined) config.glue = parseGlue(f.glue, `${path}.glue`);
  for (const side of ['value', 'key'] as const) {
    if (config[side] === 'confluent' && !config.registry) {
      fail(`${path}.registry`, `is required when ${side} is 'confluent' (set registry.url)`);
    }
  }
  return config;
}
