/**
 * Which failures of the Kafka client mean "the brokers could not be reached or stopped answering" — a
 * retry later may help. The client's own error names live here, beside the client, so no other folder
 * needs to know them; socket codes are the ones every network client of floe's treats as transient.
 */
import { NETWORK_CODES } from '../io/aws-errors.js';

/** Errors of the Kafka client that mean "the brokers could not be reached or stopped answering". */
const TRANSIENT_NAMES = new Set([
  'KafkaJSNumberOfRetriesExceeded',
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSBrokerNotFound',
  'KafkaJSNoBrokerAvailableError',
  'KafkaJSMetadataNotLoaded',
  'KafkaJSTimeout',
  'KafkaJSLockTimeout',
]);

/** Whether `error` (or what caused it) says the brokers were unreachable or went away. Never throws. */
export function isTransientKafkaFailure(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && typeof current === 'object' && current !== null; depth++) {
    const e = current as {
      name?: unknown;
      code?: unknown;
      retriable?: unknown;
      cause?: unknown;
      originalError?: unknown;
    };
    if (e.retriable === true) return true;
    if (typeof e.name === 'string' && TRANSIENT_NAMES.has(e.name)) return true;
    if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) return true;
    current = e.cause ?? e.originalError;
  }
  return false;
}
