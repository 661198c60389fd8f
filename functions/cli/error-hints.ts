/**
 * What to do about a failure whose cause is the machine's AWS or network setup rather than the table.
 * The core reports such failures faithfully ("Region is missing") and, having no HTTP status, often as
 * transient; at the command line the useful answer is which setting to fix. Which settings depends on
 * what failed: a socket error talking to Kafka is about `--bootstrap-servers`, never the catalog's
 * `--uri`. Kinds are told apart by error names, not classes, so `floe --help` loads no core module.
 */

/** Every message in the error's cause chain. */
function messages(error: unknown): string[] {
  const out: string[] = [];
  for (let e = error, depth = 0; e !== undefined && e !== null && depth < 8; depth++) {
    out.push(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
    e = e instanceof Error ? e.cause : undefined;
  }
  return out;
}

/** What an error is about: Kafka (the client's errors, or floe's own about brokers) or anything else. */
export type ErrorKind = 'kafka' | 'kafka-explained' | 'other';

/** floe's Kafka errors whose message already says what to do. */
const EXPLAINED_KAFKA_ERRORS = new Set([
  'KafkaUnreachableError',
  'KafkaTlsError',
  'TimeLookupUnsupportedError',
]);

/** The kind of `error`, by the names in its cause chain. Never throws. */
export function kindOf(error: unknown): ErrorKind {
  const names: string[] = [];
  for (let e = error, depth = 0; e instanceof Error && depth < 8; depth++) {
    names.push(e.name);
    e = e.cause ?? (e as { originalError?: unknown }).originalError;
  }
  if (names.some((n) => EXPLAINED_KAFKA_ERRORS.has(n))) return 'kafka-explained';
  return names.some((n) => n.startsWith('KafkaJS')) ? 'kafka' : 'other';
}

const HINTS: { match: RegExp; hint: string; kinds?: ErrorKind[] }[] = [
  {
    match: /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|Connection (error|timeout)|ECONNRESET|closed/,
    hint: 'the Kafka brokers (--bootstrap-servers) stopped answering: check they are running and reachable, then rerun (a rerun continues from what the tables hold)',
    kinds: ['kafka'],
  },
  {
    match: /Region is missing/,
    hint: 'set AWS_REGION (or a region in your AWS profile), e.g. the region in the table bucket ARN',
  },
  {
    match: /Could not load credentials|CredentialsProviderError|ExpiredToken|InvalidClientTokenId/,
    hint: 'set AWS credentials: AWS_PROFILE (aws sso login), or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (any values for moto or LocalStack)',
  },
  {
    match: /ECONNREFUSED|ENOTFOUND|EAI_AGAIN/,
    hint: 'nothing answered: check --uri, or AWS_ENDPOINT_URL when using moto or LocalStack (is it running?)',
    kinds: ['other'],
  },
  {
    // an SDK client got an HTML page back: the endpoint (moto, LocalStack, a proxy) lacks that API
    match: /Unexpected token '<'|Deserialization error/,
    hint: 'the endpoint answered with a web page, not the API: it may not implement this call (moto has no S3 Tables maintenance configuration)',
  },
  {
    match: /AccessDenied|not authorized to perform/,
    hint: "your AWS identity lacks a permission the command needs (the deployed functions' role has them)",
  },
];

/**
 * A hint for a setup problem, or undefined when the failure is about the table or the data, or is one
 * of floe's Kafka errors (their message says what to do).
 */
export function hintFor(error: unknown): string | undefined {
  const kind = kindOf(error);
  if (kind === 'kafka-explained') return undefined;
  const text = messages(error).join('\n');
  return HINTS.find((h) => (h.kinds ?? [kind]).includes(kind) && h.match.test(text))?.hint;
}
