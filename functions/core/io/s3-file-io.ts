import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { AlreadyExistsError, NotFoundError, ValidationError } from '../errors.js';
import type { FileIO } from './file-io.js';
import { formatS3Location, parseS3Location } from './location.js';
import { getAttempts, isConditionalWriteConflict, isObjectNotFound, mapS3Error } from './s3-errors.js';

export interface S3FileIOOptions {
  /** A ready client (shared across FileIOs, or with custom middleware); the other options are then ignored. */
  client?: S3Client;
  /** @default the SDK's chain (AWS_REGION, profile, ...) */
  region?: string;
  /** @default AWS_ENDPOINT_URL_S3, then AWS_ENDPOINT_URL (read natively by the SDK), else AWS's endpoint */
  endpoint?: string;
  /** @default true when an endpoint is configured (moto, LocalStack, MinIO), false otherwise */
  forcePathStyle?: boolean;
  /** @default the SDK's default credential chain */
  credentials?: S3ClientConfig['credentials'];
}

/**
 * FileIO on Amazon S3 (and S3-compatible stores), locations `s3://bucket/key` or `s3a://bucket/key`.
 *
 * `writeIfAbsent` is a conditional PutObject (`If-None-Match: *`), the primitive a pointer swap can rest on.
 * `list(prefix)` treats the prefix as a directory (`s3://b/t` lists keys under `t/`, never `t2/...`), the
 * same as LocalFileIO, and returns locations with the prefix's scheme.
 * Errors: NotFoundError for a missing object, TransientIOError (retryable) for throttling, 5xx and network
 * failures after the SDK's own retries, a non-retryable LakeError for the rest; the SDK error is the cause.
 */
export class S3FileIO implements FileIO {
  readonly client: S3Client;

  constructor(options: S3FileIOOptions = {}) {
    this.client = options.client ?? createS3Client(options);
  }

  /** @throws NotFoundError when absent; TransientIOError; LakeError; ValidationError for a non-S3 location */
  async read(location: string): Promise<Uint8Array> {
    const { bucket, key } = parseS3Location(location);
    const operation = { name: 'GetObject', bucket, key };
    try {
      const response = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      if (!response.Body) return new Uint8Array(0);
      return await response.Body.transformToByteArray();
    } catch (error) {
      throw mapS3Error(error, operation);
    }
  }

  /**
   * Reads exactly `length` bytes at `offset` with a Range request.
   * @throws NotFoundError when absent; ValidationError for a bad range or one past the end of the object
   */
  async readRange(location: string, offset: number, length: number): Promise<Uint8Array> {
    const { bucket, key } = parseS3Location(location);
    if (!Number.isSafeInteger(offset) || offset < 0 || !Number.isSafeInteger(length) || length < 0) {
      throw new ValidationError(`bad range for ${location}: offset ${offset}, length ${length}`);
    }
    if (length === 0) {
      // HTTP cannot express an empty range; still honour "NotFoundError when absent" and the bounds.
      const stat = await this.stat(location);
      if (!stat) throw new NotFoundError(`${location}: no such object`);
      if (offset > stat.size) {
        throw new ValidationError(`offset ${offset} is past the end of ${location} (${stat.size} bytes)`);
      }
      return new Uint8Array(0);
    }
    const operation = { name: 'GetObject', bucket, key };
    let bytes: Uint8Array;
    try {
      const response = await this.client.send(
        new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=${offset}-${offset + length - 1}` }),
      );
      bytes = response.Body ? await response.Body.transformToByteArray() : new Uint8Array(0);
    } catch (error) {
      throw mapS3Error(error, operation);
    }
    // S3 answers a range that runs past the end with the bytes it has; a short read would misparse.
    if (bytes.length !== length) {
      throw new ValidationError(
        `range [${offset}, ${offset + length}) is past the end of ${location} (got ${bytes.length} bytes)`,
      );
    }
    return bytes;
  }

  /** Replaces the object. @throws TransientIOError; LakeError */
  async write(location: string, data: Uint8Array): Promise<void> {
    const { bucket, key } = parseS3Location(location);
    try {
      await this.client.send(
        new PutObjectCommand({ Bucket: bucket, Key: key, Body: data, ContentLength: data.byteLength }),
      );
    } catch (error) {
      throw mapS3Error(error, { name: 'PutObject', bucket, key });
    }
  }

  /**
   * Creates the object only if none exists (`If-None-Match: *`); of concurrent callers exactly one wins.
   * A TransientIOError here means the write MAY have landed: callers swapping a pointer must treat it as
   * an unknown outcome, not as a failure.
   * @throws AlreadyExistsError when an object exists (412) or a racing conditional write holds the key (409)
   */
  async writeIfAbsent(location: string, data: Uint8Array): Promise<void> {
    const { bucket, key } = parseS3Location(location);
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: data,
          ContentLength: data.byteLength,
          IfNoneMatch: '*',
        }),
      );
    } catch (error) {
      if (!isConditionalWriteConflict(error)) throw mapS3Error(error, { name: 'PutObject', bucket, key });
      // After an SDK retry, a 412 may be our own first attempt that landed before its response was lost.
      // The object then holds exactly our bytes: that is our write, not someone else's.
      if (getAttempts(error) > 1 && (await this.holdsExactly(location, data))) return;
      throw new AlreadyExistsError(`${location} already exists (conditional PutObject refused)`, {
        cause: error,
      });
    }
  }

  /**
   * Size and modification time, or undefined when absent. HeadObject has no body, so a missing bucket
   * also reads as absent here.
   * @throws TransientIOError; LakeError (403, ...)
   */
  async stat(location: string): Promise<{ size: number; lastModifiedMs: number } | undefined> {
    const { bucket, key } = parseS3Location(location);
    try {
      const response = await this.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      return { size: response.ContentLength ?? 0, lastModifiedMs: response.LastModified?.getTime() ?? 0 };
    } catch (error) {
      if (isObjectNotFound(error)) return undefined;
      throw mapS3Error(error, { name: 'HeadObject', bucket, key });
    }
  }

  /** @throws TransientIOError; LakeError */
  async exists(location: string): Promise<boolean> {
    return (await this.stat(location)) !== undefined;
  }

  /** Deletes the object; an absent one is fine (S3 answers 204 either way). @throws TransientIOError; LakeError */
  async delete(location: string): Promise<void> {
    const { bucket, key } = parseS3Location(location);
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    } catch (error) {
      throw mapS3Error(error, { name: 'DeleteObject', bucket, key });
    }
  }

  /**
   * Every object under the directory `prefix`, in S3's key order, following continuation tokens.
   * @throws TransientIOError; LakeError (a missing bucket, 403, ...)
   */
  async list(prefix: string): Promise<{ location: string; size: number; lastModifiedMs: number }[]> {
    const { scheme, bucket, key } = parseS3Location(prefix);
    const keyPrefix = key === '' || key.endsWith('/') ? key : `${key}/`;
    const results: { location: string; size: number; lastModifiedMs: number }[] = [];
    let continuationToken: string | undefined;
    do {
      let page: ListObjectsV2CommandOutput;
      try {
        page = await this.client.send(
          new ListObjectsV2Command({
            Bucket: bucket,
            Prefix: keyPrefix,
            ContinuationToken: continuationToken,
          }),
        );
      } catch (error) {
        throw mapS3Error(error, { name: 'ListObjectsV2', bucket, key: keyPrefix });
      }
      for (const object of page.Contents ?? []) {
        if (object.Key === undefined) continue;
        results.push({
          location: formatS3Location({ scheme, bucket, key: object.Key }),
          size: object.Size ?? 0,
          lastModifiedMs: object.LastModified?.getTime() ?? 0,
        });
      }
      continuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (continuationToken !== undefined);
    return results;
  }

  /** Whether the object at `location` holds exactly `data` (false when absent or unreadable). */
  private async holdsExactly(location: string, data: Uint8Array): Promise<boolean> {
    try {
      return Buffer.from(await this.read(location)).equals(data);
    } catch {
      return false;
    }
  }
}

/**
 * Builds a client. The SDK itself reads AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL (and `endpoint_url` in the
 * profile); we only look at the variables to default `forcePathStyle`, because moto and LocalStack serve
 * buckets on a path, not on `bucket.host` subdomains.
 */
function createS3Client(options: S3FileIOOptions): S3Client {
  const endpoint = options.endpoint ?? readConfiguredEndpoint();
  const config: S3ClientConfig = { forcePathStyle: options.forcePathStyle ?? endpoint !== undefined };
  if (options.region !== undefined) config.region = options.region;
  if (options.endpoint !== undefined) config.endpoint = options.endpoint;
  if (options.credentials !== undefined) config.credentials = options.credentials;
  return new S3Client(config);
}

/** The endpoint the SDK will pick up from the environment, mirroring its precedence. */
function readConfiguredEndpoint(): string | undefined {
  if (process.env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS?.toLowerCase() === 'true') return undefined;
  return process.env.AWS_ENDPOINT_URL_S3 || process.env.AWS_ENDPOINT_URL || undefined;
}
