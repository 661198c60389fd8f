/**
 * An in-process Confluent Schema Registry for tests (node:http on 127.0.0.1, a free port), answering
 * the reads floe makes: `GET /schemas/ids/{id}` and `GET /subjects/{subject}/versions/{version}`,
 * with the registry's own JSON error bodies (404 + error_code 40403 / 40401 / 40402).
 *
 * - `register(...)` adds a schema (a subject version too when `subject` is given) and returns its id.
 * - Auth: `basicAuth: 'user:pass'` or `bearerToken` makes every request need it (401 otherwise).
 * - Faults: `failNext(n, status)` answers the next n requests with that status; `hangNext(n)` never
 *   answers the next n (the client's timeout must fire); `delayMs` delays every answer.
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
  const faults: Array<{ status: number } | 'hang'> = [];
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

  const server = createServer((req, res) => {
    requests.push({
      method: req.method ?? '',
      path: req.url ?? '',
      authorization: req.headers.authorization,
    });
    const fault = faults.shift();
    if (fault === 'hang') return; // never answered; closed by close()
    const act = () => {
      if (fault) send(res, fault.status, { error_code: fault.status * 100, message: 'injected fault' });
      else answer(req, res);
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
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
  return handle;
}
