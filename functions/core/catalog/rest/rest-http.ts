/**
 * The HTTP layer of the REST catalog: global `fetch` with a timeout, authentication (one resend after a
 * 401/419 when the auth can refresh), and network failures classified by whether the request can have
 * reached the server. Statuses are returned as they are; mapping them to errors is the caller's business,
 * because the same status means different things for a load and for a commit.
 */
import { stringifyJson } from '../../spec/json-codec.js';
import type { RestAuth, RestRequest } from './rest-auth.js';
import { RestTransportError } from './rest-errors.js';

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
  headers?: Record<string, string>;
  fetch?: typeof fetch;
}

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

  constructor(private readonly options: RestHttpOptions) {}

  /**
   * Sends one request (plus one resend after a 401/419 the auth could refresh) and returns the answer,
   * whatever its status.
   * @throws RestTransportError when no answer came (`sent` says whether the server may have seen it);
   * LakeError from the auth
   */
  async send(call: RestCallOptions): Promise<RestResponse> {
    let response = await this.sendOnce(call);
    if ((response.status === 401 || response.status === 419) && this.options.auth.refresh) {
      // The server refused the credentials before acting: resending the same request is safe.
      if (await this.options.auth.refresh()) response = await this.sendOnce(call);
    }
    return response;
  }

  private async sendOnce(call: RestCallOptions): Promise<RestResponse> {
    const request: RestRequest = {
      method: call.method,
      url: call.url,
      headers: { accept: 'application/json', ...this.options.headers, ...call.headers },
    };
    if (call.body !== undefined) {
      // bigints (64-bit snapshot ids) go out as exact JSON numbers
      request.body = stringifyJson(call.body);
      request.headers['content-type'] = 'application/json';
    }
    await this.options.auth.authorize(request);
    const doFetch = this.options.fetch ?? fetch;
    this.requestCount++;
    try {
      const response = await doFetch(call.url, {
        method: call.method,
        headers: request.headers,
        body: request.body,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      const text = call.method === 'HEAD' ? '' : await response.text();
      return { status: response.status, headers: response.headers, text };
    } catch (error) {
      const sent = !isCertainlyNotSent(error);
      const reason =
        error instanceof Error && error.name === 'TimeoutError'
          ? `no answer within ${this.options.timeoutMs} ms`
          : `${error instanceof Error ? error.message : String(error)}${errorCode(error) ? ` (${errorCode(error)})` : ''}`;
      throw new RestTransportError(`${call.method} ${call.url.pathname}: ${reason}`, sent, { cause: error });
    }
  }
}
