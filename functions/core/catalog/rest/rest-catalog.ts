/**
 * An Iceberg REST catalog client (open-api/rest-catalog-open-api.yaml in apache/iceberg), for Polaris,
 * Lakekeeper, Nessie, Gravitino, and the REST endpoints of Glue and S3 Tables.
 *
 * COMMIT POINT: the server's handling of `POST /v1/{prefix}/namespaces/{ns}/tables/{table}` with
 * `{ identifier, requirements, updates }`, sent as floe builds them. 200 → landed; 409 → did not land
 * (CommitFailedError); 5xx, timeouts and network failures after sending → may have landed
 * (CommitStateUnknownError, see rest-errors.ts for every status). When the server supports
 * `Idempotency-Key` (its config advertises `idempotency-key-lifetime`), an unknown outcome is first retried
 * with the same key, which the server answers without acting twice; a refusal after such a retry is still
 * "unknown", never "failed", since the first try may be what the retry collided with.
 * A 200 is not taken on trust either: the commit loop checks that the answer shows the change
 * (catalog/verify-commit-response.ts), and a load whose `table-uuid` differs from the one this client saw
 * for that table before is refused once (see `checkIdentity`).
 */
import { CommitFailedError, CommitStateUnknownError, describeError, LakeError } from '../../errors.js';
import { ResponseTooLargeError } from '../../io/http-body.js';
import { stringifyJson } from '../../spec/json-codec.js';
import { parseTableMetadata } from '../../spec/metadata.js';
import type { TableIdentifier, TableMetadata } from '../../spec/types.js';
import type { Catalog, CreateTableRequest, LoadedTable } from '../catalog.js';
import { formatIdentifier } from '../catalog.js';
import type { TableRequirement, TableUpdate } from '../requirements-updates.js';
import { newIdempotencyKey } from './idempotency-key.js';
import {
  buildServerConfig,
  maxResponseBytesOf,
  namespacePath,
  parseJsonObject,
  RAISE_RESPONSE_LIMIT,
  type RestCatalogOptions,
  type RestServerConfig,
  stringMap,
} from './rest-config.js';
import {
  mapCommitStatus,
  mapStatus,
  parseErrorBody,
  RestCatalogError,
  RestTransportError,
} from './rest-errors.js';
import { type RestCallOptions, RestHttpClient, type RestResponse } from './rest-http.js';
import { RestSignIn } from './rest-signin.js';
import { type StorageCredential, TableFileIOs } from './table-file-io.js';

const TABLE_HEAD = 'HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}';
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class RestCatalog implements Catalog {
  readonly name: string;
  readonly http: RestHttpClient;
  private configPromise: Promise<RestServerConfig> | undefined;
  private readonly tableIOs: TableFileIOs;
  private readonly signIn: RestSignIn;
  /** The `table-uuid` each table had when this client last loaded or created it. */
  private readonly uuids = new Map<string, string>();

  constructor(private readonly options: RestCatalogOptions) {
    this.name = options.name ?? 'rest';
    this.tableIOs = new TableFileIOs({ io: options.io, s3: options.s3 });
    const uri = options.uri.replace(/\/+$/, '');
    this.options = { ...options, uri };
    this.signIn = new RestSignIn(this.options);
    this.http = new RestHttpClient({
      auth: this.signIn.initial,
      timeoutMs: options.timeoutMs ?? 30_000,
      maxResponseBytes: maxResponseBytesOf(options),
      raiseLimitWith: RAISE_RESPONSE_LIMIT,
      headers: options.headers,
    });
  }

  /** `GET /v1/config` once: defaults, then client properties, then overrides (the spec's order). */
  config(): Promise<RestServerConfig> {
    this.configPromise ??= this.loadConfig().catch((error: unknown) => {
      this.configPromise = undefined; // a failed config call is retried by the next operation
      throw error;
    });
    return this.configPromise;
  }

  private async loadConfig(): Promise<RestServerConfig> {
    const url = new URL(`${this.options.uri}/v1/config`);
    if (this.options.warehouse) url.searchParams.set('warehouse', this.options.warehouse);
    const response = await this.call({ method: 'GET', url }, 'reading the catalog config', 'other');
    const config = buildServerConfig(parseJsonObject(response, 'GET /v1/config'), this.options);
    const auth = this.signIn.afterConfig(config.properties);
    if (auth) this.http.useAuth(auth);
    return config;
  }

  /** The server-merged catalog properties (after `GET /v1/config`). */
  async properties(): Promise<Record<string, string>> {
    return (await this.config()).properties;
  }

  private async tableUrl(id: TableIdentifier): Promise<URL> {
    const config = await this.config();
    return new URL(`${namespacePath(config, id.namespace)}/tables/${encodeURIComponent(id.name)}`);
  }

  /** Sends a non-commit call; non-2xx answers become errors (see `mapStatus`), except those in `accept`. */
  private async call(
    call: RestCallOptions,
    what: string,
    kind: 'table' | 'create-table' | 'other',
    accept: number[] = [],
  ): Promise<RestResponse> {
    const retryable = call.method === 'GET' || call.method === 'HEAD';
    for (let attempt = 0; ; attempt++) {
      let response: RestResponse;
      try {
        response = await this.http.send(call);
      } catch (error) {
        if (retryable && attempt < 2 && error instanceof RestTransportError) {
          await sleep(100 * 2 ** attempt);
          continue;
        }
        throw error;
      }
      if ((response.status >= 200 && response.status < 300) || accept.includes(response.status))
        return response;
      if (retryable && attempt < 2 && [429, 502, 503, 504].includes(response.status)) {
        await sleep(100 * 2 ** attempt);
        continue;
      }
      throw mapStatus(what, response.status, parseErrorBody(response.status, response.text), kind);
    }
  }

  private async mutationHeaders(extra: Record<string, string> = {}): Promise<Record<string, string>> {
    return (await this.config()).idempotency ? { 'idempotency-key': newIdempotencyKey(), ...extra } : extra;
  }

  private delegationHeaders(): Record<string, string> {
    return this.options.vendedCredentials === false
      ? {}
      : { 'x-iceberg-access-delegation': 'vended-credentials' };
  }

  /** Creates a namespace; one that exists already is fine. @throws RestCatalogError; TransientIOError */
  async createNamespace(namespace: string[], properties: Record<string, string> = {}): Promise<void> {
    const config = await this.config();
    await this.call(
      {
        method: 'POST',
        url: new URL(`${config.base}/namespaces`),
        body: { namespace, properties },
        headers: await this.mutationHeaders(),
      },
      `creating namespace ${namespace.join('.')}`,
      'other',
      [409],
    );
  }

  /** @throws RestCatalogError (status 404) when absent */
  async loadNamespace(
    namespace: string[],
  ): Promise<{ namespace: string[]; properties: Record<string, string> }> {
    const url = new URL(namespacePath(await this.config(), namespace));
    const body = parseJsonObject(
      await this.call({ method: 'GET', url }, `loading namespace ${namespace.join('.')}`, 'other'),
      'load namespace',
    );
    return {
      namespace: Array.isArray(body.namespace) ? body.namespace.map(String) : namespace,
      properties: stringMap(body.properties),
    };
  }

  async namespaceExists(namespace: string[]): Promise<boolean> {
    const url = new URL(namespacePath(await this.config(), namespace));
    const response = await this.call(
      { method: 'HEAD', url },
      `checking namespace ${namespace.join('.')}`,
      'other',
      [404],
    );
    return response.status !== 404;
  }

  async tableExists(id: TableIdentifier): Promise<boolean> {
    const config = await this.config();
    const url = await this.tableUrl(id);
    // Servers that list their endpoints without HEAD get a GET instead.
    const method = config.endpoints && !config.endpoints.has(TABLE_HEAD) ? 'GET' : 'HEAD';
    const response = await this.call({ method, url }, `checking ${formatIdentifier(id)}`, 'table', [404]);
    return response.status !== 404;
  }

  /** @throws NoSuchTableError; TransientIOError; RestCatalogError */
  async loadTable(id: TableIdentifier): Promise<LoadedTable> {
    const url = await this.tableUrl(id);
    url.searchParams.set('snapshots', 'all');
    const response = await this.call(
      { method: 'GET', url, headers: this.delegationHeaders() },
      `loading ${formatIdentifier(id)}`,
      'table',
    );
    return this.checkIdentity(
      this.toLoadedTable(id, parseJsonObject(response, `loading ${formatIdentifier(id)}`)),
    );
  }

  /**
   * A load must answer with the table asked for. The only identity a client can check is `table-uuid`: one
   * that differs from what this client saw for the same name before is another table (a hostile or broken
   * server), or the table was dropped and recreated. Either way the answer is refused once, loudly (offsets
   * read from another table's history would make records look committed); the new uuid is then remembered,
   * so a table that really was recreated is accepted from the next load on.
   * @throws LakeError (retryable) when the uuid changed
   */
  private checkIdentity(table: LoadedTable): LoadedTable {
    const key = formatIdentifier(table.identifier);
    const seen = this.uuids.get(key);
    const uuid = table.metadata['table-uuid'];
    this.uuids.set(key, uuid);
    if (seen !== undefined && seen !== uuid) {
      throw new LakeError(
        `loading ${key}: the catalog answered with table-uuid ${uuid}, but ${key} had table-uuid ${seen} when last loaded; refusing it once (another table's metadata, or the table was dropped and recreated: if so, the next load accepts it)`,
        { retryable: true },
      );
    }
    return table;
  }

  /**
   * Creates the table (`stage-create: false`), creating its namespace first when the server says it is
   * missing. @throws TableAlreadyExistsError; RestCatalogError (400 for a schema the server refuses)
   */
  async createTable(id: TableIdentifier, request: CreateTableRequest): Promise<LoadedTable> {
    const body = {
      name: id.name,
      ...(request.location === undefined ? {} : { location: request.location }),
      schema: request.schema,
      ...(request.partitionSpec === undefined ? {} : { 'partition-spec': request.partitionSpec }),
      ...(request.sortOrder === undefined ? {} : { 'write-order': request.sortOrder }),
      properties: request.properties ?? {},
      'stage-create': false,
    };
    const url = new URL(`${namespacePath(await this.config(), id.namespace)}/tables`);
    const what = `creating ${formatIdentifier(id)}`;
    const send = async () =>
      this.call(
        { method: 'POST', url, body, headers: await this.mutationHeaders(this.delegationHeaders()) },
        what,
        'create-table',
        [404],
      );
    let response = await send();
    if (response.status === 404) {
      await this.createNamespace(id.namespace);
      response = await send();
      if (response.status === 404) throw mapStatus(what, 404, parseErrorBody(404, response.text), 'other');
    }
    const created = this.toLoadedTable(id, parseJsonObject(response, what));
    this.uuids.set(formatIdentifier(id), created.metadata['table-uuid']);
    return created;
  }

  /**
   * Sends requirements and updates as they are; see the module comment for the outcomes.
   * @throws CommitFailedError; CommitStateUnknownError; NoSuchTableError; RestCatalogError (400: the
   * server refused the updates or requirements)
   */
  async commitTable(
    id: TableIdentifier,
    requirements: TableRequirement[],
    updates: TableUpdate[],
  ): Promise<LoadedTable> {
    const config = await this.config();
    const url = await this.tableUrl(id);
    const what = `committing to ${formatIdentifier(id)}`;
    // One key for every resend of this commit attempt: the server acts on it at most once.
    const key = config.idempotency ? newIdempotencyKey() : undefined;
    const maxResends = key ? (this.options.commitRetries ?? 2) : 0;
    const call: RestCallOptions = {
      method: 'POST',
      url,
      body: { identifier: { namespace: id.namespace, name: id.name }, requirements, updates },
      headers: key ? { 'idempotency-key': key } : {},
    };
    let uncertain: LakeError | undefined;
    for (let resend = 0; ; resend++) {
      let outcome: LakeError;
      try {
        const response = await this.http.send(call);
        if (response.status >= 200 && response.status < 300) {
          try {
            return await this.toLoadedTable(id, parseJsonObject(response, what));
          } catch (error) {
            // The server accepted the commit; only its answer is unreadable: the commit landed.
            throw new CommitStateUnknownError(
              `${what}: the commit was accepted but its response cannot be read`,
              {
                cause: error,
              },
            );
          }
        }
        outcome = mapCommitStatus(
          what,
          response.status,
          parseErrorBody(response.status, response.text),
          !!uncertain,
        );
      } catch (error) {
        if (error instanceof ResponseTooLargeError) {
          // An answer came, too big to read: whatever it said, the commit may have landed.
          outcome = new CommitStateUnknownError(`${what}: ${error.message}`, { cause: error });
        } else {
          // A resend that could not go (no token, a refused redirect) leaves the first send's outcome open.
          const resendFailed = `${uncertain?.message}; the resend failed: ${describeError(error)}`;
          if (uncertain && !(error instanceof RestTransportError))
            throw new CommitStateUnknownError(resendFailed, { cause: error });
          if (!(error instanceof RestTransportError)) throw error;
          if (!error.sent && !uncertain) {
            throw new CommitFailedError(`${what}: the request never reached the server: ${error.message}`, {
              cause: error,
            });
          }
          outcome = new CommitStateUnknownError(`${what}: ${error.message}`, { cause: error });
        }
      }
      if (!(outcome instanceof CommitStateUnknownError) || resend >= maxResends) throw outcome;
      uncertain = outcome;
      await sleep(200 * 2 ** resend);
    }
  }

  /** @throws RestCatalogError; TransientIOError */
  async listTables(namespace: string[]): Promise<TableIdentifier[]> {
    const base = `${namespacePath(await this.config(), namespace)}/tables`;
    const out: TableIdentifier[] = [];
    let pageToken: string | undefined;
    do {
      const url = new URL(base);
      if (pageToken !== undefined) url.searchParams.set('pageToken', pageToken);
      const body = parseJsonObject(
        await this.call({ method: 'GET', url }, `listing ${namespace.join('.')}`, 'other'),
        'list tables',
      );
      for (const item of Array.isArray(body.identifiers) ? body.identifiers : []) {
        const ident = item as { namespace?: unknown; name?: unknown };
        if (typeof ident.name === 'string') {
          out.push({
            namespace: Array.isArray(ident.namespace) ? ident.namespace.map(String) : namespace,
            name: ident.name,
          });
        }
      }
      pageToken = typeof body['next-page-token'] === 'string' ? body['next-page-token'] : undefined;
    } while (pageToken);
    return out;
  }

  /** Drops the table from the catalog (files are left alone). @throws NoSuchTableError */
  async dropTable(id: TableIdentifier): Promise<void> {
    const url = await this.tableUrl(id);
    url.searchParams.set('purgeRequested', 'false');
    await this.call(
      { method: 'DELETE', url, headers: await this.mutationHeaders() },
      `dropping ${formatIdentifier(id)}`,
      'table',
    );
    this.tableIOs.forget(formatIdentifier(id));
    this.uuids.delete(formatIdentifier(id)); // a table created under this name next is a new one
  }

  /** A LoadTableResult or CommitTableResponse → LoadedTable; commit responses reuse the table's last FileIO. */
  private toLoadedTable(id: TableIdentifier, body: Record<string, unknown>): LoadedTable {
    const location = body['metadata-location'];
    if (typeof location !== 'string' || location.length === 0) {
      throw new LakeError(`${formatIdentifier(id)}: the server returned no metadata-location`);
    }
    const metadata: TableMetadata = parseTableMetadata(stringifyJson(body.metadata ?? null));
    const key = formatIdentifier(id);
    const loadResult = body.config !== undefined || body['storage-credentials'] !== undefined;
    let io = loadResult ? undefined : this.tableIOs.get(key);
    if (!io) {
      const credentials = Array.isArray(body['storage-credentials'])
        ? (body['storage-credentials'] as unknown[]).flatMap((c): StorageCredential[] => {
            const item = c as { prefix?: unknown; config?: unknown };
            return typeof item.prefix === 'string'
              ? [{ prefix: item.prefix, config: stringMap(item.config) }]
              : [];
          })
        : [];
      io = this.tableIOs.resolve(key, metadata.location, stringMap(body.config), credentials);
    }
    return { identifier: id, metadata, metadataLocation: location, io };
  }
}

export { RestCatalogError, type RestCatalogOptions };
