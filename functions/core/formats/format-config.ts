/**
 * How a route's record values and keys are encoded, validated once at start-up so a typo is one
 * clear error naming the field, not a dead letter per record.
 */
import { checkSettings, refuseSetting as fail } from '../check-settings.js';
import { type FormatSettings, FormatSettingsSchema, PAYLOAD_FORMATS } from './format-schema.js';

/**
 * - `json`: UTF-8 JSON (any JSON value).
 * - `string`: UTF-8 text, kept as one string (plain-text keys).
 * - `confluent`: Confluent wire format (magic byte 0, 4-byte schema id) — Avro, Protobuf or JSON Schema.
 * - `glue`: AWS Glue Schema Registry wire format (header byte 3, compression byte, schema version UUID).
 * - `auto`: by the first byte — 0 → confluent, 3 → glue, `{` or `[` (after whitespace) → json,
 *   anything else → string.
 */
export type PayloadFormat = (typeof PAYLOAD_FORMATS)[number];
export { PAYLOAD_FORMATS };

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

function parseRegistry(r: NonNullable<FormatSettings['registry']>, path: string): RegistryConfig {
  let url: URL;
  try {
    url = new URL(r.url);
  } catch {
    fail(`${path}.url`, `'${r.url}' is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    fail(`${path}.url`, 'must be http:// or https://');
  const { basicAuth, bearerToken, credentialsSecretArn, credentialsSecretArnEnv } = r;
  if (basicAuth !== undefined && !basicAuth.includes(':'))
    fail(`${path}.basicAuth`, 'must be "user:password"');
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
  return {
    url: r.url,
    basicAuth,
    bearerToken,
    ...(credentialsSecretArn === undefined ? {} : { credentialsSecretArn }),
    ...(credentialsSecretArnEnv === undefined ? {} : { credentialsSecretArnEnv }),
    timeoutMs: r.timeoutMs ?? DEFAULT_REGISTRY_TIMEOUT_MS,
  };
}

/**
 * Parses a route's `format` setting. Absent → `{ value: 'json' }`.
 * @throws RouteConfigError (a ValidationError) listing the problems with their paths
 *   (e.g. `format.registry.url: ...`)
 */
export function parseFormatConfig(raw: unknown, path = 'format'): FormatConfig {
  if (raw === undefined) return { value: 'json' };
  checkSettings(FormatSettingsSchema, raw, path);
  const f = raw as FormatSettings;
  const config: FormatConfig = { value: f.value ?? 'json' };
  if (f.key !== undefined) config.key = f.key;
  if (f.registry !== undefined) config.registry = parseRegistry(f.registry, `${path}.registry`);
  if (f.glue !== undefined) config.glue = { registryName: f.glue.registryName, region: f.glue.region };
  for (const side of ['value', 'key'] as const) {
    if (config[side] === 'confluent' && !config.registry) {
      fail(`${path}.registry`, `is required when ${side} is 'confluent' (set registry.url)`);
    }
  }
  return config;
}
