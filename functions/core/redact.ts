/**
 * One redaction for everything a remote party can make floe repeat: HTTP bodies and URLs that go into an
 * error message, and through it into logs, DLQ reasons and Lambda results. Servers do echo credentials
 * (a registry's 401 body quoting the request's `Authorization` header, a token endpoint repeating the
 * form it was posted), so every such text passes through `redact` before it is put in an error.
 *
 * Two layers:
 * - shapes: `Authorization: ...`, `Bearer ...`, `Basic ...`, `access_token`/`client_secret`/`password`/
 *   `token`/`credential`/`secret` fields (JSON, form or header style), URL user-info, and signed-URL query
 *   parameters (`X-Amz-Signature`, `X-Amz-Credential`, `X-Amz-Security-Token`, `sig`, `Signature`);
 * - known values: every secret floe was configured with or was handed (`registerSecret`), in the forms a
 *   server may echo it in (as is, URL-encoded, form-encoded, JSON-escaped, base64, and for `user:password`
 *   pairs the password alone and the Basic header's base64), whatever text surrounds it.
 */

const MASK = '[REDACTED]';

/** Secrets shorter than this are not matched as values (they would mask ordinary words); shapes still apply. */
const MIN_SECRET_LENGTH = 4;
/** Known secret forms kept (OAuth2 tokens rotate hourly; the oldest go first). */
const MAX_KNOWN = 512;

const known = new Set<string>();

function remember(value: string): void {
  if (value.length < MIN_SECRET_LENGTH) return;
  known.delete(value);
  known.add(value);
  while (known.size > MAX_KNOWN) {
    const oldest = known.values().next().value;
    if (oldest === undefined) break;
    known.delete(oldest);
  }
}

/**
 * Makes `redact` mask this value (and its encoded forms) wherever it appears. For `user:password`
 * pairs (`pair: true`) the password alone is masked too, and the Basic header's base64 of the pair.
 */
export function registerSecret(value: string | undefined, options: { pair?: boolean } = {}): void {
  if (value === undefined || value.length === 0) return;
  const forms = [value];
  if (options.pair) {
    const colon = value.indexOf(':');
    if (colon >= 0) forms.push(value.slice(colon + 1));
  }
  for (const form of forms) {
    remember(form);
    remember(encodeURIComponent(form));
    remember(new URLSearchParams({ v: form }).toString().slice(2));
    remember(JSON.stringify(form).slice(1, -1));
    remember(Buffer.from(form).toString('base64'));
    remember(Buffer.from(form).toString('base64url'));
  }
}

/** For tests: forget every registered secret. */
export function clearRegisteredSecrets(): void {
  known.clear();
}

const SECRET_FIELD =
  '(?:access[_-]?token|refresh[_-]?token|id[_-]?token|client[_-]?secret|secret[_-]?access[_-]?key|session[_-]?token|security[_-]?token|password|passwd|secret|credential|token|api[_-]?key)';

const SHAPES: [RegExp, string][] = [
  // `Authorization: Basic abc`, `"authorization":"Bearer x"`, `authorization=...` (header, JSON, form);
  // the whole value up to the end of the line or the closing quote, whatever its scheme
  [/(["']?(?:proxy-)?authorization["']?\s*[:=]\s*["']?)[^"'\r\n,}]+/gi, `$1${MASK}`],
  // a scheme with its credential anywhere else (`... header was Bearer eyJ...`)
  [/\b(Bearer|Basic|Digest|Negotiate|AWS4-HMAC-SHA256)\s+[A-Za-z0-9\-._~+/=,:]+/g, `$1 ${MASK}`],
  // JSON fields: "client_secret": "..."
  [new RegExp(`("${SECRET_FIELD}"\\s*:\\s*")(?:[^"\\\\]|\\\\.)*"`, 'gi'), `$1${MASK}"`],
  // form / query / header-style fields: client_secret=..., token: ...
  [new RegExp(`(\\b${SECRET_FIELD}\\b\\s*[=:]\\s*)(?!\\s|")[^\\s&"',;}]+`, 'gi'), `$1${MASK}`],
  // signed URLs: SigV4 query parameters, Azure SAS `sig`, SigV2 `Signature`
  [
    /([?&](?:X-Amz-Signature|X-Amz-Credential|X-Amz-Security-Token|X-Amz-SignedHeaders|sig|Signature|AWSAccessKeyId)=)[^&\s"'#]+/gi,
    `$1${MASK}`,
  ],
  // a SigV4 Authorization header's parts, wherever they are quoted (`Credential=AKIA.../..., Signature=...`)
  [/\b(Credential|Signature)=[^\s,&"';]+/g, `$1=${MASK}`],
  // user-info in URLs: https://user:password@host
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^/\s:@"']+:[^/\s@"']+@/gi, `$1${MASK}@`],
];

/** `text` with every credential-shaped value and every registered secret masked. Never throws. */
export function redact(text: string): string {
  let out = text;
  // Known values first, longest first, so a secret's base64 is masked whole before any shorter form.
  if (known.size > 0) {
    const values = [...known].sort((a, b) => b.length - a.length);
    for (const value of values) if (out.includes(value)) out = out.split(value).join(MASK);
  }
  for (const [pattern, replacement] of SHAPES) out = out.replace(pattern, replacement);
  return out;
}

/** A URL for a message: user-info dropped and signed query parameters masked. */
export function redactUrl(url: URL | string): string {
  return redact(String(url));
}

/**
 * Redacts, in place, the message and stack of an error another library made (an SDK error kept as a
 * `cause`), and of its causes: loggers print the whole chain, so a wrapper's redacted message is not
 * enough. Returns the same error. Never throws (a frozen error is left as it is).
 */
export function redactError<T>(error: T): T {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    try {
      const message = redact(current.message);
      if (message !== current.message) current.message = message;
      if (current.stack !== undefined) {
        const stack = redact(current.stack);
        if (stack !== current.stack) current.stack = stack;
      }
    } catch {
      // read-only: nothing more can be done here
    }
    current = current.cause;
  }
  return error;
}
