/**
 * S3's errors in the lake's terms, on the one AWS classifier (aws-errors.ts): what S3 adds is the
 * difference between a missing object and a missing bucket, conditional writes that lost, and ranges.
 */
import { LakeError, NotFoundError, TransientIOError, ValidationError } from '../errors.js';
import { classifyAwsError } from './aws-errors.js';

/** What an S3 call was doing, for error messages. */
export interface S3Operation {
  /** The S3 API, e.g. `GetObject`. */
  name: string;
  bucket: string;
  key: string;
}

/** How many attempts the SDK's retry loop made before this error (1 = no retry). */
export function getAttempts(error: unknown): number {
  return classifyAwsError(error).attempts;
}

/** Whether an S3 object is absent (NoSuchKey, or a bare 404 from HeadObject), not its bucket. */
export function isObjectNotFound(error: unknown): boolean {
  const { name, status } = classifyAwsError(error);
  if (name === 'NoSuchKey' || name === 'NotFound') return true;
  return status === 404 && name !== 'NoSuchBucket';
}

/** Whether a conditional write lost: 412 PreconditionFailed, or 409 ConditionalRequestConflict (a racing write). */
export function isConditionalWriteConflict(error: unknown): boolean {
  const { name, status } = classifyAwsError(error);
  if (name === 'PreconditionFailed' || name === 'ConditionalRequestConflict') return true;
  return status === 412 || (status === 409 && name !== 'BucketAlreadyExists' && name !== 'OperationAborted');
}

/**
 * Maps an SDK error to the lake's errors, keeping the SDK error as `cause`: missing object → NotFoundError,
 * 416 → ValidationError, throttling/5xx/network → TransientIOError, anything else (403, 400, a missing
 * bucket, ...) → a non-retryable LakeError naming the operation, bucket and key. LakeErrors pass through.
 */
export function mapS3Error(error: unknown, operation: S3Operation): LakeError {
  if (error instanceof LakeError) return error;
  const aws = classifyAwsError(error);
  const where = `S3 ${operation.name} on bucket '${operation.bucket}' key '${operation.key}'`;
  if (aws.name === 'NoSuchBucket') {
    return new LakeError(`${where} failed: the bucket does not exist: ${aws.detail}`, {
      cause: error,
      retryable: false,
    });
  }
  if (isObjectNotFound(error)) {
    return new NotFoundError(`${where}: no such object: ${aws.detail}`, { cause: error });
  }
  if (aws.name === 'InvalidRange' || aws.status === 416) {
    return new ValidationError(`${where}: range not satisfiable: ${aws.detail}`, { cause: error });
  }
  if (aws.retryable) {
    return new TransientIOError(`${where} failed (may succeed on retry): ${aws.detail}`, { cause: error });
  }
  return new LakeError(`${where} failed: ${aws.detail}`, { cause: error, retryable: false });
}
