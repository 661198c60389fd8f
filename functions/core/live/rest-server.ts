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
import { describeError, LakeError, NoSuchTableError, ValidationError } from '../errors.js';
import { serializeTableMetadata } from '../spec/metadata.js';
import type { TableIdentifier, TableMetadata } from '../spec/types.js';
import { type RestRoute, restError, routeRestRequest } from './rest-routes.js';

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

export interface RestAnswer {
  status: number;
  /** JSON text; absent for HEAD and 204. */
  body?: string;
}

const json = (status: number, value: unknown): RestAnswer => ({ status, body: JSON.stringify(value) });

function failure(error: unknown): RestAnswer {
  if (error instanceof NoSuchTableError)
    return json(404, restError(404, 'NoSuchTableException', error.message));
  if (error instanceof ValidationError)
    return json(400, restError(400, 'BadRequestException', error.message));
  if (error instanceof LakeError && error.retryable) {
    return json(503, restError(503, 'ServiceUnavailableException', `${error.message} (retrying may help)`));
  }
  return json(500, restError(500, 'InternalServerError', describeError(error)));
}

const noNamespace = (ns: string[]) =>
  json(404, restError(404, 'NoSuchNamespaceException', `namespace ${ns.join('.')} does not exist`));

/** Answers one routed request. Never throws: failures are the spec's error bodies. */
export async function answerRoute(catalog: ServedCatalog, route: RestRoute): Promise<RestAnswer> {
  try {
    switch (route.kind) {
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
    return failure(error);
  }
}

async function handle(catalog: ServedCatalog, req: IncomingMessage, res: ServerResponse): Promise<void> {
  // A request body (a commit) is never read: drain it so the connection stays usable.
  req.resume();
  const url = new URL(req.url ?? '/', 'http://localhost');
  const method = req.method ?? 'GET';
  const answer = await answerRoute(catalog, routeRestRequest(method, url.pathname, url.search));
  const body = method === 'HEAD' || answer.status === 204 ? undefined : answer.body;
  res.writeHead(answer.status, body === undefined ? {} : { 'content-type': 'application/json' });
  res.end(body);
}

/** Starts the server; resolves once it listens. @throws Error when the port cannot be bound */
export async function startRestServer(
  catalog: ServedCatalog,
  options: { port: number; host: string; onError?: (error: unknown) => void },
): Promise<Server> {
  const server = createServer((req, res) => {
    handle(catalog, req, res).catch((error: unknown) => {
      options.onError?.(error);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}
