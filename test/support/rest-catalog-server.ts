/**
 * An in-process Iceberg REST catalog for tests (node:http on 127.0.0.1, a free port): config, OAuth2
 * token endpoint + bearer checks, namespaces, and tables (create, load, exists, commit, list, drop),
 * strict about bodies (see rest-request-validation.ts). Commits check requirements with
 * `checkRequirements` (409), apply updates with `applyUpdates`, and write every metadata.json as a new
 * file in a local warehouse through LocalFileIO; the pointer swap is a compare-and-set in memory.
 *
 * Faults on demand: `failNextCommit({ status, afterApply, delayMs })` queues an answer for the next
 * commit. `afterApply: true` lets the commit land and then answers with the error (as a proxy that lost
 * the server's reply would), the case a client must report as "unknown", never "failed".
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { applyUpdates, checkRequirements } from '../../functions/core/catalog/apply-updates.js';
import { CommitFailedError, ValidationError } from '../../functions/core/errors.js';
import { LocalFileIO } from '../../functions/core/io/local-file-io.js';
import { stringifyJson } from '../../functions/core/spec/json-codec.js';
import {
  newTableMetadata,
  parseTableMetadata,
  serializeTableMetadata,
} from '../../functions/core/spec/metadata.js';
import type { PartitionSpec, Schema, SortOrder, TableMetadata } from '../../functions/core/spec/types.js';
import {
  BadRequest,
  errorBody,
  parseBody,
  validateCommitBody,
  validateCreateTableBody,
} from './rest-request-validation.js';
import { type OAuthClient, TokenIssuer } from './rest-token-issuer.js';

export interface RestCatalogServerOptions {
  /** Local directory the tables live in. */
  warehouse: string;
  /** `prefix` in the config overrides. @default none */
  prefix?: string;
  /** Enables the token endpoint and requires a bearer token on every other route. */
  oauth?: OAuthClient;
  /** Static tokens accepted as bearer tokens (also turns the bearer check on). */
  bearerTokens?: string[];
  /** Advertise `idempotency-key-lifetime` and honour `Idempotency-Key`. */
  idempotency?: boolean;
  /** Returned to requests with `X-Iceberg-Access-Delegation: vended-credentials`. */
  vendedCredentials?: Record<string, string>;
  /** Put vended credentials in `storage-credentials` with this prefix instead of `config`. */
  vendAsStorageCredential?: string;
  /** `endpoints` in the config response. @default omitted (the spec's default set) */
  endpoints?: string[];
  /** Bearer tokens issued elsewhere (an external identity provider) that the server takes. */
  externalTokens?: (token: string) => boolean;
  /** More `defaults` / `overrides` in the config response. */
  configDefaults?: Record<string, string>;
  configOverrides?: Record<string, string>;
}

export interface CommitFault {
  /** The status to answer with; omitted: the normal answer (after `delayMs`). */
  status?: 409 | 500 | 502 | 503 | 504;
  /** The commit lands first, then the error is returned. */
  afterApply?: boolean;
  /** Wait this long before acting (before applying unless `afterApply`). */
  delayMs?: number;
}

export interface RecordedRequest {
  method: string;
  /** The raw request target, as sent (`/v1/ns%1Fsub/tables?x=1`). */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

interface TableEntry {
  metadataLocation: string;
  version: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class RestCatalogServer {
  readonly requests: RecordedRequest[] = [];
  readonly io = new LocalFileIO();
  private readonly namespaces = new Map<string, Record<string, string>>();
  private readonly tables = new Map<string, TableEntry>();
  private readonly faults: CommitFault[] = [];
  private readonly issuer: TokenIssuer;
  private readonly idempotent = new Map<string, { status: number; body: unknown }>();
  private server: Server | undefined;
  uri = '';

  private constructor(private readonly options: RestCatalogServerOptions) {
    this.issuer = new TokenIssuer(options.oauth, options.bearerTokens);
  }

  /** Every form posted to the token endpoint, in order. */
  get tokenRequests(): URLSearchParams[] {
    return this.issuer.requests;
  }

  static async start(options: RestCatalogServerOptions): Promise<RestCatalogServer> {
    const instance = new RestCatalogServer(options);
    const server = createServer((req, res) => {
      instance.handle(req, res).catch((error: unknown) => {
        instance.reply(res, 500, errorBody(500, 'InternalServerError', String(error)));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    instance.server = server;
    instance.uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return instance;
  }

  /** Queues a fault for the next commit (several calls: one per commit, in order). */
  failNextCommit(fault: CommitFault): void {
    this.faults.push(fault);
  }

  /** Invalidates every issued token: the next request with one gets a 401. */
  revokeTokens(): void {
    this.issuer.revokeAll();
  }

  /** Requests matching the method and a substring of the path, or all. */
  countRequests(method?: string, pathPart?: string): number {
    return this.requests.filter(
      (r) =>
        (method === undefined || r.method === method) && (pathPart === undefined || r.url.includes(pathPart)),
    ).length;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private reply(res: ServerResponse, status: number, body?: unknown): void {
    if (res.headersSent || res.destroyed) return;
    const text = body === undefined ? '' : stringifyJson(body);
    res.writeHead(status, body === undefined ? {} : { 'content-type': 'application/json' });
    res.end(text);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const target = req.url ?? '/';
    this.requests.push({ method: req.method ?? 'GET', url: target, headers: { ...req.headers }, body });
    const url = new URL(target, 'http://localhost');
    const method = req.method ?? 'GET';

    if (url.pathname === '/v1/oauth/tokens' && method === 'POST') {
      const answer = this.issuer.issue(body);
      return this.reply(res, answer.status, answer.body);
    }
    const external = this.options.externalTokens;
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (
      external ? !(bearer !== undefined && external(bearer)) : !this.issuer.accepts(req.headers.authorization)
    ) {
      return this.reply(
        res,
        401,
        errorBody(401, 'NotAuthorizedException', 'missing, expired or invalid bearer token'),
      );
    }
    if (url.pathname === '/v1/config' && method === 'GET') return this.reply(res, 200, this.configBody());

    const prefix = this.options.prefix ? `/v1/${this.options.prefix}` : '/v1';
    if (!url.pathname.startsWith(`${prefix}/`))
      return this.reply(res, 404, errorBody(404, 'NotFoundException', 'no route'));
    // Split the raw path: namespace levels are joined by %1F and must not be decoded before splitting.
    const parts = url.pathname.slice(prefix.length + 1).split('/');
    try {
      if (parts[0] !== 'namespaces') throw new RouteNotFound();
      if (parts.length === 1) return await this.namespacesRoute(method, res, body);
      const namespace = parts[1].split(/%1F/i).map(decodeURIComponent);
      if (parts.length === 2) return this.namespaceRoute(method, res, namespace);
      if (parts[2] !== 'tables') throw new RouteNotFound();
      if (parts.length === 3) return await this.tablesRoute(method, req, res, namespace, body);
      if (parts.length === 4) {
        return await this.tableRoute(method, req, res, namespace, decodeURIComponent(parts[3]), body);
      }
      throw new RouteNotFound();
    } catch (error) {
      if (error instanceof BadRequest)
        return this.reply(res, 400, errorBody(400, 'BadRequestException', error.message));
      if (error instanceof RouteNotFound)
        return this.reply(res, 404, errorBody(404, 'NotFoundException', 'no route'));
      throw error;
    }
  }

  private configBody(): unknown {
    return {
      defaults: { 'floe.test': 'default', ...this.options.configDefaults },
      overrides: {
        ...(this.options.prefix ? { prefix: this.options.prefix } : {}),
        ...this.options.configOverrides,
      },
      ...(this.options.endpoints ? { endpoints: this.options.endpoints } : {}),
      ...(this.options.idempotency ? { 'idempotency-key-lifetime': 'PT30M' } : {}),
    };
  }

  private async namespacesRoute(method: string, res: ServerResponse, body: string): Promise<void> {
    if (method !== 'POST') throw new RouteNotFound();
    const request = parseBody(body);
    if (!Array.isArray(request.namespace) || request.namespace.some((n) => typeof n !== 'string')) {
      throw new BadRequest('namespace: expected an array of strings');
    }
    const key = request.namespace.join('\u001f');
    if (this.namespaces.has(key)) {
      return this.reply(
        res,
        409,
        errorBody(409, 'AlreadyExistsException', `namespace ${key} already exists`),
      );
    }
    const properties = (request.properties ?? {}) as Record<string, string>;
    this.namespaces.set(key, properties);
    this.reply(res, 200, { namespace: request.namespace, properties });
  }

  private namespaceRoute(method: string, res: ServerResponse, namespace: string[]) {
    const properties = this.namespaces.get(namespace.join('\u001f'));
    if (!properties) {
      return this.reply(
        res,
        404,
        errorBody(404, 'NoSuchNamespaceException', `namespace ${namespace.join('.')} does not exist`),
      );
    }
    if (method === 'HEAD') return this.reply(res, 204);
    if (method === 'GET') return this.reply(res, 200, { namespace, properties });
    throw new RouteNotFound();
  }

  private async tablesRoute(
    method: string,
    req: IncomingMessage,
    res: ServerResponse,
    namespace: string[],
    body: string,
  ): Promise<void> {
    if (!this.namespaces.has(namespace.join('\u001f'))) {
      return this.reply(
        res,
        404,
        errorBody(404, 'NoSuchNamespaceException', `namespace ${namespace.join('.')} does not exist`),
      );
    }
    if (method === 'GET') {
      const prefix = `${namespace.join('\u001f')}\u0000`;
      const identifiers = [...this.tables.keys()]
        .filter((k) => k.startsWith(prefix))
        .map((k) => ({ namespace, name: k.slice(prefix.length) }));
      return this.reply(res, 200, { identifiers });
    }
    if (method !== 'POST') throw new RouteNotFound();
    const request = validateCreateTableBody(parseBody(body));
    const key = tableKey(namespace, request.name);
    if (this.tables.has(key)) {
      return this.reply(
        res,
        409,
        errorBody(409, 'AlreadyExistsException', `table ${request.name} already exists`),
      );
    }
    const location = request.location ?? path.join(this.options.warehouse, ...namespace, request.name);
    let metadata: TableMetadata;
    try {
      metadata = newTableMetadata({
        location,
        schema: request.schema as unknown as Schema,
        spec: request['partition-spec'] as PartitionSpec | undefined,
        sortOrder: request['write-order'] as SortOrder | undefined,
        properties: request.properties,
      });
    } catch (error) {
      if (error instanceof ValidationError) throw new BadRequest(error.message);
      throw error;
    }
    const metadataLocation = await this.writeMetadata(metadata, 0);
    this.tables.set(key, { metadataLocation, version: 0 });
    this.reply(res, 200, this.loadResult(req, metadataLocation, metadata));
  }

  private async tableRoute(
    method: string,
    req: IncomingMessage,
    res: ServerResponse,
    namespace: string[],
    name: string,
    body: string,
  ): Promise<void> {
    const key = tableKey(namespace, name);
    const entry = this.tables.get(key);
    const missing = () =>
      this.reply(res, 404, errorBody(404, 'NoSuchTableException', `table ${name} does not exist`));
    if (method === 'POST') return this.commit(req, res, key, body);
    if (!entry) return missing();
    if (method === 'HEAD') return this.reply(res, 204);
    if (method === 'DELETE') {
      this.tables.delete(key);
      return this.reply(res, 204);
    }
    if (method !== 'GET') throw new RouteNotFound();
    const metadata = await this.readMetadata(entry.metadataLocation);
    this.reply(res, 200, this.loadResult(req, entry.metadataLocation, metadata));
  }

  private loadResult(req: IncomingMessage, metadataLocation: string, metadata: TableMetadata): unknown {
    const vend = this.options.vendedCredentials;
    const asked = String(req.headers['x-iceberg-access-delegation'] ?? '').includes('vended-credentials');
    if (!vend || !asked) return { 'metadata-location': metadataLocation, metadata, config: {} };
    if (this.options.vendAsStorageCredential !== undefined) {
      return {
        'metadata-location': metadataLocation,
        metadata,
        config: {},
        'storage-credentials': [{ prefix: this.options.vendAsStorageCredential, config: vend }],
      };
    }
    return { 'metadata-location': metadataLocation, metadata, config: vend };
  }

  private async commit(req: IncomingMessage, res: ServerResponse, key: string, text: string): Promise<void> {
    // Faults act in front of the server (as a proxy or a crash would), before its idempotency replay.
    const fault = this.faults.shift();
    if (fault?.delayMs && !fault.afterApply) await sleep(fault.delayMs);
    if (fault?.status !== undefined && !fault.afterApply) {
      return this.reply(res, fault.status, faultBody(fault.status));
    }
    const idempotencyKey = this.options.idempotency ? req.headers['idempotency-key'] : undefined;
    if (typeof idempotencyKey === 'string') {
      const replay = this.idempotent.get(idempotencyKey);
      if (replay) return this.reply(res, replay.status, replay.body);
    }
    const outcome = await this.applyCommit(key, text);
    // Finalized answers (2xx, 4xx) are kept for replay; 5xx ones are not, as the spec says.
    if (typeof idempotencyKey === 'string' && outcome.status < 500)
      this.idempotent.set(idempotencyKey, outcome);
    if (fault?.delayMs && fault.afterApply) await sleep(fault.delayMs);
    if (fault?.status !== undefined && fault.afterApply)
      return this.reply(res, fault.status, faultBody(fault.status));
    this.reply(res, outcome.status, outcome.body);
  }

  private async applyCommit(key: string, text: string): Promise<{ status: number; body: unknown }> {
    let request: ReturnType<typeof validateCommitBody>;
    try {
      request = validateCommitBody(parseBody(text));
    } catch (error) {
      if (error instanceof BadRequest)
        return { status: 400, body: errorBody(400, 'BadRequestException', error.message) };
      throw error;
    }
    const entry = this.tables.get(key);
    if (!entry) return { status: 404, body: errorBody(404, 'NoSuchTableException', 'table does not exist') };
    if (request.identifier && tableKey(request.identifier.namespace, request.identifier.name) !== key) {
      return {
        status: 400,
        body: errorBody(400, 'BadRequestException', 'identifier does not match the path'),
      };
    }
    const base = await this.readMetadata(entry.metadataLocation);
    let next: TableMetadata;
    try {
      checkRequirements(base, request.requirements);
      next = applyUpdates(base, request.updates, { previousMetadataLocation: entry.metadataLocation });
    } catch (error) {
      if (error instanceof CommitFailedError) {
        return { status: 409, body: errorBody(409, 'CommitFailedException', error.message) };
      }
      if (error instanceof ValidationError)
        return { status: 400, body: errorBody(400, 'BadRequestException', error.message) };
      throw error;
    }
    const metadataLocation = await this.writeMetadata(next, entry.version + 1);
    // Compare-and-set: a commit that raced past this one while it was writing wins, this one fails.
    if (this.tables.get(key) !== entry) {
      return { status: 409, body: errorBody(409, 'CommitFailedException', 'the table changed concurrently') };
    }
    this.tables.set(key, { metadataLocation, version: entry.version + 1 });
    return { status: 200, body: { 'metadata-location': metadataLocation, metadata: next } };
  }

  private async writeMetadata(metadata: TableMetadata, version: number): Promise<string> {
    const file = `${String(version).padStart(5, '0')}-${randomUUID()}.metadata.json`;
    const location = path.join(metadata.location, 'metadata', file);
    await this.io.writeIfAbsent(location, new TextEncoder().encode(serializeTableMetadata(metadata)));
    return location;
  }

  private async readMetadata(location: string): Promise<TableMetadata> {
    return parseTableMetadata(new TextDecoder().decode(await this.io.read(location)));
  }
}

class RouteNotFound extends Error {}

function tableKey(namespace: string[], name: string): string {
  return `${namespace.join('\u001f')}\u0000${name}`;
}

function faultBody(status: number): unknown {
  if (status === 409) return errorBody(409, 'CommitFailedException', 'injected conflict');
  if (status === 503) return errorBody(503, 'SlowDownException', 'injected: service unavailable');
  return errorBody(status, 'CommitStateUnknownException', `injected: HTTP ${status}`);
}
