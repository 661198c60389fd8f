/**
 * A loopback OAuth2 token endpoint standing in for an external identity provider (Keycloak, Okta, Entra
 * ID) on its own port: it records exactly what each token request carried (content type, Authorization
 * header, form fields), issues opaque tokens for the client credentials (RFC 6749 §4.4, the secret as form
 * fields or HTTP Basic), and can be told to misbehave (5xx, garbage, no answer at all). Expiry is the
 * client's business here (tests drive the client's clock); `revokeAll` makes the catalog refuse tokens.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TokenServerOptions {
  clientId: string;
  clientSecret: string;
  /** `expires_in` of issued tokens; null leaves it out. @default 3600 */
  expiresIn?: number | null;
  /** The path that answers. @default '/oauth2/token' */
  path?: string;
}

export interface TokenRequest {
  method: string;
  path: string;
  contentType: string | undefined;
  authorization: string | undefined;
  /** The body as posted. */
  body: string;
  form: Record<string, string>;
}

/** What the next token request is answered with instead of a token. */
export type TokenFault =
  | { kind: 'status'; status: number; echo?: boolean }
  | { kind: 'garbage' }
  | { kind: 'hang' };

export class OAuth2TokenServer {
  readonly requests: TokenRequest[] = [];
  private readonly valid = new Set<string>();
  private readonly faults: TokenFault[] = [];
  private readonly hanging: ServerResponse[] = [];
  private issued = 0;
  private server: Server | undefined;
  /** `http://127.0.0.1:<port>` */
  origin = '';

  private constructor(private readonly options: TokenServerOptions) {}

  static async start(options: TokenServerOptions): Promise<OAuth2TokenServer> {
    const instance = new OAuth2TokenServer(options);
    const server = createServer((req, res) => {
      instance.handle(req, res).catch(() => res.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    instance.server = server;
    instance.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return instance;
  }

  /** The token endpoint's URL. */
  get tokenUri(): string {
    return `${this.origin}${this.options.path ?? '/oauth2/token'}`;
  }

  /** Whether the catalog should take `Bearer <token>`: issued here and not revoked. */
  readonly accepts = (token: string): boolean => this.valid.has(token);

  /** Queues a misbehaviour for the next token request (several: one per request, in order). */
  failNext(fault: TokenFault): void {
    this.faults.push(fault);
  }

  /** Every token issued so far is refused from now on. */
  revokeAll(): void {
    this.valid.clear();
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const res of this.hanging) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const form = Object.fromEntries(new URLSearchParams(body));
    this.requests.push({
      method: req.method ?? '',
      path,
      contentType: req.headers['content-type'],
      authorization: req.headers.authorization,
      body,
      form,
    });
    if (req.method !== 'POST' || path !== (this.options.path ?? '/oauth2/token'))
      return reply(res, 404, { error: 'not_found' });
    const fault = this.faults.shift();
    if (fault?.kind === 'hang') {
      this.hanging.push(res);
      return;
    }
    if (fault?.kind === 'garbage') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>Sign in to continue</body></html>');
      return;
    }
    if (fault?.kind === 'status') {
      // A hostile or careless endpoint repeats what it was sent.
      return reply(res, fault.status, {
        error: 'server_error',
        error_description: fault.echo ? body : 'down',
      });
    }
    if (!this.clientMatches(req, form)) {
      return reply(res, 401, { error: 'invalid_client', error_description: 'bad client credentials' });
    }
    if (form.grant_type !== 'client_credentials') return reply(res, 400, { error: 'unsupported_grant_type' });
    const token = `idp-token-${++this.issued}`;
    this.valid.add(token);
    const expiresIn = this.options.expiresIn === undefined ? 3600 : this.options.expiresIn;
    return reply(res, 200, {
      access_token: token,
      token_type: 'Bearer',
      ...(expiresIn === null ? {} : { expires_in: expiresIn }),
    });
  }

  /** RFC 6749 §2.3.1: form fields, or Basic with each part form-encoded. */
  private clientMatches(req: IncomingMessage, form: Record<string, string>): boolean {
    const { clientId, clientSecret } = this.options;
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
    if (basic) {
      const pair = Buffer.from(basic[1], 'base64').toString('utf8');
      const colon = pair.indexOf(':');
      const decode = (s: string) => new URLSearchParams(`v=${s}`).get('v');
      return decode(pair.slice(0, colon)) === clientId && decode(pair.slice(colon + 1)) === clientSecret;
    }
    return form.client_id === clientId && form.client_secret === clientSecret;
  }
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
