/**
 * The one classifier of AWS SDK errors (S3, S3 Tables, DynamoDB, Glue): what kind of failure it was and
 * whether sending the same request again can help. Every adapter maps the kind to the lake's errors in
 * its own words (the operation, the bucket and key, the table); none reads `$metadata` or names itself.
 *
 * Kinds, checked in this order:
 * - `unsupported`: the endpoint does not implement the operation (501, `NotImplemented`, or a 404/405
 *   whose body is no answer of the service at all — moto's page for an unknown route);
 * - `throttled`: 429 or a throttling name; `network`: no HTTP answer (errno codes, timeouts, aborts) or a
 *   request timeout; `server`: 5xx or a fault the SDK marks retryable — these three are `retryable`;
 * - `not-found`: 404 or a not-found name; `conflict`: 409, 412 or a lost condition;
 * - `client`: everything else (403, 400, bad configuration, missing credentials): retrying will not help.
 */
import { redact, redactError } from '../redact.js';

export type AwsErrorKind =
  | 'not-found'
  | 'conflict'
  | 'throttled'
  | 'server'
  | 'network'
  | 'unsupported'
  | 'client';

export interface AwsErrorClass {
  kind: AwsErrorKind;
  /** The service's error name (`NoSuchKey`, `ConflictException`), its `Code`, or the errno code. */
  name: string;
  /** The HTTP status, when the request got an answer. */
  status?: number;
  /** The error's message, redacted (services quote signed URLs and headers back). */
  message: string;
  /** How many attempts the SDK's retry loop made (1 = no retry). */
  attempts: number;
  /** Whether the same request may succeed later: throttled, server and network failures. */
  retryable: boolean;
  /**
   * `name (HTTP status): message`, for the adapters' own messages; for an answer the SDK could not read,
   * `HTTP status with a body that is not the service's answer (parser message)`.
   */
  detail: string;
}

const THROTTLED_NAMES = new Set([
  'BandwidthLimitExceeded',
  'LimitExceededException',
  'PriorRequestNotComplete',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
  'ThrottledException',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'TransactionInProgressException',
]);

/** Timeouts reported as errors of their own, with or without an HTTP answer. */
const TIMEOUT_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException', 'AbortError']);

/** Socket-level failures (no HTTP answer at all) that a retry may get past. */
export const NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPROTO',
  'ERR_HTTP2_STREAM_ERROR',
]);

const SERVER_NAMES = new Set([
  'InternalError',
  'InternalFailure',
  'InternalServerError',
  'InternalServerErrorException',
  'InternalServerException',
  'InternalServiceException',
  'ServiceUnavailable',
  'ServiceUnavailableException',
]);

const NOT_FOUND_NAMES = new Set([
  'NoSuchKey',
  'NoSuchBucket',
  'NotFound',
  'NotFoundException',
  'ResourceNotFoundException',
  'EntityNotFoundException',
  'NoSuchEntity',
  'NoSuchEntityException',
]);

const CONFLICT_NAMES = new Set([
  'ConflictException',
  'ConditionalCheckFailedException',
  'TransactionConflictException',
  'PreconditionFailed',
  'ConditionalRequestConflict',
  'AlreadyExistsException',
]);

const UNSUPPORTED_NAMES = new Set([
  'NotImplemented',
  'NotImplementedException',
  'UnknownOperationException',
  'InvalidAction',
]);

/**
 * Classifies an SDK error (or anything thrown by a send): `$metadata.httpStatusCode`, `name`, `Code`,
 * `$retryable` and errno codes on the error or its `cause`. The error itself is redacted in place
 * (adapters keep it as their error's `cause`, and loggers print causes). Never throws.
 */
export function classifyAwsError(error: unknown): AwsErrorClass {
  redactError(error);
  const status = httpStatusOf(error);
  const errno = errnoOf(error);
  const name = nameOf(error, errno);
  const kind = kindOf(error, name, status, errno);
  const message = messageOf(error);
  const attempts = read(read(error, '$metadata'), 'attempts');
  const detail =
    status !== undefined && isUnparsedAnswer(error, name)
      ? `HTTP ${status} with a body that is not the service's answer (${message.split('\n')[0]})`
      : `${name}${status === undefined ? '' : ` (HTTP ${status})`}: ${message}`;
  return {
    kind,
    name,
    status,
    message,
    attempts: typeof attempts === 'number' ? attempts : 1,
    retryable: kind === 'throttled' || kind === 'server' || kind === 'network',
    detail,
  };
}

function kindOf(
  error: unknown,
  name: string,
  status: number | undefined,
  errno: string | undefined,
): AwsErrorKind {
  if (status === 501 || UNSUPPORTED_NAMES.has(name)) return 'unsupported';
  if ((status === 404 || status === 405) && isUnparsedAnswer(error, name)) return 'unsupported';
  const retryable = read(error, '$retryable');
  if (status === 429 || THROTTLED_NAMES.has(name) || read(retryable, 'throttling') === true)
    return 'throttled';
  if (TIMEOUT_NAMES.has(name)) return 'network';
  if (status === undefined && errno !== undefined && NETWORK_CODES.has(errno)) return 'network';
  if ((status !== undefined && status >= 500) || SERVER_NAMES.has(name)) return 'server';
  if (retryable !== undefined && retryable !== null) return status === undefined ? 'network' : 'server';
  if (status === 404 || NOT_FOUND_NAMES.has(name)) return 'not-found';
  if (status === 409 || status === 412 || CONFLICT_NAMES.has(name)) return 'conflict';
  return 'client';
}

/**
 * An answer the SDK could not read as the service's error (HTML from a proxy or an emulator's "no such
 * route" page): the SDK throws the parser's error with the response's `$metadata` attached.
 */
function isUnparsedAnswer(error: unknown, name: string): boolean {
  if (name === 'SyntaxError') return true;
  return error instanceof Error && error.message.includes('Deserialization error');
}

/** The HTTP status of an SDK error (`$metadata.httpStatusCode`), if it got an answer. */
function httpStatusOf(error: unknown): number | undefined {
  const status = read(read(error, '$metadata'), 'httpStatusCode');
  return typeof status === 'number' ? status : undefined;
}

/** The errno code (`ECONNRESET`) on the error or on its cause: the SDK wraps socket errors. */
function errnoOf(error: unknown): string | undefined {
  const code = read(error, 'code') ?? read(read(error, 'cause'), 'code');
  return typeof code === 'string' ? code : undefined;
}

/** The error's name, its `Code` when the SDK could not name it, else the errno code. */
function nameOf(error: unknown, errno: string | undefined): string {
  if (error instanceof Error && error.name !== 'Error') return error.name;
  const code = read(error, 'Code');
  if (typeof code === 'string') return code;
  if (errno !== undefined) return errno;
  if (error instanceof Error) return error.name;
  const name = read(error, 'name');
  return typeof name === 'string' ? name : typeof error;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return redact(error.message || '(no message)');
  const message = read(error, 'message');
  return redact(typeof message === 'string' ? message : String(error));
}

function read(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null) return undefined;
  return (value as Record<string, unknown>)[key];
}
