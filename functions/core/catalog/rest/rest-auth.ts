/**
 * Authentication for the Iceberg REST catalog: a static bearer token, or OAuth2 client credentials
 * (`credential` = `id:secret`, as Iceberg's `credential` property) with refresh before expiry and once
 * after a 401. SigV4 lives in rest-sigv4.ts; which settings select which, and how the server's
 * `GET /v1/config` may change them, lives in rest-signin.ts.
 *
 * The token request is what Iceberg Java's OAuth2Util and PyIceberg's legacy OAuth2 manager post: a form
 * with `grant_type=client_credentials`, `client_id`, `client_secret`, `scope` (default `catalog`) and,
 * when set, `audience` and `resource`. `clientAuth: 'basic'` sends the client id and secret in an HTTP
 * Basic header instead (RFC 6749 §2.3.1, what PyIceberg's newer OAuth2AuthManager does), for identity
 * providers that accept only that. No OAuth2 library is used: the exchange is one form POST, and the
 * libraries on npm either follow redirects (re-posting the secret) or cannot bound the answer's size.
 *
 * The token request never follows a redirect: following one re-posts `client_secret` to wherever the
 * `Location` points (a cross-origin 307 did exactly that). A 3xx answer is an error naming where it
 * pointed, so the operator can set `oauth2-server-uri` to the endpoint itself. Every secret here (the
 * configured one and each token obtained) is registered with redact.ts, so no echo of it reaches a message.
 */
import { LakeError } from '../../errors.js';
import { readCappedText } from '../../io/http-body.js';
import { redact, redactUrl, registerSecret } from '../../redact.js';
import { parseErrorBody, RestAuthError } from './rest-errors.js';

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
   * Called once after a 401 (or 419) to `refused`, the request as it was sent: true when fresh
   * credentials are at hand, so the same request may be sent again. Absent or false: the 401 is final.
   */
  refresh?(refused: RestRequest): Promise<boolean>;
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

/** How the client authenticates to the token endpoint (RFC 6749 §2.3.1). */
export type OAuth2ClientAuth = 'post' | 'basic';

/** The parameters of a token request other than the client's credentials; equal settings share a token. */
export interface OAuth2Settings {
  /** The token endpoint (`oauth2-server-uri`). */
  tokenUri: string;
  /** @default 'catalog' */
  scope?: string;
  /** `audience` (RFC 8693; Auth0, Okta and Keycloak read it on client credentials too). */
  audience?: string;
  /** `resource` (RFC 8707; Entra ID and Keycloak). */
  resource?: string;
  /** Further form fields, sent as they are. */
  params?: Record<string, string>;
  /** `post` (form fields, Iceberg's way) or `basic` (an HTTP Basic header). @default 'post' */
  clientAuth?: OAuth2ClientAuth;
}

export interface OAuth2Options extends OAuth2Settings {
  /** `client_id:client_secret`, or just a secret (then no client id is sent). */
  credential: string;
  timeoutMs?: number;
  /** The largest token response read. @default 1 MiB */
  maxResponseBytes?: number;
  now?: () => number;
  fetch?: typeof fetch;
}

/** Form fields the settings own: given as extra parameters they would be ambiguous. */
export const RESERVED_TOKEN_PARAMS = [
  'grant_type',
  'client_id',
  'client_secret',
  'scope',
  'audience',
  'resource',
] as const;

/** Refresh this long before expiry (at most half the token's lifetime), as Iceberg Java and PyIceberg do. */
export const REFRESH_MARGIN_MS = 60_000;
/** A token whose answer names no lifetime is taken as good for an hour; a 401 still refreshes it. */
const DEFAULT_LIFETIME_MS = 3_600_000;
/** A longer `expires_in` (or a garbled huge one) is taken as a day: the token is still renewed daily. */
const MAX_LIFETIME_MS = 86_400_000;

/** OAuth2 client credentials (RFC 6749 §4.4) against the token endpoint. */
export class OAuth2ClientCredentials implements RestAuth {
  private token: string | undefined;
  private staleAtMs = 0;
  private pending: Promise<string> | undefined;
  /** Tokens fetched so far (for logs and tests). */
  fetchedTokens = 0;
  private readonly clientId: string | undefined;
  private readonly clientSecret: string;

  /**
   * @throws LakeError for a token endpoint that is not an http(s) URL, `clientAuth: 'basic'` without a
   * client id, or a reserved name among `params`
   */
  constructor(private readonly options: OAuth2Options) {
    if (!isHttpUrl(options.tokenUri)) {
      throw new LakeError(
        `the OAuth2 token endpoint (oauth2-server-uri) must be an http(s) URL, not '${redactUrl(options.tokenUri)}'`,
      );
    }
    const colon = options.credential.indexOf(':');
    this.clientId = colon < 0 ? undefined : options.credential.slice(0, colon);
    this.clientSecret = colon < 0 ? options.credential : options.credential.slice(colon + 1);
    registerSecret(options.credential, { pair: true });
    registerSecret(this.clientSecret);
    if (options.clientAuth === 'basic' && this.clientId === undefined) {
      throw new LakeError('OAuth2 client authentication "basic" needs a credential of the form id:secret');
    }
    const reserved = Object.keys(options.params ?? {}).filter((k) =>
      (RESERVED_TOKEN_PARAMS as readonly string[]).includes(k),
    );
    if (reserved.length > 0) {
      throw new LakeError(
        `OAuth2 extra parameter ${reserved.join(', ')} is set by floe itself (use the credential, scope, audience or resource settings)`,
      );
    }
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  async authorize(request: RestRequest): Promise<void> {
    const token =
      this.token !== undefined && this.now() < this.staleAtMs ? this.token : await this.fetchToken();
    request.headers.authorization = `Bearer ${token}`;
  }

  /**
   * A 401 to a request sent with the token still current means the server no longer takes it: fetch
   * another. One sent with an older token needs none: a concurrent request has refreshed already.
   */
  async refresh(refused: RestRequest): Promise<boolean> {
    if (this.pending === undefined && refused.headers.authorization === `Bearer ${this.token}`) {
      this.token = undefined;
    }
    await (this.pending ?? (this.token === undefined ? this.fetchToken() : undefined));
    return true;
  }

  /** One token request at a time: concurrent callers share it. */
  private fetchToken(): Promise<string> {
    this.pending ??= this.requestToken().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  private tokenRequest(): { headers: Record<string, string>; body: string } {
    const { options } = this;
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
    if (options.clientAuth === 'basic') {
      // RFC 6749 §2.3.1: each part form-encoded before the pair is base64-encoded.
      const pair = `${formEncode(this.clientId ?? '')}:${formEncode(this.clientSecret)}`;
      const basic = Buffer.from(pair).toString('base64');
      registerSecret(basic);
      headers.authorization = `Basic ${basic}`;
    } else {
      if (this.clientId !== undefined) form.set('client_id', this.clientId);
      form.set('client_secret', this.clientSecret);
    }
    form.set('scope', options.scope ?? 'catalog');
    if (options.audience !== undefined) form.set('audience', options.audience);
    if (options.resource !== undefined) form.set('resource', options.resource);
    for (const [key, value] of Object.entries(options.params ?? {})) form.set(key, value);
    return { headers, body: form.toString() };
  }

  /**
   * @throws RestAuthError: not retryable when the endpoint refuses the credentials, redirects, or answers
   * something that is not a token; retryable for 429, 5xx, timeouts and network failures
   */
  private async requestToken(): Promise<string> {
    const doFetch = this.options.fetch ?? fetch;
    const startedAt = this.now();
    const endpoint = redactUrl(this.options.tokenUri);
    const what = `OAuth2 token request to ${endpoint}`;
    const timeoutMs = this.options.timeoutMs ?? 30_000;
    let response: Response;
    let text: string;
    try {
      response = await doFetch(this.options.tokenUri, {
        method: 'POST',
        ...this.tokenRequest(),
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (response.status >= 300 && response.status < 400) {
        await response.body?.cancel().catch(() => {});
        const location = response.headers.get('location');
        throw new RestAuthError(
          `${what} was answered with HTTP ${response.status}, a redirect${location ? ` to ${originOf(location, this.options.tokenUri)}` : ''}; token requests never follow redirects (that would post the client secret again). ${SET_SERVER_URI} to the token endpoint itself`,
          { retryable: false },
        );
      }
      text = await readCappedText(response, {
        maxBytes: this.options.maxResponseBytes ?? 1024 * 1024,
        what,
        raiseWith: 'the catalog option rest.max-response-bytes',
      });
    } catch (error) {
      if (error instanceof LakeError) throw error;
      const reason =
        error instanceof Error && error.name === 'TimeoutError'
          ? `no answer within ${timeoutMs} ms`
          : `${String(error)}${causeOf(error)}`;
      throw new RestAuthError(`${what} failed: ${redact(reason)}; a retry may succeed`, {
        retryable: true,
        cause: error,
      });
    }
    if (!response.ok) throw refusal(what, response.status, text);
    return this.accept(what, text, startedAt);
  }

  /** Keeps the token of a 2xx answer. @throws RestAuthError (not retryable) when it holds none */
  private accept(what: string, text: string, startedAt: number): string {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      // no cause: JSON.parse's message quotes the body, and the body may hold the token
      throw new RestAuthError(
        `${what}: the answer is not JSON (is this the token endpoint? ${SET_SERVER_URI} to it)`,
        { retryable: false },
      );
    }
    const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const token = fields.access_token;
    // Visible ASCII only: it goes into a header, where a CR or LF would be a header injection.
    if (typeof token !== 'string' || !/^[!-~]+$/.test(token)) {
      throw new RestAuthError(`${what}: the answer has no usable access_token`, { retryable: false });
    }
    registerSecret(token);
    this.token = token;
    const lifetimeMs = lifetimeOf(fields.expires_in);
    this.staleAtMs = startedAt + lifetimeMs - Math.min(REFRESH_MARGIN_MS, lifetimeMs / 2);
    this.fetchedTokens++;
    return token;
  }
}

const SET_SERVER_URI =
  'Set oauth2-server-uri (--oauth2-server-uri, FLOE_REST_OAUTH2_SERVER_URI, the construct prop oauth2ServerUri)';

/** `expires_in` in ms: a positive number of seconds, or its decimal string (some identity providers send one). */
function lifetimeOf(expiresIn: unknown): number {
  const seconds =
    typeof expiresIn === 'number'
      ? expiresIn
      : typeof expiresIn === 'string' && /^\d+$/.test(expiresIn)
        ? Number(expiresIn)
        : Number.NaN;
  return Number.isFinite(seconds) && seconds > 0
    ? Math.min(seconds * 1000, MAX_LIFETIME_MS)
    : DEFAULT_LIFETIME_MS;
}

/** A non-2xx answer from the token endpoint, with what the operator can do about it. */
function refusal(what: string, status: number, text: string): RestAuthError {
  const model = parseErrorBody(status, text);
  const message = `${what} failed: HTTP ${status} ${model.message}`;
  if (status >= 500 || status === 429 || status === 408) {
    return new RestAuthError(`${message}; a retry may succeed`, { retryable: true });
  }
  const hint =
    status === 404 || status === 405
      ? ` (no token endpoint there: ${SET_SERVER_URI} to your identity provider's token endpoint)`
      : status === 400 || status === 401 || status === 403
        ? ' (check the credential, scope, audience and resource the endpoint expects)'
        : '';
  return new RestAuthError(`${message}${hint}`, { retryable: false });
}

function isHttpUrl(text: string): boolean {
  try {
    const { protocol } = new URL(text);
    return protocol === 'https:' || protocol === 'http:';
  } catch {
    return false;
  }
}

/** application/x-www-form-urlencoded, as RFC 6749 §2.3.1 asks of the Basic header's parts. */
function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

/** A network error's code (ECONNREFUSED, ...), which says more than "fetch failed". */
function causeOf(error: unknown): string {
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  return typeof cause?.code === 'string' ? ` (${cause.code})` : '';
}

/** The origin a Location header points at, for a message (never its path or query: they may be signed). */
function originOf(location: string, base: string): string {
  try {
    return redactUrl(new URL(location, base).origin);
  } catch {
    return 'an unparsable Location';
  }
}
