/**
 * Optional authentication for `floe serve`: fixed bearer tokens, and OAuth2 client credentials through
 * the REST spec's `POST /v1/oauth/tokens` (RFC 6749 §4.4), so an engine's ordinary catalog settings
 * (`credential=id:secret`, or `token=...`) work unchanged.
 *
 * Tokens the endpoint issues are not stored: each is `floe1.<payload>.<HMAC-SHA256>` under a key drawn
 * when the server starts, its payload naming the client, the scope and the expiry. So memory stays the
 * same however many tokens clients ask for, and a restart revokes them all (clients ask again on a 401).
 * Every comparison with a secret (fixed token, client secret, MAC) is over SHA-256 digests with
 * `timingSafeEqual`, so neither the content nor the length of a secret leaks through timing.
 *
 * Errors: on the token endpoint the spec's OAuthError (`{error, error_description}`, 400 or 401);
 * on every other route 401 with the spec's ErrorModel (`NotAuthorizedException`) and `WWW-Authenticate`.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ValidationError } from '../errors.js';
import { type RestAnswer, restError } from './rest-routes.js';

export interface ServeClient {
  id: string;
  secret: string;
}

export interface ServeAuthOptions {
  /** Bearer tokens accepted as they are (`--token-file`, `FLOE_SERVE_TOKEN`). */
  tokens?: readonly string[];
  /** Clients that may exchange `client_id` + `client_secret` for a token. */
  clients?: readonly ServeClient[];
  /** Lifetime of an issued token. @default 3600 */
  tokenTtlSeconds?: number;
  /** @default Date.now */
  now?: () => number;
}

/** Shortest fixed token or client secret accepted: shorter ones are guessable. */
export const MIN_SECRET_LENGTH = 16;
const TOKEN_PREFIX = 'floe1';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
/** RFC 6749 §3.3: scope tokens are printable ASCII but space, `"` and `\`. */
const SCOPE = /^[\x21\x23-\x5b\x5d-\x7e]+(?: [\x21\x23-\x5b\x5d-\x7e]+)*$/;

const digest = (text: string | Buffer) => createHash('sha256').update(text).digest();

/** Constant-time equality of two secrets of any lengths. */
function sameSecret(a: string | Buffer, b: string | Buffer): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

const json = (status: number, value: unknown, headers?: Record<string, string>): RestAnswer => ({
  status,
  body: JSON.stringify(value),
  headers,
});

/** The OAuthError of RFC 6749 §5.2, as the spec's token endpoint answers. */
function oauthError(status: 400 | 401, error: string, description: string, basic = false): RestAnswer {
  const headers: Record<string, string> = { 'cache-control': 'no-store' };
  if (status === 401)
    headers['www-authenticate'] = basic ? 'Basic realm="floe serve"' : 'Bearer realm="floe serve"';
  return json(status, { error, error_description: description }, headers);
}

function notAuthorized(message: string, tokenGiven: boolean): RestAnswer {
  const challenge = tokenGiven
    ? 'Bearer realm="floe serve", error="invalid_token"'
    : 'Bearer realm="floe serve"';
  return json(401, restError(401, 'NotAuthorizedException', message), { 'www-authenticate': challenge });
}

/** RFC 6749 §2.3.1: Basic credentials are form-encoded first; malformed escapes read as no value. */
function formDecoded(text: string): string | null {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

const base64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');

interface TokenPayload {
  /** client id */
  c: string;
  /** scope */
  s: string;
  /** expiry, epoch seconds */
  e: number;
}

/** Who may read, and the token endpoint that lets them in. */
export class ServeAuth {
  private readonly key = randomBytes(32);
  private readonly tokens: readonly string[];
  private readonly clients: readonly ServeClient[];
  private readonly ttlSeconds: number;
  private readonly now: () => number;

  /** @throws ValidationError when a token or secret is shorter than MIN_SECRET_LENGTH, or nothing is given */
  constructor(options: ServeAuthOptions) {
    this.tokens = options.tokens ?? [];
    this.clients = options.clients ?? [];
    this.ttlSeconds = options.tokenTtlSeconds ?? 3600;
    this.now = options.now ?? Date.now;
    if (this.tokens.length === 0 && this.clients.length === 0)
      throw new ValidationError('authentication needs a token or a client');
    for (const secret of [...this.tokens, ...this.clients.map((c) => c.secret)]) {
      if (secret.length < MIN_SECRET_LENGTH)
        throw new ValidationError(
          `tokens and client secrets must be at least ${MIN_SECRET_LENGTH} characters`,
        );
    }
    if (!Number.isInteger(this.ttlSeconds) || this.ttlSeconds <= 0)
      throw new ValidationError('the token lifetime must be a positive number of seconds');
  }

  /** Whether the token endpoint can issue anything. */
  get issuesTokens(): boolean {
    return this.clients.length > 0;
  }

  /**
   * Checks a request's `Authorization` header: undefined when it may go on, else the 401 to answer.
   * Never throws.
   */
  check(authorization: string | undefined): RestAnswer | undefined {
    if (authorization === undefined || authorization === '')
      return notAuthorized('this catalog needs a bearer token (Authorization: Bearer ...)', false);
    const m = /^Bearer[ ]+(\S+)[ ]*$/i.exec(authorization);
    if (!m) return notAuthorized('this catalog takes a bearer token (Authorization: Bearer ...)', true);
    const token = m[1]!;
    if (token.startsWith(`${TOKEN_PREFIX}.`)) {
      const payload = this.verifyIssued(token);
      if (payload === 'expired')
        return notAuthorized('the bearer token has expired: ask /v1/oauth/tokens for a new one', true);
      if (payload !== undefined) return undefined;
    }
    // Every fixed token is compared, so the time taken does not say which one came close.
    let matched = false;
    for (const fixed of this.tokens) matched = sameSecret(token, fixed) || matched;
    return matched ? undefined : notAuthorized('the bearer token is not valid for this catalog', true);
  }

  /** An issued token's payload; 'expired' when its MAC holds but its time is up; undefined when forged. */
  private verifyIssued(token: string): TokenPayload | 'expired' | undefined {
    const [, payload, mac] = token.split('.');
    if (payload === undefined || mac === undefined || token.split('.').length !== 3) return undefined;
    const expected = createHmac('sha256', this.key).update(`${TOKEN_PREFIX}.${payload}`).digest();
    if (!sameSecret(Buffer.from(mac, 'base64url'), expected)) return undefined;
    let parsed: TokenPayload;
    try {
      parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as TokenPayload;
    } catch {
      return undefined;
    }
    if (!this.clients.some((c) => c.id === parsed.c)) return undefined;
    return parsed.e * 1000 <= this.now() ? 'expired' : parsed;
  }

  private issue(clientId: string, scope: string): RestAnswer {
    const payload = base64url(
      JSON.stringify({ c: clientId, s: scope, e: Math.floor(this.now() / 1000) + this.ttlSeconds }),
    );
    const mac = base64url(createHmac('sha256', this.key).update(`${TOKEN_PREFIX}.${payload}`).digest());
    return json(
      200,
      {
        access_token: `${TOKEN_PREFIX}.${payload}.${mac}`,
        token_type: 'bearer',
        expires_in: this.ttlSeconds,
        issued_token_type: ACCESS_TOKEN_TYPE,
        scope,
      },
      { 'cache-control': 'no-store', pragma: 'no-cache' },
    );
  }

  /**
   * Answers `POST /v1/oauth/tokens` (client credentials only; form-encoded, as the spec and RFC 6749
   * say). The client authenticates with `client_id` + `client_secret` in the form or with HTTP Basic,
   * not both. Never throws.
   */
  answerTokenRequest(request: {
    contentType: string | undefined;
    authorization: string | undefined;
    body: string;
  }): RestAnswer {
    const type = (request.contentType ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/x-www-form-urlencoded')
      return oauthError(
        400,
        'invalid_request',
        'the token request must be application/x-www-form-urlencoded',
      );
    const form = new URLSearchParams(request.body);
    for (const name of new Set(form.keys())) {
      if (form.getAll(name).length > 1)
        return oauthError(400, 'invalid_request', `parameter ${name} is repeated`);
    }
    const grant = form.get('grant_type');
    if (grant === null) return oauthError(400, 'invalid_request', 'grant_type is missing');
    if (grant !== 'client_credentials')
      return oauthError(
        400,
        'unsupported_grant_type',
        'floe serve issues tokens for grant_type=client_credentials only',
      );
    const scope = form.get('scope') ?? 'catalog';
    if (!SCOPE.test(scope))
      return oauthError(400, 'invalid_scope', 'the scope is not a list of scope tokens');
    const basic = /^Basic[ ]+(\S+)$/i.exec(request.authorization ?? '');
    const inForm = form.has('client_id') || form.has('client_secret');
    if (basic && inForm)
      return oauthError(
        400,
        'invalid_request',
        'client credentials must come in the form or in Basic, not both',
      );
    let id: string | null;
    let secret: string | null;
    if (basic) {
      const pair = Buffer.from(basic[1]!, 'base64').toString('utf8');
      const colon = pair.indexOf(':');
      id = colon < 0 ? null : formDecoded(pair.slice(0, colon));
      secret = colon < 0 ? null : formDecoded(pair.slice(colon + 1));
    } else {
      id = form.get('client_id');
      secret = form.get('client_secret');
    }
    if (id === null || secret === null || id === '')
      return oauthError(401, 'invalid_client', 'client_id and client_secret are required', !!basic);
    // Compared against every client, so timing says nothing about which ids exist.
    let found: ServeClient | undefined;
    for (const client of this.clients) {
      const ok = sameSecret(id, client.id) && sameSecret(secret, client.secret);
      if (ok) found = client;
    }
    if (!found) return oauthError(401, 'invalid_client', 'unknown client or wrong secret', !!basic);
    return this.issue(found.id, scope);
  }
}

/** The token endpoint of a server started without clients. Never throws. */
export function noTokenEndpoint(): RestAnswer {
  return oauthError(401, 'invalid_client', 'floe serve was started without client credentials to check');
}
