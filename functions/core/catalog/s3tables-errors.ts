/**
 * S3 Tables' control-plane errors in the lake's terms, on the one AWS classifier (io/aws-errors.ts).
 * The swap of the pointer has its own mapping (s3tables-pointer.ts): there a failure may mean "landed".
 */
import { LakeError, NoSuchTableError, TransientIOError } from '../errors.js';
import { classifyAwsError } from '../io/aws-errors.js';

/**
 * Maps a failure of a call that changes no table metadata (get, list, create a namespace or a table,
 * drop) to the lake's errors: not found → NoSuchTableError, throttling/5xx/network → TransientIOError,
 * anything else (access denied, a bad request, an operation the endpoint does not implement) → a
 * non-retryable LakeError. `what` says what was being done. LakeErrors pass through.
 */
export function mapS3TablesError(error: unknown, what: string): LakeError {
  if (error instanceof LakeError) return error;
  const aws = classifyAwsError(error);
  if (aws.kind === 'not-found') return new NoSuchTableError(`${what}: not found`);
  if (aws.retryable) return new TransientIOError(`${what} failed: ${aws.detail}`, { cause: error });
  return new LakeError(`${what} failed: ${aws.detail}`, { cause: error });
}

/** Whether S3 Tables answered "no such table / namespace" (a real 404, not an unknown route). */
export function isS3TablesNotFound(error: unknown): boolean {
  return classifyAwsError(error).kind === 'not-found';
}

/** Whether S3 Tables answered that the thing exists already, or the version token moved (409). */
export function isS3TablesConflict(error: unknown): boolean {
  return classifyAwsError(error).kind === 'conflict';
}
