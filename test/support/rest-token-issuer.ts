/**
 * The test REST server's OAuth2 side: a client-credentials token endpoint (the spec's deprecated
 * `/v1/oauth/tokens`, which Iceberg clients still default to) and the bearer check on every other route.
 */
import { randomUUID } from 'node:crypto';

export interface OAuthClient {
  clientId: string;
  clientSecret: string;
  /** @default 3600 */
  tokenTtlSeconds?: number;
}

export class TokenIssuer {
  /** Every form posted to the token endpoint, in order. */
  readonly requests: URLSearchParams[] = [];
  private readonly tokens = new Map<string, number>();

  constructor(
    private readonly client: OAuthClient | undefined,
    private readonly staticTokens: string[] | undefined,
  ) {}

  /** Whether routes need a bearer token at all. */
  get enforced(): boolean {
    return this.client !== undefined || this.staticTokens !== undefined;
  }

  /** True for `Bearer <t>` with a static token or an issued one that has not expired. */
  accepts(authorization: string | undefined): boolean {
    if (!this.enforced) return true;
    const match = /^Bearer (.+)$/.exec(authorization ?? '');
    if (!match) return false;
    if (this.staticTokens?.includes(match[1])) return true;
    const expiresAt = this.tokens.get(match[1]);
    return expiresAt !== undefined && Date.now() < expiresAt;
  }

  /** Answers a token request (form body): status and JSON body, per RFC 6749 §4.4 / §5.2. */
  issue(body: string): { status: number; body: unknown } {
    const form = new URLSearchParams(body);
    this.requests.push(form);
    if (!this.client) {
      return {
        status: 404,
        body: { error: { message: 'no token endpoint', type: 'NotFoundException', code: 404 } },
      };
    }
    if (form.get('grant_type') !== 'client_credentials')
      return { status: 400, body: { error: 'unsupported_grant_type' } };
    if (
      form.get('client_id') !== this.client.clientId ||
      form.get('client_secret') !== this.client.clientSecret
    ) {
      return {
        status: 401,
        body: { error: 'invalid_client', error_description: 'unknown client or wrong secret' },
      };
    }
    const token = `token-${randomUUID()}`;
    const ttl = this.client.tokenTtlSeconds ?? 3600;
    this.tokens.set(token, Date.now() + ttl * 1000);
    return {
      status: 200,
      body: {
        access_token: token,
        token_type: 'bearer',
        expires_in: ttl,
        issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      },
    };
  }

  /** Invalidates every issued token. */
  revokeAll(): void {
    this.tokens.clear();
  }
}
