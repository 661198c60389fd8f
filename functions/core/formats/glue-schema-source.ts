/**
 * Schema versions from the AWS Glue Schema Registry (the adapter; the only AWS SDK use in formats).
 * A version id is a UUID that never changes meaning, so definitions are cached in a bounded LRU and
 * concurrent lookups share one GetSchemaVersion call.
 * - EntityNotFoundException / InvalidInputException → RecordDecodeError (the record is dead-lettered);
 * - throttling, 5xx, network, timeouts → TransientIOError (the batch fails and is retried);
 * - anything else (AccessDenied, a bad region, missing credentials) → a non-retryable LakeError: the batch
 *   fails, and asking again cannot help until the configuration changes.
 * The SDK is imported on first use, so routes without Glue do not pay for loading it.
 */
import type { GetSchemaVersionCommand, GetSchemaVersionCommandOutput } from '@aws-sdk/client-glue';
import { LakeError, RecordDecodeError, TransientIOError } from '../errors.js';
import { classifyAwsError } from '../io/aws-errors.js';
import type { GlueConfig } from './format-config.js';
import { CachedLoader } from './lru-cache.js';
import type { RegistrySchemaType } from './schema-registry-client.js';

export interface GlueSchemaVersion {
  dataFormat: RegistrySchemaType;
  definition: string;
  schemaArn?: string;
}

export interface GlueSchemaSource {
  /**
   * @throws RecordDecodeError for an unknown version; TransientIOError when Glue cannot be asked now;
   *   LakeError (not retryable) when Glue refuses (access denied)
   */
  getSchemaVersion(schemaVersionId: string): Promise<GlueSchemaVersion>;
}

/** The part of GlueClient this adapter uses (tests pass a stub). */
export interface GlueClientLike {
  send(
    command: GetSchemaVersionCommand,
    options?: { abortSignal?: AbortSignal },
  ): Promise<GetSchemaVersionCommandOutput>;
}

export interface GlueSchemaSourceOptions extends GlueConfig {
  client?: GlueClientLike;
  /** @default 10000 */
  timeoutMs?: number;
  /** @default 1000 */
  cacheSize?: number;
}

const FORMATS: readonly RegistrySchemaType[] = ['AVRO', 'JSON', 'PROTOBUF'];
const PERMANENT = new Set(['EntityNotFoundException', 'InvalidInputException']);

async function createClient(region: string | undefined): Promise<GlueClientLike> {
  const { GlueClient } = await import('@aws-sdk/client-glue');
  const client = new GlueClient(region ? { region } : {});
  return { send: (command, options) => client.send(command, options) };
}

/** The registry name inside `arn:aws:glue:<region>:<account>:schema/<registry>/<schema>`. */
export function registryOfSchemaArn(arn: string): string | undefined {
  return /:schema\/([^/]+)\//.exec(arn)?.[1];
}

/** Creates a caching source; the Glue client (and the SDK) is created on the first lookup. */
export function createGlueSchemaSource(options: GlueSchemaSourceOptions = {}): GlueSchemaSource {
  let client: Promise<GlueClientLike> | undefined = options.client
    ? Promise.resolve(options.client)
    : undefined;
  const timeoutMs = options.timeoutMs ?? 10_000;

  async function load(schemaVersionId: string): Promise<GlueSchemaVersion> {
    const { GetSchemaVersionCommand } = await import('@aws-sdk/client-glue');
    client ??= createClient(options.region);
    let output: GetSchemaVersionCommandOutput;
    try {
      output = await (await client).send(new GetSchemaVersionCommand({ SchemaVersionId: schemaVersionId }), {
        abortSignal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      // Redacted, the error too (kept as the cause): the SDK's message can quote what the service answered.
      const aws = classifyAwsError(error);
      const message = `AWS Glue GetSchemaVersion(${schemaVersionId}) failed: ${aws.detail}`;
      if (PERMANENT.has(aws.name)) {
        throw new RecordDecodeError(
          `unknown Glue schema version ${schemaVersionId} (${aws.name})`,
          'decode',
          { cause: error },
        );
      }
      if (aws.retryable) throw new TransientIOError(message, { cause: error });
      throw new LakeError(`${message} (retrying will not help until Glue's access or settings change)`, {
        cause: error,
      });
    }
    const dataFormat = output.DataFormat as RegistrySchemaType | undefined;
    if (!dataFormat || !FORMATS.includes(dataFormat) || typeof output.SchemaDefinition !== 'string') {
      throw new LakeError(
        `AWS Glue GetSchemaVersion(${schemaVersionId}) answered without a known DataFormat and SchemaDefinition`,
      );
    }
    if (options.registryName !== undefined && output.SchemaArn !== undefined) {
      const registry = registryOfSchemaArn(output.SchemaArn);
      if (registry !== options.registryName) {
        throw new RecordDecodeError(
          `Glue schema version ${schemaVersionId} belongs to registry '${registry}', not the configured '${options.registryName}'`,
          'decode',
        );
      }
    }
    return { dataFormat, definition: output.SchemaDefinition, schemaArn: output.SchemaArn };
  }

  const cache = new CachedLoader(load, {
    capacity: options.cacheSize ?? 1000,
    cacheFailure: (error) => error instanceof RecordDecodeError,
  });
  return { getSchemaVersion: (id) => cache.get(id) };
}
