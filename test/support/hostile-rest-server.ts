/**
 * A hostile Iceberg REST catalog for tests: a proxy (node:http on 127.0.0.1) in front of a
 * RestCatalogServer that forwards every request as it is, except the ones it is told to misbehave on.
 * Misbehaviours are queued per route (`next`) or set for good (`always`):
 *
 * - `other-table`: a commit is not forwarded; the answer is 200 with another table's load result
 *   (`table` names it) — as a server that routes answers wrongly would;
 * - `stale`: a commit is not forwarded; the answer is 200 with the table's current, unchanged metadata;
 * - `drop-ref`: a commit is forwarded without its `set-snapshot-ref` updates, so the snapshot is added but
 *   `main` does not move (the server's answer, and every later load, show it off the branch);
 * - `status-before`: the answer is `status` and nothing is forwarded;
 * - `status-after`: the request is forwarded (a commit lands), then the answer is `status` instead;
 * - `redirect`: 307 to the same path at `to` (another origin: see `startRecorder`);
 * - `huge`: 200 with `bytes` of JSON-ish filler, chunked, or with a `Content-Length` (`declare`); stops
 *   writing when the client hangs up, so `hugeBytesSent` shows how much the client took;
 * - `slow-drip`: 200 headers, then one byte every `everyMs`, never finishing;
 * - `echo`: answers `status` with a body (and a `www-authenticate` header) echoing the request's
 *   headers and body — every credential it was sent.
 *
 * Routes: `token` (POST /v1/oauth/tokens), `config`, `load` (GET a table), `commit` (POST a table), `any`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseJsonLossless, stringifyJson } from '../../functions/core/spec/json-codec.js';

export type HostileRoute = 'token' | 'config' | 'load' | 'commit' | 'any';

export type Misbehaviour =
  | { kind: 'other-table'; table: string }
  | { kind: 'stale' }
  | { kind: 'drop-ref' }
  | { kind: 'status-before'; status: number }
  | { kind: 'status-after'; status: number }
  | { kind: 'redirect'; to: string }
  | { kind: 'huge'; bytes: number; declare?: boolean }
  | { kind: 'slow-drip'; everyMs: number }
  | { kind: 'echo'; status: number };

export interface SeenRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const TABLE_PATH = /^(.*\/namespaces\/[^/]+\/tables\/)([^/?]+)$/;

function routeOf(method: string, pathname: string): HostileRoute[] {
  const routes: HostileRoute[] = ['any'];
  if (pathname.endsWith('/oauth/tokens') && method === 'POST') routes.push('token');
  else if (pathname.endsWith('/v1/config')) routes.push('config');
  else if (TABLE_PATH.test(pathname)) routes.push(method === 'POST' ? 'commit' : 'load');
  return routes;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export class HostileRestServer {
  readonly requests: SeenRequest[] = [];
  /** Bytes of `huge` bodies actually written to clients. */
  hugeBytesSent = 0;
  uri = '';
  private server: Server | undefined;
  private readonly queued = new Map<HostileRoute, Misbehaviour[]>();
  private readonly standing = new Map<HostileRoute, Misbehaviour>();
  private readonly timers = new Set<NodeJS.Timeout>();

  private constructor(private readonly upstream: string) {}

  static async start(upstream: string): Promise<HostileRestServer> {
    const instance = new HostileRestServer(upstream.replace(/\/+$/, ''));
    const server = createServer((req, res) => {
      instance.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(error));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    instance.server = server;
    instance.uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return instance;
  }

  /** Misbehaves on the next `times` requests of `route`. */
  next(route: HostileRoute, misbehaviour: Misbehaviour, times = 1): void {
    const list = this.queued.get(route) ?? [];
    for (let i = 0; i < times; i++) list.push(misbehaviour);
    this.queued.set(route, list);
  }

  /** Misbehaves on every request of `route` until `reset`. */
  always(route: HostileRoute, misbehaviour: Misbehaviour): void {
    this.standing.set(route, misbehaviour);
  }

  reset(): void {
    this.queued.clear();
    this.standing.clear();
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private take(routes: HostileRoute[]): Misbehaviour | undefined {
    for (const route of [...routes].reverse()) {
      const list = this.queued.get(route);
      if (list && list.length > 0) return list.shift();
      const standing = this.standing.get(route);
      if (standing) return standing;
    }
    return undefined;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const method = req.method ?? 'GET';
    const target = req.url ?? '/';
    this.requests.push({ method, url: target, headers: { ...req.headers }, body });
    const pathname = new URL(target, 'http://localhost').pathname;
    const misbehaviour = this.take(routeOf(method, pathname));
    switch (misbehaviour?.kind) {
      case undefined:
        return this.forward(req, res, body);
      case 'status-before':
        return json(res, misbehaviour.status, errorModel(misbehaviour.status, 'injected before acting'));
      case 'status-after': {
        await this.fetchUpstream(req, body);
        return json(res, misbehaviour.status, errorModel(misbehaviour.status, 'injected after acting'));
      }
      case 'stale':
        return this.answerWithLoad(req, res, target);
      case 'drop-ref': {
        // lossless: snapshot ids are 64-bit
        const commit = parseJsonLossless(body) as { updates?: { action?: string }[] };
        commit.updates = (commit.updates ?? []).filter((u) => u.action !== 'set-snapshot-ref');
        return this.forward(req, res, stringifyJson(commit));
      }
      case 'other-table': {
        const match = TABLE_PATH.exec(pathname);
        const other = match ? `${match[1]}${encodeURIComponent(misbehaviour.table)}` : target;
        return this.answerWithLoad(req, res, other);
      }
      case 'redirect':
        res.writeHead(307, { location: `${misbehaviour.to.replace(/\/+$/, '')}${target}` });
        res.end();
        return;
      case 'echo': {
        const echoed = JSON.stringify({ headers: req.headers, body });
        res.writeHead(misbehaviour.status, {
          'content-type': 'application/json',
          'www-authenticate': `Bearer realm="catalog", error="invalid_token", echoed="${String(req.headers.authorization ?? '')}"`,
        });
        res.end(
          JSON.stringify({
            error: {
              message: `refused request with headers ${echoed}`,
              type: 'NotAuthorizedException',
              code: misbehaviour.status,
            },
          }),
        );
        return;
      }
      case 'huge':
        return this.huge(res, misbehaviour.bytes, misbehaviour.declare ?? false);
      case 'slow-drip': {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"metadata-location":"');
        const timer = setInterval(() => {
          if (res.destroyed) {
            clearInterval(timer);
            this.timers.delete(timer);
            return;
          }
          res.write('x');
        }, misbehaviour.everyMs);
        this.timers.add(timer);
        return;
      }
    }
  }

  private async fetchUpstream(
    req: IncomingMessage,
    body: string,
    path = req.url ?? '/',
    method = req.method ?? 'GET',
  ): Promise<Response> {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || ['host', 'content-length', 'connection', 'content-type'].includes(name))
        continue;
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    if (method !== 'GET' && method !== 'HEAD' && req.headers['content-type'])
      headers['content-type'] = String(req.headers['content-type']);
    return fetch(`${this.upstream}${path}`, {
      method,
      headers,
      body: method === 'GET' || method === 'HEAD' ? undefined : body,
      redirect: 'manual',
    });
  }

  private async forward(req: IncomingMessage, res: ServerResponse, body: string): Promise<void> {
    const response = await this.fetchUpstream(req, body);
    const text = req.method === 'HEAD' ? '' : await response.text();
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      if (name !== 'content-length' && name !== 'transfer-encoding' && name !== 'connection')
        headers[name] = value;
    });
    res.writeHead(response.status, headers);
    res.end(text);
  }

  /** Answers with a GET of `path` upstream (the table's load result), as if it were the commit's answer. */
  private async answerWithLoad(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const response = await this.fetchUpstream(req, '', path.split('?')[0], 'GET');
    const text = await response.text();
    res.writeHead(response.status, { 'content-type': 'application/json' });
    res.end(text);
  }

  private async huge(res: ServerResponse, bytes: number, declare: boolean): Promise<void> {
    res.writeHead(200, {
      'content-type': 'application/json',
      ...(declare ? { 'content-length': String(bytes) } : {}),
    });
    const chunk = Buffer.alloc(64 * 1024, 0x20); // spaces: valid JSON whitespace, so only size can refuse it
    let sent = 0;
    while (sent < bytes && !res.destroyed) {
      const piece = bytes - sent >= chunk.length ? chunk : chunk.subarray(0, bytes - sent);
      sent += piece.length;
      this.hugeBytesSent += piece.length;
      if (!res.write(piece)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            res.off('drain', done);
            res.off('close', done);
            resolve();
          };
          res.on('drain', done);
          res.on('close', done);
        });
      }
    }
    res.end();
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function errorModel(status: number, message: string): unknown {
  return {
    error: {
      message,
      type: status >= 500 ? 'CommitStateUnknownException' : 'BadRequestException',
      code: status,
    },
  };
}

/** A server on another origin that records whatever reaches it (the target of a hostile redirect). */
export interface Recorder {
  uri: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

export async function startRecorder(): Promise<Recorder> {
  const requests: SeenRequest[] = [];
  const server = createServer((req, res) => {
    readBody(req).then((body) => {
      requests.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: { ...req.headers }, body });
      json(res, 200, { access_token: 'stolen-token', token_type: 'bearer', expires_in: 3600 });
    });
  });
  // Another port is another origin (scheme, host and port), as another host would be.
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    uri: `http://127.0.0.1:${port}`,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
