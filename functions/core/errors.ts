/**
 * One error base for the lake. `retryable` says whether trying the same thing again can help
 * (a Lambda handler maps retryable errors to a failed batch so the ESM redelivers it).
 */
export class LakeError extends Error {
  readonly retryable: boolean;
  constructor(message: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.retryable = options.retryable ?? false;
  }
}

/** The commit did not land (a requirement failed, 409, 412): refresh, re-apply, retry. */
export class CommitFailedError extends LakeError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: true });
  }
}

/** The commit may or may not have landed (5xx, timeout after send): reconcile before anything else. */
export class CommitStateUnknownError extends LakeError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: true });
  }
}

/** Input that can never be accepted as it is (bad arguments, bad schema, bad expression). */
export class ValidationError extends LakeError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: false });
  }
}

/**
 * A route (FLOE_TABLES, a `--routes` file, the construct's props) that cannot work as written: every
 * problem found is listed, each with its path (`routes[0].partitionBy: expected a string, got 5`).
 * Not retryable: the configuration must change. A ValidationError, so callers that catch those still do.
 */
export class RouteConfigError extends ValidationError {}

/** A record's schema cannot be reconciled with the table's. */
export class SchemaEvolutionError extends LakeError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: false });
  }
}

/** A record could not be decoded or mapped to a row; it goes to the DLQ, the batch goes on. */
export class RecordDecodeError extends LakeError {
  readonly stage: 'decode' | 'map' | 'schema' | 'write';
  constructor(
    message: string,
    stage: 'decode' | 'map' | 'schema' | 'write' = 'map',
    options: { cause?: unknown } = {},
  ) {
    super(message, { ...options, retryable: false });
    this.stage = stage;
  }
}

export class TableAlreadyExistsError extends LakeError {
  constructor(message: string) {
    super(message, { retryable: false });
  }
}

/** A storage write that must not replace an existing object found one there. */
export class AlreadyExistsError extends LakeError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: false });
  }
}

/**
 * What was looked up is not there: an object in storage (the FileIO's reads), or, as its subclass
 * NoSuchTableError, a table. Not retryable: asking again finds nothing more.
 */
export class NotFoundError extends LakeError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: false });
  }
}

/**
 * The catalog has no such table. A NotFoundError, so code that treats any absent thing alike may
 * catch that; code that creates a missing table catches this one only (a missing file is not a
 * missing table).
 */
export class NoSuchTableError extends NotFoundError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options);
  }
}

/** Storage or network trouble that may pass (throttling, 5xx, resets). */
export class TransientIOError extends LakeError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: true });
  }
}

/** Message of an unknown thrown value, for logs and DLQ reasons. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

/** The commit lock could not be acquired in time; the batch can be retried. */
export class LockTimeoutError extends LakeError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: true });
  }
}
