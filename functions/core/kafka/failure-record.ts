/**
 * The record an ESM on-failure destination receives for a batch it gave up on: metadata
 * (`requestContext.condition`, `KafkaBatchInfo` with the batch's offsets) and, for S3 destinations and
 * Kafka on-failure topics, the invocation `payload` — the ESM event itself (a Kafka topic receives one
 * record per message). Redriving a batch is ingesting that event again; the table's committed offsets
 * make it take effect once however often it is redriven.
 */
import { ValidationError } from '../errors.js';
import { parseEventJson } from '../records/event-json.js';

export interface FailureRecord {
  /** `RetryAttemptsExhausted`, `MaximumPayloadSizeExceeded`, `RecordAgeExceeded`, ... when given. */
  condition?: string;
  /** When the ESM gave up (ISO text), when given. */
  timestamp?: string;
  /** The ESM event of the failed invocation. */
  event: unknown;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * @param what names the source in messages (a file, an object, `topic-partition@offset`)
 * @throws ValidationError when the document is not an on-failure record carrying its event (an SNS or
 *   SQS destination gets metadata only: nothing to redrive from there — read the offsets it names instead)
 */
export function parseFailureRecord(document: unknown, what: string): FailureRecord {
  if (!isObject(document) || !isObject(document.KafkaBatchInfo) || !('requestContext' in document)) {
    throw new ValidationError(
      `${what} is not a Kafka event source mapping on-failure record (no requestContext / KafkaBatchInfo)`,
    );
  }
  let payload = document.payload;
  if (typeof payload === 'string') {
    try {
      payload = parseEventJson(payload);
    } catch {
      throw new ValidationError(`${what}: its payload is text that is not JSON`);
    }
  }
  if (!isObject(payload) || !isObject(payload.records)) {
    throw new ValidationError(
      `${what} carries no invocation payload (only S3 destinations and Kafka on-failure topics store the event; SNS/SQS records hold metadata only)`,
    );
  }
  const context = isObject(document.requestContext) ? document.requestContext : {};
  return {
    condition: typeof context.condition === 'string' ? context.condition : undefined,
    timestamp: typeof document.timestamp === 'string' ? document.timestamp : undefined,
    event: payload,
  };
}
