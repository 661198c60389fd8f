/**
 * The routes of floe's read-only Iceberg REST catalog (`floe serve`), by the paths of the REST
 * OpenAPI spec (apache/iceberg open-api/rest-catalog-open-api.yaml): a request's method and path →
 * what it asks for. Pure, so the routing is tested without a socket.
 *
 * Read: `GET /v1/config`, `GET /v1/namespaces`, `GET|HEAD /v1/namespaces/{ns}`,
 * `GET /v1/namespaces/{ns}/tables`, `GET|HEAD /v1/namespaces/{ns}/tables/{table}`. Every other
 * operation the spec defines changes the catalog (create/drop/rename/commit, namespace properties,
 * register, transactions) and is refused. The config names no `prefix`, so clients use these paths.
 */
import type { TableIdentifier } from '../spec/types.js';
import { identifierProblem } from './identifiers.js';

export type RestRoute =
  | { kind: 'config' }
  /** The spec's OAuth2 token endpoint (client credentials); answered by serve-auth.ts. */
  | { kind: 'oauth-tokens' }
  | { kind: 'list-namespaces'; parent?: string[] }
  | { kind: 'namespace'; namespace: string[]; head: boolean }
  | { kind: 'list-tables'; namespace: string[] }
  | { kind: 'table'; id: TableIdentifier; head: boolean }
  /** A write the spec defines: refused with 403 (see restError). */
  | { kind: 'refused'; operation: string }
  | { kind: 'not-found'; message: string }
  | { kind: 'bad-request'; message: string };

/** An answer to one request. */
export interface RestAnswer {
  status: number;
  /** JSON text; absent for HEAD and 204. */
  body?: string;
  /** Extra headers (`Retry-After`, `WWW-Authenticate`, ...), lower-case names. */
  headers?: Record<string, string>;
}

/** The spec's error body. */
export interface RestErrorBody {
  error: { message: string; type: string; code: number };
}

/** The spec's `ErrorModel` for a status. Never throws. */
export function restError(code: number, type: string, message: string): RestErrorBody {
  return { error: { message, type, code } };
}

/** The spec's separator between namespace levels in a path (`%1F`, the unit separator). */
const SEPARATOR = '\u001f';

function decodeSegment(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** The namespace a path segment names, or why it names none. */
function namespaceOf(segment: string): string[] | { problem: string } {
  const decoded = decodeSegment(segment);
  if (decoded === undefined) return { problem: 'the namespace is not valid percent-encoding' };
  const levels = decoded.split(SEPARATOR);
  const problem = identifierProblem(levels);
  return problem ? { problem } : levels;
}

/** A request path as echoed in a message: cut, so a 10 kB path does not come back whole. */
function shortPath(path: string): string {
  return path.length > 200 ? `${path.slice(0, 200)}…` : path;
}

/** The write operations of the spec, by method and path shape, named as the spec's operationIds. */
function writeOperation(method: string, parts: readonly string[]): string | undefined {
  const [first, , third] = parts;
  if (method === 'POST' && parts.length === 1 && first === 'namespaces') return 'createNamespace';
  if (method === 'DELETE' && parts.length === 2 && first === 'namespaces') return 'dropNamespace';
  if (method === 'POST' && parts.length === 3 && third === 'properties') return 'updateProperties';
  if (method === 'POST' && parts.length === 3 && third === 'tables') return 'createTable';
  if (method === 'POST' && parts.length === 3 && third === 'register') return 'registerTable';
  if (method === 'POST' && parts.length === 3 && third === 'views') return 'createView';
  if (method === 'POST' && parts.length === 4 && third === 'tables') return 'updateTable';
  if (method === 'DELETE' && parts.length === 4 && third === 'tables') return 'dropTable';
  if (method === 'POST' && parts.length === 4 && third === 'views') return 'replaceView';
  if (method === 'DELETE' && parts.length === 4 && third === 'views') return 'dropView';
  if (method === 'POST' && parts.length === 2 && first === 'tables' && parts[1] === 'rename')
    return 'renameTable';
  if (method === 'POST' && parts.length === 2 && first === 'views' && parts[1] === 'rename')
    return 'renameView';
  if (method === 'POST' && parts.length === 2 && first === 'transactions' && parts[1] === 'commit')
    return 'commitTransaction';
  return undefined;
}

/**
 * Routes a request. `path` is the URL's pathname (still percent-encoded), `search` its query.
 * Never throws.
 */
export function routeRestRequest(method: string, path: string, search = ''): RestRoute {
  const m = method.toUpperCase();
  const segments = path.replace(/\/+$/, '').split('/').filter(Boolean);
  if (segments[0] !== 'v1')
    return { kind: 'not-found', message: `no such path ${shortPath(path)} (the API is under /v1)` };
  const parts = segments.slice(1);
  if (parts.length === 2 && parts[0] === 'oauth' && parts[1] === 'tokens') {
    return m === 'POST' ? { kind: 'oauth-tokens' } : { kind: 'refused', operation: `${m} /v1/oauth/tokens` };
  }
  if (parts.length === 1 && parts[0] === 'config') {
    return m === 'GET' ? { kind: 'config' } : { kind: 'refused', operation: `${m} /v1/config` };
  }
  const write = writeOperation(m, parts);
  if (write) return { kind: 'refused', operation: write };
  // Metrics reports change nothing the catalog serves; a reader may send them: refused all the same.
  if (m === 'POST' && parts.length === 5 && parts[4] === 'metrics')
    return { kind: 'refused', operation: 'reportMetrics' };
  if (m !== 'GET' && m !== 'HEAD') return { kind: 'refused', operation: `${m} ${shortPath(path)}` };
  const head = m === 'HEAD';
  if (parts[0] !== 'namespaces') return { kind: 'not-found', message: `no such path ${shortPath(path)}` };
  if (parts.length === 1) {
    const parent = new URLSearchParams(search).get('parent');
    if (parent === null || parent === '') return { kind: 'list-namespaces' };
    const levels = parent.split(SEPARATOR);
    const problem = identifierProblem(levels);
    if (problem) return { kind: 'bad-request', message: `bad parent namespace: ${problem}` };
    return { kind: 'list-namespaces', parent: levels };
  }
  const namespace = namespaceOf(parts[1]);
  if (!Array.isArray(namespace))
    return { kind: 'bad-request', message: `bad namespace: ${namespace.problem}` };
  if (parts.length === 2) return { kind: 'namespace', namespace, head };
  if (parts[2] !== 'tables') return { kind: 'not-found', message: `no such path ${shortPath(path)}` };
  if (parts.length === 3) return { kind: 'list-tables', namespace };
  if (parts.length !== 4) return { kind: 'not-found', message: `no such path ${shortPath(path)}` };
  const name = decodeSegment(parts[3]);
  if (name === undefined)
    return { kind: 'bad-request', message: 'bad table name: it is not valid percent-encoding' };
  const problem = identifierProblem(namespace, name);
  if (problem) return { kind: 'bad-request', message: `bad table name: ${problem}` };
  return { kind: 'table', id: { namespace, name }, head };
}
