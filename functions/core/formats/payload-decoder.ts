/**
 * The decoding stage: a record's value (or key) bytes → a JSON-like value for the mapper, by the
 * route's FormatConfig. Values are what json-to-value.ts reads (see avro-logical-types.ts and
 * protobuf-to-json.ts for what each schema type becomes). A decoder keeps its schema caches for its
 * lifetime: create one per route at start-up, not per batch.
 *
 * Failures: a payload that cannot be decoded (bad framing, unknown schema id, bytes that do not
 * match the schema) is a RecordDecodeError with stage `decode` — that record is dead-lettered. A
 * registry that cannot be asked is a retryable LakeError — the whole batch fails and is redelivered.
 */
import { RecordDecodeError, ValidationError } from '../errors.js';
import type { RawRecord } from '../records/esm-event.js';
import { parseJsonBytes } from '../records/parse-json.js';
import { type CompiledSchema, compileSchema, type Framing, type WriterSchema } from './compiled-schema.js';
import type { FormatConfig, PayloadFormat } from './format-config.js';
import { createGlueSchemaSource, type GlueClientLike, type GlueSchemaSource } from './glue-schema-source.js';
import { CachedLoader } from './lru-cache.js';
import { resolveReferences } from './registry-references.js';
import { createSchemaRegistryClient, type SchemaRegistryClient } from './schema-registry-client.js';
import { CONFLUENT_MAGIC, GLUE_HEADER_VERSION, readConfluentFrame, readGlueFrame } from './wire-format.js';

export type { WriterSchema } from './compiled-schema.js';

export type DecodedFormat = 'json' | 'string' | 'avro' | 'protobuf' | 'json-schema' | 'esm-decoded';

export interface DecodedPayload {
  /**
   * JSON-like: objects, arrays, strings, booleans, null, numbers; integers beyond 2^53 and decimals
   * as JsonNumberText; timestamps as ISO-8601 text; bytes as base64 text.
   */
  value: unknown;
  /** Confluent schema id (number), Glue schema version UUID (string), or the ESM metadata's id. */
  schemaId?: number | string;
  format: DecodedFormat;
  writerSchema?: WriterSchema;
}

export interface DecodeContext {
  topic: string;
  isKey: boolean;
  record: RawRecord;
}

export interface PayloadDecoder {
  /** Whether keys are decoded (a key format is configured); otherwise keys stay raw bytes. */
  readonly decodesKeys: boolean;
  /**
   * @throws RecordDecodeError (stage decode) when this payload cannot be decoded
   * @throws LakeError with `retryable` when a schema registry cannot be asked (fail the batch)
   * @throws ValidationError when asked for a key with no key format configured
   */
  decode(bytes: Uint8Array, context: DecodeContext): Promise<DecodedPayload>;
}

export interface PayloadDecoderDependencies {
  /** A shared Confluent registry client (otherwise one is created from `config.registry`). */
  registry?: SchemaRegistryClient;
  /** A shared Glue schema source (otherwise one is created from `config.glue`). */
  glue?: GlueSchemaSource;
  /** The Glue client the created source uses (tests pass a stub). */
  glueClient?: GlueClientLike;
  /** The fetch the created registry client uses. */
  fetch?: typeof fetch;
  /** Compiled schemas kept. @default 1000 */
  cacheSize?: number;
}

const FORMAT_OF = { AVRO: 'avro', PROTOBUF: 'protobuf', JSON: 'json-schema' } as const;
const utf8 = new TextDecoder('utf-8', { fatal: true });

function isJsonWhitespace(b: number | undefined): boolean {
  return b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;
}

/**
 * The format `auto` picks for these bytes: 0 → confluent, 3 → glue, `{` or `[` after optional
 * whitespace (and a UTF-8 byte order mark) → json, anything else → string.
 */
export function detectFormat(bytes: Uint8Array): Exclude<PayloadFormat, 'auto'> {
  if (bytes[0] === CONFLUENT_MAGIC && bytes.length >= 5) return 'confluent';
  if (bytes[0] === GLUE_HEADER_VERSION && bytes.length >= 18) return 'glue';
  let i = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  while (isJsonWhitespace(bytes[i])) i++;
  return bytes[i] === 0x7b || bytes[i] === 0x5b ? 'json' : 'string';
}

function compileFailure(what: string, error: unknown): RecordDecodeError {
  return new RecordDecodeError(`${what} does not compile: ${(error as Error).message}`, 'decode', {
    cause: error,
  });
}

/** Parses the ESM's schema id: Confluent ids as numbers, Glue version ids as strings. */
function esmSchemaId(metadata: unknown): number | string | undefined {
  const id = (metadata as { schemaId?: unknown } | null)?.schemaId;
  if (typeof id === 'number') return id;
  if (typeof id !== 'string' || id === '') return undefined;
  return /^\d{1,9}$/.test(id) ? Number(id) : id;
}

/** Creates a decoder for one route. No I/O until the first framed payload. */
export function createPayloadDecoder(
  config: FormatConfig,
  dependencies: PayloadDecoderDependencies = {},
): PayloadDecoder {
  const cacheOptions = {
    capacity: dependencies.cacheSize ?? 1000,
    cacheFailure: (error: unknown) => error instanceof RecordDecodeError,
  };
  let registry = dependencies.registry;
  let glue = dependencies.glue;

  const confluentSchemas = new CachedLoader<number, CompiledSchema>(async (id) => {
    if (!registry) {
      if (!config.registry) {
        throw new RecordDecodeError(
          `schema id ${id}: the payload is Confluent-framed but no schema registry is configured (format.registry)`,
          'decode',
        );
      }
      registry = createSchemaRegistryClient({ ...config.registry, fetch: dependencies.fetch });
    }
    const root = await registry.getSchemaById(id);
    const references = await resolveReferences(registry, root.references);
    try {
      return compileSchema(root.schemaType, root.schema, references);
    } catch (error) {
      throw compileFailure(`schema id ${id} (${root.schemaType})`, error);
    }
  }, cacheOptions);

  const glueSchemas = new CachedLoader<string, CompiledSchema>(async (versionId) => {
    glue ??= createGlueSchemaSource({ ...config.glue, client: dependencies.glueClient });
    const version = await glue.getSchemaVersion(versionId);
    try {
      return compileSchema(version.dataFormat, version.definition);
    } catch (error) {
      throw compileFailure(`Glue schema version ${versionId} (${version.dataFormat})`, error);
    }
  }, cacheOptions);

  function framed(
    schema: CompiledSchema,
    payload: Uint8Array,
    framing: Framing,
    schemaId: number | string,
    what: string,
  ): DecodedPayload {
    const { value, writerSchema } = schema.decode(payload, framing, what);
    return { value, schemaId, format: FORMAT_OF[schema.type], writerSchema };
  }

  async function decodeAs(format: PayloadFormat, bytes: Uint8Array, what: string): Promise<DecodedPayload> {
    switch (format) {
      case 'json':
        return { value: parseJsonBytes(bytes, what), format: 'json' };
      case 'string':
        try {
          return { value: utf8.decode(bytes), format: 'string' };
        } catch {
          throw new RecordDecodeError(`${what} is not valid UTF-8`, 'decode');
        }
      case 'confluent': {
        const { schemaId, payload } = readConfluentFrame(bytes, what);
        return framed(await confluentSchemas.get(schemaId), payload, 'confluent', schemaId, what);
      }
      case 'glue': {
        const { schemaVersionId, payload } = readGlueFrame(bytes, what);
        return framed(await glueSchemas.get(schemaVersionId), payload, 'glue', schemaVersionId, what);
      }
      case 'auto':
        return decodeAs(detectFormat(bytes), bytes, what);
    }
  }

  return {
    decodesKeys: config.key !== undefined,
    async decode(bytes, context) {
      const what = context.isKey ? 'key' : 'value';
      const metadata = context.isKey ? context.record.keySchemaMetadata : context.record.valueSchemaMetadata;
      if (metadata !== undefined && metadata !== null) {
        // Provisioned-mode ESM with a schema registry config already decoded the payload to JSON.
        let value: unknown;
        try {
          value = parseJsonBytes(bytes, what);
        } catch (error) {
          throw new RecordDecodeError(
            `${(error as Error).message} (the ESM reported ${what}SchemaMetadata; its EventRecordFormat must be JSON — SOURCE strips the schema id floe needs)`,
            'decode',
          );
        }
        return { value, schemaId: esmSchemaId(metadata), format: 'esm-decoded' };
      }
      const format = context.isKey ? config.key : config.value;
      if (format === undefined) throw new ValidationError('no key format is configured (format.key)');
      return decodeAs(format, bytes, what);
    },
  };
}
