/**
 * The S3 Tables pointer: where a table's current metadata.json is, and the conditional swap that moves it.
 *
 * COMMIT POINT: `UpdateTableMetadataLocation(versionToken, metadataLocation)`, conditional on the version
 * token read with the base metadata. Before it succeeds, readers see metadata N; after, N+1. The new
 * metadata.json is a fresh object (`<NNNNN>-<uuid>.metadata.json`, written if absent, never overwritten)
 * and is invisible until the pointer names it.
 *   - did not land → CommitFailedError: a failed requirement; ConflictException (409, the token moved) or
 *     throttling (429) on the first attempt; any failure before the swap request (reading the base,
 *     writing the new file).
 *   - may have landed → CommitStateUnknownError: 5xx, timeouts and network errors on the swap, and a
 *     409 after the SDK retried the swap (the retried request may have found its own earlier success).
 *     Before reporting "unknown", the pointer is read once: if it names our new file, the commit landed.
 */
import {
  GetTableMetadataLocationCommand,
  type S3TablesClient,
  UpdateTableMetadataLocationCommand,
} from '@aws-sdk/client-s3tables';
import { CommitFailedError, CommitStateUnknownError, LakeError, NoSuchTableError } from '../errors.js';
import { classifyAwsError } from '../io/aws-errors.js';
import type { FileIO } from '../io/file-io.js';
import { serializeTableMetadata } from '../spec/metadata.js';
import type { TableIdentifier, TableMetadata } from '../spec/types.js';
import { formatIdentifier } from './catalog.js';
import { isS3TablesNotFound, mapS3TablesError } from './s3tables-errors.js';
import { singleNamespace } from './s3tables-names.js';

const encoder = new TextEncoder();

/** The table bucket a pointer lives in, and how its swaps are made. */
export interface S3TablesBucket {
  client: S3TablesClient;
  tableBucketArn: string;
  /** Storage for the metadata files the pointer names. */
  io: FileIO;
  /** A swap that has not answered by then is abandoned; its outcome is unknown. */
  commitTimeoutMs: number;
}

/** Where a table's pointer is now, with the token that conditions the next swap. */
export interface Pointer {
  versionToken: string;
  warehouseLocation: string;
  metadataLocation?: string;
}

/** The new metadata file could not be written, so the pointer was never asked to move: did not land. */
export class MetadataWriteFailedError extends CommitFailedError {}

/** S3 Tables throttled the one swap request sent: it did not land, and a later attempt may. */
export class SwapThrottledError extends CommitFailedError {}

/**
 * The pointer, or undefined when the table does not exist.
 * @throws TransientIOError; LakeError (see mapS3TablesError)
 */
export async function readPointer(bucket: S3TablesBucket, id: TableIdentifier): Promise<Pointer | undefined> {
  const namespace = singleNamespace(id.namespace);
  try {
    const out = await bucket.client.send(
      new GetTableMetadataLocationCommand({
        tableBucketARN: bucket.tableBucketArn,
        namespace,
        name: id.name,
      }),
    );
    if (!out.versionToken || !out.warehouseLocation) {
      throw new LakeError(
        `${formatIdentifier(id)}: GetTableMetadataLocation returned no version token or warehouse`,
      );
    }
    return {
      versionToken: out.versionToken,
      warehouseLocation: out.warehouseLocation.replace(/\/+$/, ''),
      metadataLocation: out.metadataLocation ?? undefined,
    };
  } catch (error) {
    if (isS3TablesNotFound(error)) return undefined;
    throw mapS3TablesError(error, `reading the metadata location of ${formatIdentifier(id)}`);
  }
}

/**
 * Writes `metadata` as a new object at `location`, then moves the pointer there: THE COMMIT POINT.
 * Returns the pointer's new version token when S3 Tables reported it.
 * @throws MetadataWriteFailedError, SwapThrottledError, CommitFailedError (did not land);
 *   CommitStateUnknownError;
 *   NoSuchTableError; LakeError when S3 Tables refused the request
 */
export async function swapPointer(
  bucket: S3TablesBucket,
  id: TableIdentifier,
  pointer: Pointer,
  location: string,
  metadata: TableMetadata,
): Promise<string | undefined> {
  const what = formatIdentifier(id);
  try {
    await bucket.io.writeIfAbsent(location, encoder.encode(serializeTableMetadata(metadata)));
  } catch (error) {
    // The pointer has not moved: whatever happened to the file, the commit did not land.
    const { detail } = classifyAwsError(error);
    throw new MetadataWriteFailedError(`${what}: writing ${location} failed, pointer not moved: ${detail}`, {
      cause: error,
    });
  }
  try {
    // ---- COMMIT POINT ----
    const out = await bucket.client.send(
      new UpdateTableMetadataLocationCommand({
        tableBucketARN: bucket.tableBucketArn,
        namespace: id.namespace[0],
        name: id.name,
        versionToken: pointer.versionToken,
        metadataLocation: location,
      }),
      { abortSignal: AbortSignal.timeout(bucket.commitTimeoutMs) },
    );
    return out.versionToken ?? undefined;
  } catch (error) {
    const aws = classifyAwsError(error);
    // Only an answer to the one request sent proves it was refused; after SDK retries it may have landed.
    if (aws.attempts <= 1) {
      if (aws.kind === 'conflict') {
        throw new CommitFailedError(`${what}: the table changed since it was read (version token is stale)`, {
          cause: error,
        });
      }
      if (aws.kind === 'throttled') {
        throw new SwapThrottledError(
          `${what}: S3 Tables throttled the swap, pointer not moved: ${aws.detail}`,
          { cause: error },
        );
      }
      if (aws.status !== undefined && aws.status >= 400 && aws.status < 500) {
        if (aws.kind === 'not-found') throw new NoSuchTableError(`table ${what} no longer exists`);
        // Refused: nothing landed, and retrying will not help.
        throw new LakeError(`${what}: S3 Tables refused the metadata location ${location}: ${aws.detail}`, {
          cause: error,
        });
      }
    }
    await reconcileSwap(bucket, id, location, error);
    return undefined;
  }
}

/** After an unknown outcome: proven landed when the pointer names our new file, else still unknown. */
async function reconcileSwap(
  bucket: S3TablesBucket,
  id: TableIdentifier,
  location: string,
  cause: unknown,
): Promise<void> {
  let current: Pointer | undefined;
  try {
    current = await readPointer(bucket, id);
  } catch {
    // the check itself failed: the outcome stays unknown
  }
  if (current?.metadataLocation === location) return;
  throw new CommitStateUnknownError(
    `${formatIdentifier(id)}: the swap to ${location} may have landed: ${classifyAwsError(cause).detail}`,
    { cause },
  );
}
