/**
 * Errors of the Iceberg REST catalog: the spec's `IcebergErrorResponse` (`{ error: { message, type, code } }`)
 * read from a response, and the mapping of a status to floe's errors for each kind of call.
 * Commit statuses follow the OpenAPI's CommitTable responses (see `mapCommitStatus`).
 * A server's words are redacted before they go into a message (servers echo credentials back).
 */
import {
  CommitFailedError,
  CommitStateUnknownError,
  LakeError,
  NoSuchTableError,
  TableAlreadyExistsError,
  TransientIOError,
} from '../../errors.js';
import { redact } from '../../redact.js';

/** The spec's ErrorModel; `type` is the server's exception name (`CommitFailedException`, ...). */
export interface RestErrorModel {
  message: string;
  type: string;
  code: number;
}

/** A non-2xx answer that maps to no more specific error: carries the HTTP status and the server's words. */
export class RestCatalogError extends LakeError {
  readonly status: number;
  readonly type: string | undefined;
  constructor(
    message: string,
    status: number,
    type?: string,
    options: { cause?: unknown; retryable?: boolean } = {},
  ) {
    super(message, { cause: options.cause, retryable: options.retryable ?? false });
    this.status = status;
    this.type = type;
  }
}

/**
 * The request never reached the server (`sent: false`: refused connection, unknown host) or its fate is
 * unknown (`sent: true`: reset, timeout, a broken response).
 */
export class RestTransportError extends TransientIOError {
  readonly sent: boolean;
  constructor(message: string, sent: boolean, options: { cause?: unknown } = {}) {
    super(message, options);
    this.sent = sent;
  }
}

/**
 * Signing in failed: the token endpoint refused, redirected, answered no token, or did not answer
 * (`retryable`: a 429, 5xx, timeout or network failure). Never a RestTransportError, whose `sent` speaks
 * of the catalog request: a commit whose token could not be had was never sent, so it did not land
 * (unless it was a resend after an unknown outcome: commitTable then throws CommitStateUnknownError).
 */
export class RestAuthError extends LakeError {
  constructor(message: string, options: { cause?: unknown; retryable: boolean }) {
    super(message, options);
  }
}

/**
 * Reads an error body: the spec's `{ error: {...} }`, a bare ErrorModel (some servers), an OAuth2 error
 * (`{ error: "invalid_client", error_description }`) or plain text (proxies), redacted. Never throws.
 */
export function parseErrorBody(status: number, text: string): RestErrorModel {
  const model = readErrorBody(status, text);
  return { ...model, message: redact(model.message), type: redact(model.type) };
}

function readErrorBody(status: number, text: string): RestErrorModel {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // redacted before cutting, so a secret cut in half at the edge is still recognised
    return {
      message: redact(text).trim().slice(0, 500) || `HTTP ${status}`,
      type: 'UnknownError',
      code: status,
    };
  }
  if (typeof json === 'object' && json !== null) {
    const obj = json as Record<string, unknown>;
    const inner =
      typeof obj.error === 'object' && obj.error !== null ? (obj.error as Record<string, unknown>) : obj;
    if (typeof inner.message === 'string') {
      return {
        message: inner.message,
        type: typeof inner.type === 'string' ? inner.type : 'UnknownError',
        code: typeof inner.code === 'number' ? inner.code : status,
      };
    }
    if (typeof obj.error === 'string') {
      const description = typeof obj.error_description === 'string' ? `: ${obj.error_description}` : '';
      return { message: `${obj.error}${description}`, type: obj.error, code: status };
    }
  }
  return { message: redact(text).slice(0, 500), type: 'UnknownError', code: status };
}

function describeModel(what: string, status: number, model: RestErrorModel): string {
  // model is redacted already (parseErrorBody); `what` is floe's own words (a table may be named `token`)
  return `${what}: HTTP ${status} ${model.type}: ${model.message}`;
}

/**
 * A failed read or create (config, namespaces, load, create, list): 404 → NoSuchTableError (for tables),
 * 409 on create → TableAlreadyExistsError, 429/5xx → TransientIOError, other 4xx → RestCatalogError.
 */
export function mapStatus(
  what: string,
  status: number,
  model: RestErrorModel,
  kind: 'table' | 'create-table' | 'other',
): LakeError {
  const message = describeModel(what, status, model);
  if (status === 404 && kind === 'table') return new NoSuchTableError(message);
  if (status === 409 && kind === 'create-table') return new TableAlreadyExistsError(message);
  if (status === 429 || status >= 500)
    return new RestCatalogError(message, status, model.type, { retryable: true });
  return new RestCatalogError(message, status, model.type);
}

/**
 * A failed commit, per the OpenAPI's CommitTable responses:
 *   409 CommitFailedException ("one or more requirements failed") → CommitFailedError: did not land.
 *   500, 502, 504 ("the commit state is unknown") → CommitStateUnknownError.
 *   503 ServiceUnavailable ("request could have been partially processed") → CommitStateUnknownError too;
 *   any other 5xx ("a server-side problem") likewise, since none of them proves that nothing landed.
 *   404 → NoSuchTableError; other 4xx (400 for unknown updates or requirements, 401/403, 422) →
 *   RestCatalogError, not retryable: the server refused the request itself.
 * `uncertain`: an earlier try of this same commit may have landed, so a refusal now proves nothing
 * (a 409 may be our own earlier success seen from the other side) and everything but success is unknown.
 */
export function mapCommitStatus(
  what: string,
  status: number,
  model: RestErrorModel,
  uncertain: boolean,
): LakeError {
  const message = describeModel(what, status, model);
  if (uncertain) {
    return new CommitStateUnknownError(`${message} (after an earlier try whose outcome is unknown)`);
  }
  if (status === 409) return new CommitFailedError(message);
  if (status >= 500) return new CommitStateUnknownError(message);
  if (status === 404) return new NoSuchTableError(message);
  return new RestCatalogError(message, status, model.type);
}
