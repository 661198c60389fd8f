/**
 * An in-process Confluent Schema Registry for tests (node:http on 127.0.0.1, a free port), answering
 * the reads floe makes: `GET /schemas/ids/{id}` and `GET /subjects/{subject}/versions/{version}`,
 * with the registry's own JSON error bodies (404 + error_code 40403 / 40401 / 40402).
 *
 * - `register(...)` adds a schema (a subject version too when `subject` is given) and returns its id.
 * - Auth: `basicAuth: 'user:pass'` or `bearerToken` makes every request need it (401 otherwise).
 * - Faults: `failNext(n, status)` answers the next n requests with that status; `hangNext(n)` never
 *   answers the next n (the client's timeout must fire); `delayMs` delays every answer.
 *   Hostile ones: `echoNext(n, status)` answers with a body and a `www-authenticate` header echoing the
 *   request's `Authorization` header (as some registries' 401s do); `hugeNext(n, bytes)` answers 200 with
 *   that many bytes, chunked; `dripNext(n, everyMs)` sends headers, then a byte every `everyMs`, forever.
 * - `requests` records every request (method, path, authorization), for counting calls.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RegisteredReference {
  name: string;
  subject: string;
  version: number;
}

export interface RegisterOptions {
  schema: string;
  schemaType?: 'AVRO' | 'PROTOBUF' | 'JSON';
  references?: RegisteredReference[];
  /** Also register as this subject's next version. */
  subject?: string;
  /** Use this id instead of the next free one. */
  id?: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  authorization?: string;
}

export interface SchemaRegistryServer {
  url: string;
  requests: RecordedRequest[];
  /** Requests whose path starts with `prefix`. */
  count(prefix?: string): number;
  /** @returns the schema id */
  register(options: RegisterOptions): number;
  /** The version number `register` gave the latest schema of a subject. */
  latestVersion(subject: string): number;
  failNext(n: number, status?: number): void;
  hangNext(n: number): void;
  echoNext(n: number, status: number): void;
  hugeNext(n: number, bytes: number): void;
  dripNext(n: number, everyMs: number): void;
  /** Bytes of `hugeNext` bodies written to clients. */
  hugeBytesSent: number;
  delayMs: number;
  close(): Promise<void>;
}

interface Stored {
  schema: string;
  schemaType: 'AVRO' | 'PROTOBUF' | 'JSON';
  references: RegisteredReference[];
}

export async function startSchemaRegistryServer(
  options: { basicAuth?: string; bearerToken?: string } = {},
): Promise<SchemaRegistryServer> {
  const byId = new Map<number, Stored>();
  const subjects = new Map<string, number[]>();
  const requests: RecordedRequest[] = [];
  type Fault = { status: number } | 'hang' | { echo: number } | { huge: number } | { drip: number };
  const faults: Fault[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let nextId = 1;

  const expectedAuth =
    options.basicAuth !== undefined
      ? `Basic ${Buffer.from(options.basicAuth).toString('base64')}`
      : options.bearerToken !== undefined
        ? `Bearer ${options.bearerToken}`
        : undefined;

  function send(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/vnd.schemaregistry.v1+json' });
    res.end(JSON.stringify(body));
  }

  function schemaBody(stored: Stored): Record<string, unknown> {
    // Like Confluent: schemaType is omitted for Avro, references when there are none.
    const body: Record<string, unknown> = { schema: stored.schema };
    if (stored.schemaType !== 'AVRO') body.schemaType = stored.schemaType;
    if (stored.references.length > 0) body.references = stored.references;
    return body;
  }

  function answer(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://registry');
    if (expectedAuth !== undefined && req.headers.authorization !== expectedAuth) {
      send(res, 401, { error_code: 401, message: 'Unauthorized' });
      return;
    }
    const idMatch = /^\/schemas\/ids\/(\d+)$/.exec(url.pathname);
    if (req.method === 'GET' && idMatch) {
      const stored = byId.get(Number(idMatch[1]));
      if (!stored) send(res, 404, { error_code: 40403, message: `Schema ${idMatch[1]} not found` });
      else send(res, 200, schemaBody(stored));
      return;
    }
    const versionMatch = /^\/subjects\/([^/]+)\/versions\/(\d+)$/.exec(url.pathname);
    if (req.method === 'GET' && versionMatch) {
      const subject = decodeURIComponent(versionMatch[1]);
      const versions = subjects.get(subject);
      if (!versions) {
        send(res, 404, { error_code: 40401, message: `Subject '${subject}' not found.` });
        return;
      }
      const version = Number(versionMatch[2]);
      const id = versions[version - 1];
      if (id === undefined) {
        send(res, 404, { error_code: 40402, message: `Version ${version} not found.` });
        return;
      }
      send(res, 200, { subject, version, id, ...schemaBody(byId.get(id)!) });
      return;
    }
    send(res, 404, { error_code: 404, message: 'HTTP 404 Not Found' });
  }

  function echo(req: IncomingMessage, res: ServerResponse, status: number): void {
    const authorization = String(req.headers.authorization ?? '');
    res.writeHead(status, {
      'content-type': 'application/vnd.schemaregistry.v1+json',
      'www-authenticate': `Basic realm="registry", echoed="${authorization}"`,
    });
    res.end(
      JSON.stringify({
        error_code: status * 100 + 1,
        message: `request refused; it carried Authorization: ${authorization} and headers ${JSON.stringify(req.headers)}`,
      }),
    );
  }

  async function huge(res: ServerResponse, bytes: number): Promise<void> {
    res.writeHead(200, { 'content-type': 'application/vnd.schemaregistry.v1+json' });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    while (sent < bytes && !res.destroyed) {
      sent += chunk.length;
      handle.hugeBytesSent += chunk.length;
      if (!res.write(chunk)) {
        await new Promise<void>((resolve) => {
          res.once('drain', resolve);
          res.once('close', resolve);
        });
      }
    }
    res.end();
  }

  function drip(res: ServerResponse, everyMs: number): void {
    res.writeHead(200, { 'content-type': 'application/vnd.schemaregistry.v1+json' });
    res.write('{"schema":"');
    const timer = setInterval(() => {
      if (res.destroyed) {
        clearInterval(timer);
        timers.delete(timer);
      } else res.write('x');
    }, everyMs);
    timers.add(timer);
  }

  const server = createServer((req, res) => {
    requests.push({
      method: req.method ?? '',
      path: req.url ?? '',
      authorization: req.headers.authorization,
    });
    const fault = faults.shift();
    if (fault === 'hang') return; // never answered; closed by close()
    const act = () => {
      if (fault === undefined) answer(req, res);
      else if ('status' in fault)
        send(res, fault.status, { error_code: fault.status * 100, message: 'injected fault' });
      else if ('echo' in fault) echo(req, res, fault.echo);
      else if ('huge' in fault) void huge(res, fault.huge);
      else drip(res, fault.drip);
    };
    if (handle.delayMs > 0) setTimeout(act, handle.delayMs);
    else act();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const handle: SchemaRegistryServer = {
    url: `http://127.0.0.1:${port}`,
    requests,
    delayMs: 0,
    count: (prefix = '/') => requests.filter((r) => r.path.startsWith(prefix)).length,
    register(o) {
      const id = o.id ?? nextId;
      nextId = Math.max(nextId, id + 1);
      byId.set(id, { schema: o.schema, schemaType: o.schemaType ?? 'AVRO', references: o.references ?? [] });
      if (o.subject !== undefined) {
        const versions = subjects.get(o.subject) ?? [];
        versions.push(id);
        subjects.set(o.subject, versions);
      }
      return id;
    },
    latestVersion: (subject) => subjects.get(subject)?.length ?? 0,
    failNext(n, status = 503) {
      for (let i = 0; i < n; i++) faults.push({ status });
    },
    hangNext(n) {
      for (let i = 0; i < n; i++) faults.push('hang');
    },
    echoNext(n, status) {
      for (let i = 0; i < n; i++) faults.push({ echo: status });
    },
    hugeNext(n, bytes) {
      for (let i = 0; i < n; i++) faults.push({ huge: bytes });
    },
    dripNext(n, everyMs) {
      for (let i = 0; i < n; i++) faults.push({ drip: everyMs });
    },
    hugeBytesSent: 0,
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const t of timers) clearInterval(t);
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
  return handle;
}
