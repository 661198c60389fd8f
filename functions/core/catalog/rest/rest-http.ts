/**
 * The HTTP layer of the REST catalog: global `fetch` with a timeout, authentication (one resend after a
 * 401/419 when the auth can refresh), and network failures classified by whether the request can have
 * reached the server. Statuses are returned as they are; mapping them to errors is the caller's business,
 * because the same status means different things for a load and for a commit.
 *
 * What a server can make this layer do is bounded:
 * - redirects are followed by hand (`redirect: 'manual'`), and only within the catalog's own origin
 *   (scheme, host and port): each hop is authorized afresh for its URL (SigV4 signs the path), and a
 *   redirect to any other origin is refused, so `Authorization` never leaves the catalog's origin.
 *   301/302/303 are followed for GET and HEAD only (fetch would turn a POST into a GET), 307/308 for all.
 * - every answer's body is read with a size cap (`maxResponseBytes`, see io/http-body.ts) and within the
 *   request's timeout, which covers the headers and the whole body (a slow-drip body times out too).
 * - what goes into an error message is redacted (redact.ts).
 */
import { LakeError } from '../../errors.js';
import { readCappedText } from '../../io/http-body.js';
import { redact, redactUrl } from '../../redact.js';
import { stringifyJson } from '../../spec/json-codec.js';
import type { RestAuth, RestRequest } from './rest-auth.js';
import { RestCatalogError, RestTransportError } from './rest-errors.js';

export interface RestResponse {
  status: number;
  headers: Headers;
  text: string;
}

export interface RestCallOptions {
  method: 'GET' | 'HEAD' | 'POST' | 'DELETE';
  url: URL;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RestHttpOptions {
  auth: RestAuth;
  timeoutMs: number;
  /** The largest response body read, in bytes. */
  maxResponseBytes: number;
  /** Named in the error when a body is over `maxResponseBytes`. */
  raiseLimitWith?: string;
  headers?: Record<string, string>;
  fetch?: typeof fetch;
}

const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * Error codes that prove the request never left: no connection was made, so nothing reached the server.
 * Everything else (resets, closed sockets, timeouts) may have happened after the server got the request.
 */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'ERR_INVALID_URL',
]);

function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** @internal exported for tests: was a failed fetch certainly not sent? */
export function isCertainlyNotSent(error: unknown): boolean {
  const code = errorCode(error);
  return code !== undefined && NOT_SENT_CODES.has(code);
}

export class RestHttpClient {
  /** Requests sent (resends included), for logs and tests. */
  requestCount = 0;

  private auth: RestAuth;

  constructor(private readonly options: RestHttpOptions) {
    this.auth = options.auth;
  }

  /**
   * Sends one request (plus one resend after a 401/419 the auth could refresh) and returns the answer,
   * whatever its status.
   * @throws RestTransportError when no complete answer came (`sent` says whether the server may have seen
   * it); RestCatalogError for a redirect it does not follow; ResponseTooLargeError for a body over the cap;
   * RestAuthError from the auth
   */
  async send(call: RestCallOptions): Promise<RestResponse> {
    const auth = this.auth;
    const first = await this.sendOnce(call, auth);
    if ((first.response.status === 401 || first.response.status === 419) && auth.refresh) {
      // The server refused the credentials before acting: resending the same request is safe.
      if (await auth.refresh(first.request)) return (await this.sendOnce(call, auth)).response;
    }
    return first.response;
  }

  /** The authentication requests are sent with from now on (after the server's config changed it). */
  useAuth(auth: RestAuth): void {
    this.auth = auth;
  }

  /** The answer, and the request (as authorized) that drew it. */
  private async sendOnce(
    call: RestCallOptions,
    auth: RestAuth,
  ): Promise<{ response: RestResponse; request: RestRequest }> {
    const body = call.body === undefined ? undefined : stringifyJson(call.body); // bigints stay exact
    const doFetch = this.options.fetch ?? fetch;
    // One deadline for the whole exchange: every hop, the headers and the body.
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    let url = call.url;
    for (let hop = 0; ; hop++) {
      const request: RestRequest = {
        method: call.method,
        url,
        headers: { accept: 'application/json', ...this.options.headers, ...call.headers },
      };
      if (body !== undefined) {
        request.body = body;
        request.headers['content-type'] = 'application/json';
      }
      await auth.authorize(request);
      this.requestCount++;
      try {
        const response = await doFetch(url, {
          method: call.method,
          headers: request.headers,
          body: request.body,
          redirect: 'manual',
          signal,
        });
        if (REDIRECTS.has(response.status)) {
          await response.body?.cancel().catch(() => {});
          url = this.redirectTarget(call, url, response, hop);
          continue;
        }
        const text =
          call.method === 'HEAD'
            ? ''
            : await readCappedText(response, {
                maxBytes: this.options.maxResponseBytes,
                what: `${call.method} ${url.pathname}`,
                raiseWith: this.options.raiseLimitWith ?? 'maxResponseBytes',
              });
        return { response: { status: response.status, headers: response.headers, text }, request };
      } catch (error) {
        // Ours (a refused redirect, a body over the cap) pass as they are; the rest are the transport's.
        if (error instanceof LakeError) throw error;
        throw this.transportError(call, url, error);
      }
    }
  }

  /**
   * Where a redirect points, when this client follows it.
   * @throws RestCatalogError for a redirect to another origin, one that would change the method, or too many
   */
  private redirectTarget(call: RestCallOptions, from: URL, response: Response, hop: number): URL {
    const where = `${call.method} ${from.pathname}`;
    const location = response.headers.get('location');
    let target: URL;
    try {
      if (!location) throw new TypeError('no Location');
      target = new URL(location, from);
    } catch {
      throw new RestCatalogError(
        `${where}: HTTP ${response.status} redirect without a usable Location`,
        response.status,
      );
    }
    if (target.origin !== from.origin) {
      throw new RestCatalogError(
        `${where}: the catalog redirected (HTTP ${response.status}) to another origin, ${redactUrl(target.origin)}; floe does not follow redirects off ${from.origin}, so its credentials never go elsewhere. Point the catalog uri at the server that answers`,
        response.status,
      );
    }
    const keepsMethod = response.status === 307 || response.status === 308;
    if (!keepsMethod && call.method !== 'GET' && call.method !== 'HEAD') {
      throw new RestCatalogError(
        `${where}: the catalog answered HTTP ${response.status} (a redirect that turns ${call.method} into GET); not followed`,
        response.status,
      );
    }
    if (hop >= MAX_REDIRECTS) {
      throw new RestCatalogError(`${where}: more than ${MAX_REDIRECTS} redirects`, response.status);
    }
    return target;
  }

  private transportError(call: RestCallOptions, url: URL, error: unknown): RestTransportError {
    const sent = !isCertainlyNotSent(error);
    const reason =
      error instanceof Error && error.name === 'TimeoutError'
        ? `no answer within ${this.options.timeoutMs} ms`
        : `${error instanceof Error ? error.message : String(error)}${errorCode(error) ? ` (${errorCode(error)})` : ''}`;
    return new RestTransportError(`${call.method} ${url.pathname}: ${redact(reason)}`, sent, {
      cause: error,
    });
  }
}
