/**
 * Request counters wrapped around the three things a commit talks to: the FileIO (per call and per
 * kind of object), the catalog, and the lock — plus SDK middleware that counts the HTTP requests the
 * S3 and DynamoDB clients actually send (retries included).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type { S3TablesClient } from '@aws-sdk/client-s3tables';
import type { Catalog, CreateTableRequest, LoadedTable } from '../../functions/core/catalog/catalog.js';
import type { TableRequirement, TableUpdate } from '../../functions/core/catalog/requirements-updates.js';
import type { FileIO } from '../../functions/core/io/file-io.js';
import type { CommitLock, LockLease } from '../../functions/core/lock/commit-lock.js';
import type { TableIdentifier } from '../../functions/core/spec/types.js';

/** A multiset of names, e.g. `write data`, `read metadata.json`. */
export class Tally {
  readonly counts = new Map<string, number>();

  add(name: string, n = 1): void {
    this.counts.set(name, (this.counts.get(name) ?? 0) + n);
  }

  get total(): number {
    let sum = 0;
    for (const n of this.counts.values()) sum += n;
    return sum;
  }

  clear(): void {
    this.counts.clear();
  }

  toObject(): Record<string, number> {
    return Object.fromEntries([...this.counts].sort(([a], [b]) => (a < b ? -1 : 1)));
  }
}

/** What a location holds, from floe's and the embedded catalog's naming. */
export function kindOf(location: string): string {
  if (location.endsWith('.parquet')) return 'data';
  if (location.endsWith('.metadata.json')) return 'metadata.json';
  if (location.endsWith('version-hint.text')) return 'version-hint';
  if (/\/snap-[^/]*\.avro$/.test(location)) return 'manifest-list';
  if (location.endsWith('.avro')) return 'manifest';
  return 'other';
}

/** A FileIO counting every call as `<method> <kind>`. */
export function countingFileIO(inner: FileIO, tally: Tally): FileIO {
  const counted =
    <A extends unknown[], R>(method: string, call: (location: string, ...rest: A) => R) =>
    (location: string, ...rest: A): R => {
      tally.add(method === 'list' ? 'list' : `${method} ${kindOf(location)}`);
      return call(location, ...rest);
    };
  return {
    read: counted('read', (l) => inner.read(l)),
    readRange: counted('readRange', (l, offset: number, length: number) =>
      inner.readRange(l, offset, length),
    ),
    write: counted('write', (l, data: Uint8Array) => inner.write(l, data)),
    writeIfAbsent: counted('writeIfAbsent', (l, data: Uint8Array) => inner.writeIfAbsent(l, data)),
    stat: counted('stat', (l) => inner.stat(l)),
    exists: counted('exists', (l) => inner.exists(l)),
    delete: counted('delete', (l) => inner.delete(l)),
    list: counted('list', (prefix) => inner.list(prefix)),
  };
}

/** A catalog counting its calls (`catalog.loadTable`, `catalog.commitTable`, ...). */
export function countingCatalog(inner: Catalog, tally: Tally): Catalog {
  const counted =
    <A extends unknown[], R>(name: string, call: (...args: A) => R) =>
    (...args: A): R => {
      tally.add(`catalog.${name}`);
      return call(...args);
    };
  return {
    name: inner.name,
    loadTable: counted('loadTable', (id: TableIdentifier) => inner.loadTable(id)),
    tableExists: counted('tableExists', (id: TableIdentifier) => inner.tableExists(id)),
    createTable: counted('createTable', (id: TableIdentifier, request: CreateTableRequest) =>
      inner.createTable(id, request),
    ),
    commitTable: counted(
      'commitTable',
      (id: TableIdentifier, requirements: TableRequirement[], updates: TableUpdate[], base?: LoadedTable) =>
        inner.commitTable(id, requirements, updates, base),
    ),
    listTables: counted('listTables', (namespace: string[]) => inner.listTables(namespace)),
    ...(inner.isCurrent
      ? { isCurrent: counted('isCurrent', (table: LoadedTable) => inner.isCurrent!(table)) }
      : {}),
  };
}

/** Counts acquisitions and releases, and the time spent waiting in acquire. */
export class CountingLock implements CommitLock {
  acquireWaitMs = 0;

  constructor(
    private readonly inner: CommitLock,
    private readonly tally: Tally,
  ) {}

  async acquire(key: string, options?: { timeoutMs?: number }): Promise<LockLease> {
    this.tally.add('lock.acquire');
    const t0 = performance.now();
    const lease = await this.inner.acquire(key, options);
    this.acquireWaitMs += performance.now() - t0;
    const tally = this.tally;
    return {
      key: lease.key,
      owner: lease.owner,
      fencingVersion: lease.fencingVersion,
      lastCommit: lease.lastCommit,
      release(current?: string) {
        tally.add('lock.release');
        return lease.release(current);
      },
    };
  }
}

interface MiddlewareStackLike {
  add: S3Client['middlewareStack']['add'];
}

/**
 * Counts every HTTP request a client sends as `<prefix><Command>` (at the finalize step, so SDK
 * retries count), and `<prefix><Command> failed` for error answers.
 */
export function countSdkRequests(
  client: S3Client | DynamoDBClient | S3TablesClient,
  prefix: string,
  tally: Tally,
  classify: (commandName: string, input: unknown) => string = (name) => name,
): void {
  const stack = client.middlewareStack as unknown as MiddlewareStackLike;
  stack.add(
    (next, context) => async (args) => {
      const name = `${prefix}${classify(String(context.commandName ?? 'unknown').replace(/Command$/, ''), args.input)}`;
      tally.add(name);
      try {
        return await next(args);
      } catch (error) {
        tally.add(`${name} failed`);
        throw error;
      }
    },
    { step: 'finalizeRequest', name: `floeBenchCount${prefix}`, override: true },
  );
}

/** Names the lock's DynamoDB UpdateItem requests by what they do. */
export function classifyLockRequest(commandName: string, input: unknown): string {
  if (commandName !== 'UpdateItem') return commandName;
  const expression = String((input as { UpdateExpression?: string }).UpdateExpression ?? '');
  if (expression.includes(' ADD ')) return 'UpdateItem(acquire)';
  if (expression.includes(' REMOVE ')) return 'UpdateItem(release)';
  return 'UpdateItem(heartbeat)';
}
