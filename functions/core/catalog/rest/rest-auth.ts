/**
 * Authentication for the Iceberg REST catalog: a static bearer token, or OAuth2 client credentials
 * (`credential` = `id:secret`, as Iceberg's `credential` property) with refresh before expiry and once
 * after a 401. SigV4 lives in rest-sigv4.ts.
 *
 * The token request never follows a redirect: following one re-posts `client_secret` to wherever the
 * `Location` points (a cross-origin 307 did exactly that). A 3xx answer is an error naming where it
 * pointed, so the operator can set `oauth2-server-uri` to the endpoint itself. Every secret here (the
 * configured one and each token obtained) is registered with redact.ts, so no echo of it reaches a message.
 */
import { LakeError, TransientIOError } from '../../errors.js';
import { readCappedText } from '../../io/http-body.js';
import { redact, redactUrl, registerSecret } from '../../redact.js';
import { parseErrorBody, RestTransportError } from './rest-errors.js';

/** A request about to be sent; `authorize` may add headers. */
export interface RestRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string;
}

export interface RestAuth {
  /** Adds credentials to the request's headers. @throws LakeError when credentials cannot be obtained */
  authorize(request: RestRequest): Promise<void>;
  /**
   * Called once after a 401 (or 419): true when fresh credentials were obtained, so the same request may
   * be sent again. Absent or false: the 401 is final.
   */
  refresh?(): Promise<boolean>;
}

export const noAuth: RestAuth = { authorize: async () => {} };

/** `Authorization: Bearer <token>` with a fixed token. */
export function bearerAuth(token: string): RestAuth {
  registerSecret(token);
  return {
    authorize: async (request) => {
      request.headers.authorization = `Bearer ${token}`;
    },
  };
}

export interface OAuth2Options {
  /** `client_id:client_secret`, or just a secret (then no client id is sent). */
  credential: string;
  /** The token endpoint (`oauth2-server-uri`). */
  tokenUri: string;
  /** @default 'catalog' */
  scope?: string;
  timeoutMs?: number;
  /** The largest token response read. @default 1 MiB */
  maxResponseBytes?: number;
  now?: () => number;
  fetch?: typeof fetch;
}

/** Refresh this long before expiry (at most half the token's lifetime), so no request carries a dying token. */
const REFRESH_MARGIN_MS = 60_000;

/** OAuth2 client credentials (RFC 6749 §4.4) against the catalog's token endpoint. */
export class OAuth2ClientCredentials implements RestAuth {
  private token: string | undefined;
  private staleAtMs = 0;
  private pending: Promise<string> | undefined;
  /** Tokens fetched so far (for logs and tests). */
  fetchedTokens = 0;
  private readonly clientId: string | undefined;
  private readonly clientSecret: string;

  constructor(private readonly options: OAuth2Options) {
    const colon = options.credential.indexOf(':');
    this.clientId = colon < 0 ? undefined : options.credential.slice(0, colon);
    this.clientSecret = colon < 0 ? options.credential : options.credential.slice(colon + 1);
    registerSecret(options.credential, { pair: true });
    registerSecret(this.clientSecret);
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  async authorize(request: RestRequest): Promise<void> {
    const token =
      this.token !== undefined && this.now() < this.staleAtMs ? this.token : await this.fetchToken();
    request.headers.authorization = `Bearer ${token}`;
  }

  async refresh(): Promise<boolean> {
    this.token = undefined;
    await this.fetchToken();
    return true;
  }

  /** One token request at a time: concurrent callers share it. */
  private fetchToken(): Promise<string> {
    this.pending ??= this.requestToken().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  /**
   * @throws LakeError (not retryable) when the endpoint refuses the credentials; TransientIOError for
   * 5xx and network failures
   */
  private async requestToken(): Promise<string> {
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (this.clientId !== undefined) form.set('client_id', this.clientId);
    form.set('client_secret', this.clientSecret);
    form.set('scope', this.options.scope ?? 'catalog');
    const doFetch = this.options.fetch ?? fetch;
    const startedAt = this.now();
    const endpoint = redactUrl(this.options.tokenUri);
    const timeoutMs = this.options.timeoutMs ?? 30_000;
    let response: Response;
    let text: string;
    try {
      response = await doFetch(this.options.tokenUri, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form.toString(),
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (response.status >= 300 && response.status < 400) {
        await response.body?.cancel().catch(() => {});
        const location = response.headers.get('location');
        throw new LakeError(
          `OAuth2 token request to ${endpoint} was answered with HTTP ${response.status}, a redirect${location ? ` to ${originOf(location, this.options.tokenUri)}` : ''}; token requests never follow redirects (that would post the client secret again). Set oauth2-server-uri to the token endpoint itself`,
        );
      }
      text = await readCappedText(response, {
        maxBytes: this.options.maxResponseBytes ?? 1024 * 1024,
        what: `OAuth2 token request to ${endpoint}`,
        raiseWith: 'the catalog option rest.max-response-bytes',
      });
    } catch (error) {
      if (error instanceof LakeError) throw error;
      const reason =
        error instanceof Error && error.name === 'TimeoutError'
          ? `no answer within ${timeoutMs} ms`
          : String(error);
      throw new RestTransportError(`OAuth2 token request to ${endpoint} failed: ${redact(reason)}`, true, {
        cause: error,
      });
    }
    if (!response.ok) {
      const model = parseErrorBody(response.status, text);
      const message = `OAuth2 token request to ${endpoint} failed: HTTP ${response.status} ${model.message}`;
      if (response.status >= 500 || response.status === 429) throw new TransientIOError(message);
      throw new LakeError(message);
    }
    let body: { access_token?: unknown; expires_in?: unknown };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      // no cause: JSON.parse's message quotes the body, and the body may hold the token
      throw new LakeError(`OAuth2 token response from ${endpoint} is not JSON`);
    }
    if (typeof body.access_token !== 'string' || body.access_token.length === 0) {
      throw new LakeError(`OAuth2 token response from ${endpoint} has no access_token`);
    }
    registerSecret(body.access_token);
    // No expires_in: treat the token as good for an hour; a 401 still triggers a refresh.
    const lifetimeMs =
      typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in * 1000 : 3_600_000;
    this.token = body.access_token;
    this.staleAtMs = startedAt + lifetimeMs - Math.min(REFRESH_MARGIN_MS, lifetimeMs / 2);
    this.fetchedTokens++;
    return body.access_token;
  }
}

/** The origin a Location header points at, for a message (never its path or query: they may be signed). */
function originOf(location: string, base: string): string {
  try {
    return redactUrl(new URL(location, base).origin);
  } catch {
    return 'an unparsable Location';
  }
}
