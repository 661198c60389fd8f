/**
 * The tables `floe serve --live` hands out: each loaded from the catalog, its hotset read and written
 * as one live snapshot (live-snapshot.ts). A live version is reused while its tail is unchanged (the
 * same metadata file, route and watermarks) and younger than the TTL; cache folders of other tails are
 * swept once they are older than the TTL.
 */
import { createHash } from 'node:crypto';
import type { KafkaConnection } from '../kafka/kafka-client.js';
import type { Catalog, LoadedTable } from '../catalog/catalog.js';
import type { RowLocator } from '../cdc/locate-rows.js';
import { formatIdentifier } from '../catalog/catalog.js';
import { describeError } from '../errors.js';
import type { TableRoute } from '../routing/routes.js';
import type { FileIO } from '../io/file-io.js';
import { LIVE_CACHE_MAX_TTL_MS } from '../io/confined-delete.js';
import { joinLocation, normalizeLocation } from '../io/location.js';
import type { TableIdentifier, TableMetadata } from '../spec/types.js';
import { DEFAULT_READ_TIMEOUT_MS, fetchWatermarks, type PartitionWatermarks } from '../kafka/read-range.js';
import { defaultCacheRoot, type LiveVersion, writeLiveVersion } from './live-snapshot.js';
import { readHotset } from './read-hotset.js';
import { asKafkaFailure, KafkaUnavailableError } from './serve-errors.js';
import { FreshFlight, SingleFlight } from './single-flight.js';

export interface LiveCatalogOptions {
  catalog: Catalog;
  kafka: KafkaConnection;
  /** The route a table's tail is mapped with. */
  routeFor: (table: LoadedTable) => Promise<TableRoute>;
  /** @default `<table location>/floe-live` */
  cacheRoot?: (table: LoadedTable) => string;
  /** @default 10 minutes; at most LIVE_CACHE_MAX_TTL_MS (orphan removal's guard) */
  ttlMs?: number;
  /** How long reading a tail may take before the load fails (retryable). @default 30 s (read-range.ts) */
  timeoutMs?: number;
  onWarning?: (message: string) => void;
  /** Finds the cold rows a CDC table's tail replaces (for its position deletes). @default scanRowLocator */
  locator?: RowLocator;
}

interface CachedVersion {
  /** The table (formatted identifier) it is a version of. */
  table: string;
  /** Shared by concurrent loads of the same tail, so the tail is read and written once. */
  version: Promise<LiveVersion>;
  createdMs: number;
  /** The cache folder's key, once written. */
  cacheKey?: string;
}

/** Where a table's tail is: what a load reads, fixed before anything is read. */
interface TailPosition {
  table: LoadedTable;
  route: TableRoute;
  watermarks: PartitionWatermarks[];
}

/**
 * The key of what a load would serve: the table's metadata file (so its committed offsets and
 * schema), the route it is mapped with, and each partition's watermarks. Loads with the same key read
 * the same records and write the same files. Never throws.
 */
function tailKeyOf(tail: TailPosition): string {
  const route = JSON.stringify(tail.route, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  const marks = tail.watermarks.map((w) => `${w.topic}\u0000${w.partition}\u0000${w.low}\u0000${w.high}`);
  const text = JSON.stringify([tail.table.metadataLocation, route, marks]);
  return `${formatIdentifier(tail.table.identifier)}/${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
}

/**
 * Deletes the cache folders under `root` (but `keep`) whose newest file is older than `ttlMs`.
 * Returns the folders removed. Failures are left for the next sweep.
 */
export async function sweepLiveCache(
  io: FileIO,
  root: string,
  ttlMs: number,
  nowMs: number,
  keep: ReadonlySet<string>,
): Promise<string[]> {
  const prefix = `${normalizeLocation(root)}/`;
  const folders = new Map<string, { files: string[]; newest: number }>();
  for (const f of await io.list(root)) {
    const rest = normalizeLocation(f.location).slice(prefix.length);
    const key = rest.split('/')[0];
    if (!key || key === rest) continue;
    const entry = folders.get(key) ?? { files: [], newest: 0 };
    entry.files.push(f.location);
    entry.newest = Math.max(entry.newest, f.lastModifiedMs);
    folders.set(key, entry);
  }
  const removed: string[] = [];
  for (const [key, { files, newest }] of folders) {
    if (keep.has(key) || nowMs - newest < ttlMs) continue;
    await Promise.all(files.map((file) => io.delete(file).catch(() => undefined)));
    removed.push(joinLocation(root, key));
  }
  return removed;
}

/** `work`, or a KafkaUnavailableError once `ms` have passed (the work itself runs on, its outcome dropped). */
function withinTime<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new KafkaUnavailableError(`${what}: Kafka did not answer within ${ms} ms; retrying later may help`),
        ),
      ms,
    );
  });
  work.catch(() => undefined);
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/**
 * Loads tables with their live snapshot on top. Concurrent loads share work (single-flight.ts): where
 * a table's tail is (metadata, route, watermarks) is read once for every load that arrived before the
 * read started, and the tail itself is read, mapped and written once per position.
 */
export class LiveCatalog {
  private readonly cache = new Map<string, CachedVersion>();
  private readonly ttlMs: number;
  private readonly positions = new FreshFlight<string, TailPosition>();
  private readonly sweeps = new SingleFlight<string, string[]>();
  /** Kafka reads still running, those whose load gave up waiting included (withinTime). */
  private reading = 0;

  constructor(private readonly options: LiveCatalogOptions) {
    this.ttlMs = Math.min(options.ttlMs ?? 10 * 60 * 1000, LIVE_CACHE_MAX_TTL_MS);
  }

  /**
   * The Kafka reads still running. A load that gave up on a broker that does not answer leaves its
   * read to the Kafka client's own retries, which can run on for tens of seconds: a stop that finds
   * some knows the process would wait for them.
   */
  readsUnderWay(): number {
    return this.reading;
  }

  /** `read`, counted in {@link readsUnderWay} until it settles. */
  private counted<T>(read: Promise<T>): Promise<T> {
    this.reading++;
    const done = () => {
      this.reading--;
    };
    read.then(done, done);
    return read;
  }

  /**
   * @throws NoSuchTableError; KafkaUnavailableError or LakeError (retryable) when Kafka cannot be
   *   reached or does not answer in time; ValidationError when the table's route does not fit it;
   *   whatever writing the cache throws
   */
  async loadTable(id: TableIdentifier): Promise<{ metadataLocation: string; metadata: TableMetadata }> {
    const name = formatIdentifier(id);
    // Keyed by the levels themselves: formatted names are ambiguous (`a.b`+`c` and `a`+`b.c`).
    const tail = await this.positions.run(JSON.stringify([id.namespace, id.name]), () =>
      this.readPosition(id),
    );
    const key = tailKeyOf(tail);
    const now = Date.now();
    const version = await this.versionAt(key, tail, now);
    const root = this.cacheRootOf(tail.table);
    const keep = new Set(
      [...this.cache.values()]
        .filter((c) => c.table === name && now - c.createdMs < this.ttlMs && c.cacheKey !== undefined)
        .map((c) => c.cacheKey!),
    );
    await this.sweeps
      .run(root, () => sweepLiveCache(tail.table.io, root, this.ttlMs, now, keep))
      .catch((error: unknown) =>
        this.options.onWarning?.(`sweeping the live cache ${root}: ${describeError(error)}`),
      );
    return { metadataLocation: version.metadataLocation, metadata: version.metadata };
  }

  private cacheRootOf(table: LoadedTable): string {
    return this.options.cacheRoot?.(table) ?? defaultCacheRoot(table);
  }

  /** @throws as loadTable, before the tail is read */
  private async readPosition(id: TableIdentifier): Promise<TailPosition> {
    const table = await this.options.catalog.loadTable(id);
    const route = await this.options.routeFor(table);
    const what = `reading the watermarks of ${route.topics.join(', ')}`;
    // Bounded like the tail read: a stopped broker would otherwise hold the load through every one
    // of the admin client's retries.
    const watermarks = await withinTime(
      this.counted(fetchWatermarks(this.options.kafka, route.topics)),
      this.options.timeoutMs ?? DEFAULT_READ_TIMEOUT_MS,
      what,
    ).catch((error: unknown) => {
      throw asKafkaFailure(error, what);
    });
    return { table, route, watermarks };
  }

  /** The live version at `key`: cached while fresh and still on storage, else read and written once. */
  private async versionAt(key: string, tail: TailPosition, now: number): Promise<LiveVersion> {
    const cached = this.cache.get(key);
    if (cached && now - cached.createdMs < this.ttlMs && (await this.stillThere(tail.table, cached))) {
      return cached.version;
    }
    // Another load may have replaced the entry while this one checked it.
    const current = this.cache.get(key);
    if (current && current !== cached) return current.version;
    const { table, route, watermarks } = tail;
    const version = this.counted(
      readHotset({ table, route, kafka: this.options.kafka, watermarks, timeoutMs: this.options.timeoutMs }),
    )
      .catch((error: unknown) => {
        throw asKafkaFailure(error, `reading the tail of ${formatIdentifier(table.identifier)}`);
      })
      .then((hotset) =>
        writeLiveVersion(table, hotset, this.cacheRootOf(table), { locator: this.options.locator }),
      );
    const entry: CachedVersion = { table: formatIdentifier(table.identifier), version, createdMs: now };
    this.cache.set(key, entry);
    version.then(
      (v) => {
        entry.cacheKey = v.cacheKey;
      },
      // A failed read or write is not kept: the next load tries again.
      () => {
        if (this.cache.get(key) === entry) this.cache.delete(key);
      },
    );
    this.forgetStale(now);
    return version;
  }

  /** Drops entries past their TTL, so the map does not grow with every tail ever served. */
  private forgetStale(now: number): void {
    for (const [key, entry] of this.cache) {
      if (now - entry.createdMs >= this.ttlMs) this.cache.delete(key);
    }
  }

  /** Whether a cached version's files are still there (a sweep by another process may have removed them). */
  private async stillThere(table: LoadedTable, cached: CachedVersion): Promise<boolean> {
    const version = await cached.version.catch(() => undefined);
    if (!version) return false;
    return version.snapshot === undefined || (await table.io.exists(version.metadataLocation));
  }
}
