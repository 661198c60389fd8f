/**
 * Secrets Manager, the one place floe reads secrets from (and the only module importing its SDK):
 * the REST catalog's credential and schema registries' credentials are named by a secret ARN in the
 * configuration and read here once per cold start, so no secret value is ever in an environment
 * variable, a routes file or a CloudFormation template.
 *
 * The SDK is imported lazily: a function whose configuration names no secret never loads it.
 */
import { ValidationError } from '../core/errors.js';

/** Reads a secret's JSON object by ARN (or name). */
export interface SecretReader {
  /**
   * @throws ValidationError when the secret is not a JSON object
   * @throws the SDK's error when the secret cannot be read (missing, no permission, unreachable)
   */
  readJson(secretId: string): Promise<Record<string, unknown>>;
}

/** Parses a secret string as a JSON object, naming the secret (never its value) when it is not one. */
export function parseSecretJson(secretId: string, text: string | undefined): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text ?? '');
  } catch {
    throw new ValidationError(`secret ${secretId} must hold a JSON object (its SecretString is not JSON)`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ValidationError(`secret ${secretId} must hold a JSON object`);
  }
  return parsed as Record<string, unknown>;
}

/**
 * A reader over Secrets Manager (region, endpoint and credentials from the standard AWS environment,
 * so `AWS_ENDPOINT_URL` points it at moto or LocalStack). Each secret is fetched once per reader;
 * a failed read is not cached, so the next cold start (or call) asks again.
 */
export function createSecretsManagerReader(): SecretReader {
  const cache = new Map<string, Promise<Record<string, unknown>>>();
  let client: Promise<{ read: (id: string) => Promise<string | undefined> }> | undefined;
  const connect = async () => {
    const { GetSecretValueCommand, SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
    const sdk = new SecretsManagerClient({});
    return {
      read: async (id: string) => (await sdk.send(new GetSecretValueCommand({ SecretId: id }))).SecretString,
    };
  };
  return {
    readJson(secretId) {
      let value = cache.get(secretId);
      if (!value) {
        client ??= connect();
        value = client.then(async (c) => parseSecretJson(secretId, await c.read(secretId)));
        value.catch(() => cache.delete(secretId));
        cache.set(secretId, value);
      }
      return value;
    },
  };
}

/** Reads one string field of a secret, or undefined when the field is absent. */
export function secretString(
  secret: Record<string, unknown>,
  field: string,
  secretId: string,
): string | undefined {
  const value = secret[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') {
    throw new ValidationError(`secret ${secretId}: "${field}" must be a non-empty string`);
  }
  return value;
}
