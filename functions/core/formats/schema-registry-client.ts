/**
 * A client for the Confluent Schema Registry REST API — the two reads floe needs:
 * `GET /schemas/ids/{id}` and `GET /subjects/{subject}/versions/{version}` (schema references).
 *
 * Schema ids never change meaning, so answers are cached for as long as the LRU keeps them, and
 * concurrent lookups of one id share a request. Failures are sorted by what they mean for a batch:
 * - the registry says the schema does not exist (404 with a Confluent error code) → RecordDecodeError:
 *   that record goes to the DLQ, the batch goes on (kept for 30 s so a batch asks once);
 * - the registry is unreachable, times out, or answers 5xx/408/429 (after retries) →
 *   TransientIOError: the batch fails and the ESM redelivers it; nothing is dead-lettered;
 * - any other answer (401/403 credentials, a 404 that is not the registry's, a malformed body) fails
 *   the batch too: dead-lettering every record for a configuration problem would be wrong.
 *
 * What the registry can make this client do is bounded: bodies are read with a size cap (16 MiB, or
 * `maxResponseBytes` / `FLOE_SCHEMA_REGISTRY_MAX_RESPONSE_BYTES`) within the request's timeout (which covers
 * the body, so a slow drip times out); redirects are followed only within the registry's origin, so the
 * `Authorization` header never goes elsewhere; and the registry's words are redacted (redact.ts) before
 * they go into an error — a 401 body echoing the request's `Authorization` header went into logs verbatim.
 */
import { LakeError, RecordDecodeError, TransientIOError } from '../errors.js';
import { readCappedText, resolveByteLimit } from '../io/http-body.js';
import { redact, registerSecret } from '../redact.js';
import type { RegistryConfig } from './format-config.js';
import { CachedLoader } from './lru-cache.js';

export type RegistrySchemaType = 'AVRO' | 'PROTOBUF' | 'JSON';

export interface RegistryReference {
  /** Avro: the referenced type's full name; Protobuf: the import path; JSON Schema: the `$ref` URL. */
  name: string;
  subject: string;
  version: number;
}

export interface RegistrySchema {
  schemaType: RegistrySchemaType;
  /** The schema text as registered (Avro JSON, `.proto` source, JSON Schema JSON). */
  schema: string;
  references: RegistryReference[];
}

export interface SchemaRegistryClient {
  /** @throws RecordDecodeError for an unknown id; TransientIOError / LakeError for registry trouble */
  getSchemaById(id: number): Promise<RegistrySchema>;
  /** @throws RecordDecodeError for an unknown subject or version; TransientIOError / LakeError otherwise */
  getSchemaByVersion(subject: string, version: number): Promise<RegistrySchema>;
}

export interface SchemaRegistryClientOptions extends RegistryConfig {
  /** For tests and custom agents. @default globalThis.fetch */
  fetch?: typeof fetch;
  /** Schemas kept. @default 1000 */
  cacheSize?: number;
  /** Attempts per request for transient failures. @default 3 */
  maxAttempts?: number;
  /** First retry delay, doubled per attempt. @default 100 */
  retryDelayMs?: number;
  /** The largest response body read. @default FLOE_SCHEMA_REGISTRY_MAX_RESPONSE_BYTES, else 16 MiB */
  maxResponseBytes?: number;
}

const MAX_RESPONSE_BYTES_ENV = 'FLOE_SCHEMA_REGISTRY_MAX_RESPONSE_BYTES';
const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
const MAX_REDIRECTS = 5;

const SCHEMA_TYPES: readonly RegistrySchemaType[] = ['AVRO', 'PROTOBUF', 'JSON'];
/** Confluent's error codes for "subject / version / schema not found". */
const NOT_FOUND_CODES = new Set([40401, 40402, 40403]);
const ACCEPT =
  'application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json, application/json';

/**
 * A 404 that the registry itself answered (as opposed to a proxy or a wrong base path): the schema
 * is not there, and asking again cannot help. The loaders turn it into a RecordDecodeError.
 */
class RegistryNotFoundError extends LakeError {}

/** Refused credentials: the batch fails (retryable) but asking again within it cannot help. */
class RegistryAuthError extends TransientIOError {}

function parseSchemaBody(body: unknown, what: string): RegistrySchema {
  const b = body as Record<string, unknown> | null;
  if (!b || typeof b !== 'object' || typeof b.schema !== 'string') {
    throw new LakeError(`schema registry answered ${what} without a "schema" string`);
  }
  const schemaType = (b.schemaType ?? 'AVRO') as RegistrySchemaType;
  if (!SCHEMA_TYPES.includes(schemaType)) {
    throw new LakeError(
      `schema registry answered ${what} with unknown schemaType ${JSON.stringify(b.schemaType)}`,
    );
  }
  const references: RegistryReference[] = [];
  for (const r of (b.references ?? []) as unknown[]) {
    const ref = r as Record<string, unknown> | null;
    if (
      !ref ||
      typeof ref.name !== 'string' ||
      typeof ref.subject !== 'string' ||
      !Number.isInteger(ref.version)
    ) {
      throw new LakeError(`schema registry answered ${what} with a malformed reference ${JSON.stringify(r)}`);
    }
    references.push({ name: ref.name, subject: ref.subject, version: ref.version as number });
  }
  return { schemaType, schema: b.schema, references };
}

function authorization(options: RegistryConfig): string | undefined {
  registerSecret(options.basicAuth, { pair: true });
  registerSecret(options.bearerToken);
  if (options.basicAuth !== undefined) return `Basic ${Buffer.from(options.basicAuth).toString('base64')}`;
  if (options.bearerToken !== undefined) return `Bearer ${options.bearerToken}`;
  return undefined;
}

function isRetryableStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}

/** Creates a caching client. Does no I/O until the first lookup. */
export function createSchemaRegistryClient(options: SchemaRegistryClientOptions): SchemaRegistryClient {
  const base = options.url.replace(/\/+$/, '');
  // For messages: a URL may carry user:password.
  const shownBase = redact(base);
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const maxAttempts = options.maxAttempts ?? 3;
  const retryDelayMs = options.retryDelayMs ?? 100;
  const headers: Record<string, string> = { Accept: ACCEPT };
  const auth = authorization(options);
  if (auth) headers.Authorization = auth;
  const maxBytes = resolveByteLimit(
    [
      { name: 'maxResponseBytes', value: options.maxResponseBytes },
      { name: MAX_RESPONSE_BYTES_ENV, value: process.env[MAX_RESPONSE_BYTES_ENV] },
    ],
    DEFAULT_MAX_RESPONSE_BYTES,
  );

  /** One GET, following redirects only within the registry's origin. */
  async function fetchSameOrigin(path: string, signal: AbortSignal): Promise<Response> {
    let url = new URL(`${base}${path}`);
    for (let hop = 0; ; hop++) {
      const response = await fetchImpl(url.href, { headers, redirect: 'manual', signal });
      if (response.status < 300 || response.status >= 400 || response.status === 304) return response;
      await response.body?.cancel().catch(() => {});
      let target: URL | undefined;
      try {
        target = new URL(response.headers.get('location') ?? '', url);
      } catch {
        target = undefined;
      }
      if (!target || target.origin !== url.origin || hop >= MAX_REDIRECTS) {
        throw new LakeError(
          `schema registry at ${shownBase} answered GET ${path} with HTTP ${response.status}, a redirect${target ? ` to ${redact(target.origin)}` : ''}; redirects off the registry's origin are not followed (its credentials would go along). Set registry.url to the registry itself`,
        );
      }
      url = target;
    }
  }

  async function attempt(path: string): Promise<unknown> {
    let response: Response;
    try {
      response = await fetchSameOrigin(path, AbortSignal.timeout(options.timeoutMs));
      const text = await readCappedText(response, {
        maxBytes,
        what: `schema registry GET ${path}`,
        raiseWith: `the environment variable ${MAX_RESPONSE_BYTES_ENV}`,
      });
      if (response.ok) {
        try {
          return JSON.parse(text);
        } catch {
          throw new LakeError(`schema registry answered GET ${path} with a body that is not JSON`);
        }
      }
      if (response.status === 404) {
        let code: unknown;
        try {
          code = (JSON.parse(text) as { error_code?: unknown }).error_code;
        } catch {
          // not the registry's own answer: handled below
        }
        if (NOT_FOUND_CODES.has(code as number))
          throw new RegistryNotFoundError(
            `schema registry at ${shownBase} has nothing at GET ${path}: ${redact(text).slice(0, 1000)}`,
          );
        throw new LakeError(
          `schema registry at ${shownBase} answered 404 for GET ${path} without a registry error code — is registry.url right?`,
        );
      }
      // Redacted before cutting, so a secret cut in half at the edge is still recognised.
      const detail = `schema registry at ${shownBase} answered ${response.status} for GET ${path}: ${redact(text).slice(0, 200)}`;
      if (isRetryableStatus(response.status)) throw new TransientIOError(detail);
      if (response.status === 401 || response.status === 403) {
        // Retryable so the batch fails and is redelivered once the credentials are fixed.
        throw new RegistryAuthError(`${detail} (check registry.basicAuth / registry.bearerToken)`);
      }
      throw new LakeError(detail);
    } catch (error) {
      if (error instanceof LakeError) throw error;
      const timedOut = (error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError';
      throw new TransientIOError(
        timedOut
          ? `schema registry at ${shownBase} did not answer GET ${path} within ${options.timeoutMs} ms`
          : `schema registry at ${shownBase} is unreachable: ${redact((error as Error).message)}`,
        { cause: error },
      );
    }
  }

  async function get(path: string): Promise<unknown> {
    for (let i = 1; ; i++) {
      try {
        return await attempt(path);
      } catch (error) {
        const transient = error instanceof TransientIOError && !(error instanceof RegistryAuthError);
        if (!transient || i >= maxAttempts) throw error;
        await new Promise((resolve) => setTimeout(resolve, retryDelayMs * 2 ** (i - 1)));
      }
    }
  }

  const cacheOptions = {
    capacity: options.cacheSize ?? 1000,
    cacheFailure: (error: unknown) => error instanceof RecordDecodeError,
  };
  const byId = new CachedLoader<number, RegistrySchema>(async (id) => {
    try {
      return parseSchemaBody(await get(`/schemas/ids/${id}`), `schema id ${id}`);
    } catch (error) {
      if (error instanceof RegistryNotFoundError) {
        throw new RecordDecodeError(
          `unknown schema id ${id} (not in the schema registry at ${shownBase})`,
          'decode',
        );
      }
      throw error;
    }
  }, cacheOptions);
  const byVersion = new CachedLoader<string, RegistrySchema>(async (key) => {
    const [subject, version] = JSON.parse(key) as [string, number];
    try {
      return parseSchemaBody(
        await get(`/subjects/${encodeURIComponent(subject)}/versions/${version}`),
        `subject ${subject} version ${version}`,
      );
    } catch (error) {
      if (error instanceof RegistryNotFoundError) {
        throw new RecordDecodeError(
          `schema reference subject '${subject}' version ${version} is not in the schema registry at ${shownBase}`,
          'decode',
        );
      }
      throw error;
    }
  }, cacheOptions);

  return {
    getSchemaById: (id) => byId.get(id),
    getSchemaByVersion: (subject, version) => byVersion.get(JSON.stringify([subject, version])),
  };
}
