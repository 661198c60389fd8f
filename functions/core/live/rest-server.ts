/**
 * A read-only Iceberg REST catalog over HTTP (`floe serve`): the routes of rest-routes.ts answered
 * from a `ServedCatalog`, in the spec's JSON (LoadTableResult, ListNamespacesResponse, ...).
 *
 * Writes are refused with 403 and the spec's ErrorModel (`ForbiddenException`): every write operation
 * of the spec declares 403 ("Forbidden: the caller lacks permission"), which is what a read-only
 * catalog means, and clients map it to an error they show as such (Iceberg Java: ForbiddenException).
 * 405 is declared by no operation of the spec, so clients would treat it as an unknown server error.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { serializeTableMetadata } from '../spec/metadata.js';
import type { TableIdentifier, TableMetadata } from '../spec/types.js';
import { type RestAnswer, type RestRoute, restError, routeRestRequest } from './rest-routes.js';
import { noTokenEndpoint, type ServeAuth } from './serve-auth.js';
import { failureAnswer } from './serve-errors.js';
import { type StopServer, trackConnections } from './server-stop.js';

export type { RestAnswer } from './rest-routes.js';

/** What the server serves. Methods throw NoSuchTableError / NoSuchNamespaceError for absent things. */
export interface ServedCatalog {
  /** Namespaces one level below `parent` (top-level ones without it). */
  listNamespaces(parent?: string[]): Promise<string[][]>;
  namespaceExists(namespace: string[]): Promise<boolean>;
  listTables(namespace: string[]): Promise<TableIdentifier[]>;
  tableExists(id: TableIdentifier): Promise<boolean>;
  /** @throws NoSuchTableError */
  loadTable(id: TableIdentifier): Promise<{ metadataLocation: string; metadata: TableMetadata }>;
}

/** The read endpoints, as the spec's `endpoints` list in `GET /v1/config` names them. */
export const SERVED_ENDPOINTS = [
  'GET /v1/{prefix}/namespaces',
  'GET /v1/{prefix}/namespaces/{namespace}',
  'HEAD /v1/{prefix}/namespaces/{namespace}',
  'GET /v1/{prefix}/namespaces/{namespace}/tables',
  'GET /v1/{prefix}/namespaces/{namespace}/tables/{table}',
  'HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}',
];

const json = (status: number, value: unknown): RestAnswer => ({ status, body: JSON.stringify(value) });

const noNamespace = (ns: string[]) =>
  json(404, restError(404, 'NoSuchNamespaceException', `namespace ${ns.join('.')} does not exist`));

/**
 * Answers one routed request. Never throws: failures are the spec's error bodies (serve-errors.ts);
 * the detail of a 500 goes to `log` only.
 */
export async function answerRoute(
  catalog: ServedCatalog,
  route: RestRoute,
  log?: (error: unknown) => void,
): Promise<RestAnswer> {
  try {
    switch (route.kind) {
      case 'oauth-tokens':
        // Answered by the server before routing reaches here when it checks credentials.
        return noTokenEndpoint();
      case 'config':
        return json(200, { defaults: {}, overrides: {}, endpoints: SERVED_ENDPOINTS });
      case 'list-namespaces': {
        if (route.parent && !(await catalog.namespaceExists(route.parent))) return noNamespace(route.parent);
        return json(200, { namespaces: await catalog.listNamespaces(route.parent) });
      }
      case 'namespace': {
        const exists = await catalog.namespaceExists(route.namespace);
        if (route.head) return { status: exists ? 204 : 404 };
        return exists
          ? json(200, { namespace: route.namespace, properties: {} })
          : noNamespace(route.namespace);
      }
      case 'list-tables': {
        if (!(await catalog.namespaceExists(route.namespace))) return noNamespace(route.namespace);
        const identifiers = await catalog.listTables(route.namespace);
        return json(200, {
          identifiers: identifiers.map((id) => ({ namespace: id.namespace, name: id.name })),
        });
      }
      case 'table': {
        if (route.head) return { status: (await catalog.tableExists(route.id)) ? 204 : 404 };
        const loaded = await catalog.loadTable(route.id);
        // Metadata has 64-bit ids: its own serializer writes them exactly.
        const body = `{"metadata-location":${JSON.stringify(loaded.metadataLocation)},"metadata":${serializeTableMetadata(loaded.metadata)},"config":{}}`;
        return { status: 200, body };
      }
      case 'refused':
        return json(
          403,
          restError(
            403,
            'ForbiddenException',
            `floe serve is a read-only catalog: ${route.operation} is refused`,
          ),
        );
      case 'bad-request':
        return json(400, restError(400, 'BadRequestException', route.message));
      case 'not-found':
        return json(404, restError(404, 'NotFoundException', route.message));
    }
  } catch (error) {
    return failureAnswer(error, log);
  }
}

export interface RestServerOptions {
  port: number;
  host: string;
  /** Errors answered with 500, with their detail (paths included): for the server's own log. */
  onError?: (error: unknown) => void;
  /** Who may read; absent: anyone who reaches the port. */
  auth?: ServeAuth;
  /** PEM certificate chain and key: the server speaks HTTPS only. */
  tls?: { cert: string | Buffer; key: string | Buffer };
}

/** The largest token request read (a form of four short fields). */
const MAX_TOKEN_REQUEST_BYTES = 16 * 1024;

/** The request's body as text, or undefined past `maxBytes` (the rest is drained, not kept). */
async function readBody(req: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size <= maxBytes) chunks.push(chunk as Buffer);
  }
  return size > maxBytes ? undefined : Buffer.concat(chunks).toString('utf8');
}

async function answerRequest(
  catalog: ServedCatalog,
  options: RestServerOptions,
  req: IncomingMessage,
  route: RestRoute,
): Promise<RestAnswer> {
  const auth = options.auth;
  if (route.kind === 'oauth-tokens') {
    const body = await readBody(req, MAX_TOKEN_REQUEST_BYTES);
    if (!auth?.issuesTokens) return noTokenEndpoint();
    if (body === undefined)
      return json(400, { error: 'invalid_request', error_description: 'the request is too large' });
    return auth.answerTokenRequest({
      contentType: req.headers['content-type'],
      authorization: req.headers.authorization,
      body,
    });
  }
  // A request body (a commit) is never read: drain it so the connection stays usable.
  req.resume();
  const refused = auth?.check(req.headers.authorization);
  if (refused) return refused;
  return answerRoute(catalog, route, options.onError);
}

async function handle(
  catalog: ServedCatalog,
  options: RestServerOptions,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const method = req.method ?? 'GET';
  const answer = await answerRequest(
    catalog,
    options,
    req,
    routeRestRequest(method, url.pathname, url.search),
  );
  const body = method === 'HEAD' || answer.status === 204 ? undefined : answer.body;
  const headers = {
    ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    ...answer.headers,
  };
  res.writeHead(answer.status, headers);
  res.end(body);
}

/** The listening server, and its stop (server-stop.ts): `server.close()` alone can wait minutes. */
export interface RestServer extends Server {
  stop: StopServer;
}

/**
 * Starts the server (HTTPS when `tls` is given); resolves once it listens.
 * @throws Error when the port cannot be bound or the certificate and key do not load
 */
export async function startRestServer(
  catalog: ServedCatalog,
  options: RestServerOptions,
): Promise<RestServer> {
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    handle(catalog, options, req, res).catch((error: unknown) => {
      options.onError?.(error);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  };
  const server: Server = options.tls
    ? createTlsServer({ cert: options.tls.cert, key: options.tls.key }, listener)
    : createServer(listener);
  const stop = trackConnections(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return Object.assign(server, { stop });
}
