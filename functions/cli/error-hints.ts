/**
 * What to do about a failure whose cause is the machine's AWS or network setup rather than the table.
 * The core reports such failures faithfully ("Region is missing") and, having no HTTP status, often as
 * transient; at the command line the useful answer is which setting to fix.
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

const HINTS: { match: RegExp; hint: string }[] = [
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

/** A hint for a setup problem, or undefined when the failure is about the table or the data. */
export function hintFor(error: unknown): string | undefined {
  const text = messages(error).join('\n');
  return HINTS.find((h) => h.match.test(text))?.hint;
}
