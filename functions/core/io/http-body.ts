/**
 * Reading an HTTP response body with a size cap. `response.text()` buffers whatever the server sends: a
 * 1.2 GB table-load answer took a process to 13.7 GB RSS (the body, its string, then its parse). Here a
 * declared `Content-Length` over the cap is refused before any byte is read, and a chunked body is
 * counted as it streams and dropped (the connection cancelled) the moment it passes the cap. Timeouts are
 * the caller's: the fetch's AbortSignal also aborts a body that drips in slower than it allows.
 */
import { LakeError, ValidationError } from '../errors.js';

/** The answer was bigger than the configured cap; it was not read whole. */
export class ResponseTooLargeError extends LakeError {
  readonly limitBytes: number;
  constructor(message: string, limitBytes: number) {
    super(message, { retryable: false });
    this.limitBytes = limitBytes;
  }
}

export interface BodyLimit {
  maxBytes: number;
  /** What was asked, for the message (`GET /v1/ns/tables/t`). */
  what: string;
  /** How to raise the limit, for the message (`the catalog option rest.max-response-bytes`). */
  raiseWith: string;
}

/**
 * The body as UTF-8 text, at most `limit.maxBytes` bytes of it.
 * @throws ResponseTooLargeError when the body is (or declares itself) larger; the stream's own error
 * (e.g. the AbortSignal's TimeoutError) when reading fails
 */
export async function readCappedText(response: Response, limit: BodyLimit): Promise<string> {
  const tooLarge = (size: string) =>
    new ResponseTooLargeError(
      `${limit.what}: the response (${size}) is larger than the limit of ${limit.maxBytes} bytes; it was not read. Raise the limit with ${limit.raiseWith} if such answers are expected`,
      limit.maxBytes,
    );
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > limit.maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge(`Content-Length ${declared}`);
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit.maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(`more than ${limit.maxBytes} bytes, still streaming`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total).toString('utf8');
}

/**
 * A byte limit from its sources in order (an explicit option, a property, an environment variable), else
 * `fallback`. @throws ValidationError naming the source when a value is not a positive integer
 */
export function resolveByteLimit(
  sources: { name: string; value: string | number | undefined }[],
  fallback: number,
): number {
  for (const { name, value } of sources) {
    if (value === undefined || value === '') continue;
    const n = typeof value === 'number' ? value : Number(value);
    if (!Number.isSafeInteger(n) || n < 1) {
      throw new ValidationError(`${name} must be a positive whole number of bytes, not '${value}'`);
    }
    return n;
  }
  return fallback;
}
