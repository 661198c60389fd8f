import { LakeError, NotFoundError, TransientIOError, ValidationError } from '../errors.js';
import { redact, redactError } from '../redact.js';

/** What an S3 call was doing, for error messages. */
export interface S3Operation {
  /** The S3 API, e.g. `GetObject`. */
  name: string;
  bucket: string;
  key: string;
}

/** Error names S3 (and S3-compatible stores) use for throttling or a passing server fault. */
const TRANSIENT_NAMES = new Set([
  'SlowDown',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'RequestTimeout',
  'RequestTimeoutException',
  'TimeoutError',
  'InternalError',
  'ServiceUnavailable',
]);

/** Socket-level failures (no HTTP response at all) that a retry may get past. */
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** HTTP status of an SDK error (`$metadata.httpStatusCode`), if it got a response. */
export function getHttpStatus(error: unknown): number | undefined {
  const metadata = readProperty(error, '$metadata');
  const status = readProperty(metadata, 'httpStatusCode');
  return typeof status === 'number' ? status : undefined;
}

/** How many attempts the SDK's retry loop made before this error (1 = no retry). */
export function getAttempts(error: unknown): number {
  const attempts = readProperty(readProperty(error, '$metadata'), 'attempts');
  return typeof attempts === 'number' ? attempts : 1;
}

/** The error's name (`NoSuchKey`, `PreconditionFailed`, ...) or its `Code` when the SDK could not name it. */
export function getErrorName(error: unknown): string {
  const code = readProperty(error, 'Code');
  if (error instanceof Error && error.name !== 'Error') return error.name;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.name : typeof error;
}

/** Whether an S3 object is absent (NoSuchKey, or a bare 404 from HeadObject), not its bucket. */
export function isObjectNotFound(error: unknown): boolean {
  const name = getErrorName(error);
  if (name === 'NoSuchKey' || name === 'NotFound') return true;
  return getHttpStatus(error) === 404 && name !== 'NoSuchBucket';
}

/** Whether a conditional write lost: 412 PreconditionFailed, or 409 ConditionalRequestConflict (a racing write). */
export function isConditionalWriteConflict(error: unknown): boolean {
  const name = getErrorName(error);
  if (name === 'PreconditionFailed' || name === 'ConditionalRequestConflict') return true;
  const status = getHttpStatus(error);
  return status === 412 || (status === 409 && name !== 'BucketAlreadyExists' && name !== 'OperationAborted');
}

/** Whether trying again may help: throttling, 5xx, or a network failure with no HTTP response. */
export function isTransientS3Error(error: unknown): boolean {
  const status = getHttpStatus(error);
  if (status !== undefined && (status === 429 || status >= 500)) return true;
  if (TRANSIENT_NAMES.has(getErrorName(error))) return true;
  if (status === undefined) {
    // The SDK wraps socket errors; the errno code sits on the error or on its cause.
    const code = readProperty(error, 'code') ?? readProperty(readProperty(error, 'cause'), 'code');
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
  }
  return false;
}

/**
 * Maps an SDK error to the lake's errors, keeping the SDK error as `cause`: missing object → NotFoundError,
 * 416 → ValidationError, throttling/5xx/network → TransientIOError, anything else (403, 400, a missing
 * bucket, ...) → a non-retryable LakeError naming the operation, bucket and key. LakeErrors pass through.
 */
export function mapS3Error(error: unknown, operation: S3Operation): LakeError {
  if (error instanceof LakeError) return error;
  redactError(error); // kept as the cause, and loggers print causes too
  const name = getErrorName(error);
  const status = getHttpStatus(error);
  const where = `S3 ${operation.name} on bucket '${operation.bucket}' key '${operation.key}'`;
  const detail = `${name}${status === undefined ? '' : ` (HTTP ${status})`}: ${messageOf(error)}`;
  if (name === 'NoSuchBucket') {
    return new LakeError(`${where} failed: the bucket does not exist: ${detail}`, {
      cause: error,
      retryable: false,
    });
  }
  if (isObjectNotFound(error)) {
    return new NotFoundError(`${where}: no such object: ${detail}`, { cause: error });
  }
  if (name === 'InvalidRange' || status === 416) {
    return new ValidationError(`${where}: range not satisfiable: ${detail}`, { cause: error });
  }
  if (isTransientS3Error(error)) {
    return new TransientIOError(`${where} failed (may succeed on retry): ${detail}`, { cause: error });
  }
  return new LakeError(`${where} failed: ${detail}`, { cause: error, retryable: false });
}

/** The SDK error's message, redacted: S3-compatible stores quote signed URLs and headers back. */
function messageOf(error: unknown): string {
  if (error instanceof Error) return redact(error.message || '(no message)');
  return redact(String(error));
}

function readProperty(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null) return undefined;
  return (value as Record<string, unknown>)[key];
}
