/**
 * Authentication for the Iceberg REST catalog: a static bearer token, or OAuth2 client credentials
 * (`credential` = `id:secret`, as Iceberg's `credential` property) with refresh before expiry and once
 * after a 401. SigV4 lives in rest-sigv4.ts.
 */
import { LakeError, TransientIOError } from '../../errors.js';
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
    let response: Response;
    let text: string;
    try {
      response = await doFetch(this.options.tokenUri, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form.toString(),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
      });
      text = await response.text();
    } catch (error) {
      throw new RestTransportError(
        `OAuth2 token request to ${this.options.tokenUri} failed: ${String(error)}`,
        true,
        {
          cause: error,
        },
      );
    }
    if (!response.ok) {
      const model = parseErrorBody(response.status, text);
      const message = `OAuth2 token request to ${this.options.tokenUri} failed: HTTP ${response.status} ${model.message}`;
      if (response.status >= 500 || response.status === 429) throw new TransientIOError(message);
      throw new LakeError(message);
    }
    let body: { access_token?: unknown; expires_in?: unknown };
    try {
      body = JSON.parse(text) as typeof body;
    } catch (error) {
      throw new LakeError(`OAuth2 token response from ${this.options.tokenUri} is not JSON`, {
        cause: error,
      });
    }
    if (typeof body.access_token !== 'string' || body.access_token.length === 0) {
      throw new LakeError(`OAuth2 token response from ${this.options.tokenUri} has no access_token`);
    }
    // No expires_in: treat the token as good for an hour; a 401 still triggers a refresh.
    const lifetimeMs =
      typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in * 1000 : 3_600_000;
    this.token = body.access_token;
    this.staleAtMs = startedAt + lifetimeMs - Math.min(REFRESH_MARGIN_MS, lifetimeMs / 2);
    this.fetchedTokens++;
    return body.access_token;
  }
}
