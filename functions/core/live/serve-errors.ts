/**
 * The errors `floe serve` answers with, in the REST spec's ErrorModel (`{"error":{message,type,code}}`).
 *
 * - 503 + `Retry-After` for what a retry can help with: a retryable LakeError, and a Kafka client that
 *   cannot reach or lost its broker (kafka/ throws those as the client's own errors and says which they
 *   are: kafka/transient-failure.ts).
 * - 500 for the rest, with a fixed message: the detail goes to the server's log only, since error texts
 *   from filesystems and clients carry absolute paths, hosts and object keys.
 * Every message that does go out passes through `redactPaths`.
 */
import { LakeError, NoSuchTableError, ValidationError } from '../errors.js';
import { isTransientKafkaFailure } from '../kafka/transient-failure.js';
import { redact } from '../redact.js';
import { type RestAnswer, restError } from './rest-routes.js';

/** Seconds a client is asked to wait before retrying a 503. */
export const RETRY_AFTER_SECONDS = 5;

/** Kafka could not be reached, or stopped answering mid-read: retrying later may help. */
export class KafkaUnavailableError extends LakeError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: true });
    this.name = 'KafkaUnavailableError';
  }
}

/**
 * What a failure of a Kafka read becomes: LakeErrors as they are, transient client failures as
 * KafkaUnavailableError, anything else as it is. Never throws.
 */
export function asKafkaFailure(error: unknown, what: string): unknown {
  if (error instanceof LakeError || !isTransientKafkaFailure(error)) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new KafkaUnavailableError(`${what}: Kafka did not answer (${reason}); retrying later may help`, {
    cause: error,
  });
}

/** `file://` URLs and absolute POSIX or Windows paths. */
const ABSOLUTE_PATH = /(?:file:\/\/)?(?<![\w.~-])(?:\/(?:[^\s'"`()<>,;:]+\/?)+|[A-Za-z]:\\[^\s'"`()<>,;:]*)/g;

/** `text` with absolute paths replaced by `<path>` and secrets masked. Never throws. */
export function redactPaths(text: string): string {
  return redact(text).replace(ABSOLUTE_PATH, '<path>');
}

const answer = (
  code: number,
  type: string,
  message: string,
  headers?: Record<string, string>,
): RestAnswer => ({
  status: code,
  body: JSON.stringify(restError(code, type, message)),
  headers,
});

/**
 * The answer to a failed request. Details of a 500 go to `log` only.
 * Never throws.
 */
export function failureAnswer(error: unknown, log?: (error: unknown) => void): RestAnswer {
  if (error instanceof NoSuchTableError)
    return answer(404, 'NoSuchTableException', redactPaths(error.message));
  if (error instanceof ValidationError) return answer(400, 'BadRequestException', redactPaths(error.message));
  const transient = error instanceof LakeError ? error.retryable : isTransientKafkaFailure(error);
  if (transient) {
    const message = error instanceof Error ? error.message : String(error);
    const said = /retry/i.test(message) ? message : `${message} (retrying may help)`;
    return answer(503, 'ServiceUnavailableException', redactPaths(said), {
      'retry-after': String(RETRY_AFTER_SECONDS),
    });
  }
  log?.(error);
  const name = error instanceof Error ? error.name : 'Error';
  return answer(
    500,
    'InternalServerError',
    `floe serve could not answer (${redactPaths(name)}); the server's log has the details`,
  );
}
