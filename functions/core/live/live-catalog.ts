/**
 * The tables `floe serve --live` hands out: each loaded from the catalog, its hotset read and written
 * as one live snapshot (live-snapshot.ts). A live version is reused while its tail is unchanged and
 * younger than the TTL; cache folders of other tails are swept once they are older than the TTL.
 */
import type { KafkaConnection } from '../kafka/kafka-client.js';
import type { Catalog, LoadedTable } from '../catalog/catalog.js';
import { formatIdentifier } from '../catalog/catalog.js';
import { describeError } from '../errors.js';
import type { TableRoute } from '../routing/routes.js';
import type { FileIO } from '../io/file-io.js';
import { LIVE_CACHE_MAX_TTL_MS } from '../io/confined-delete.js';
import { joinLocation, normalizeLocation } from '../io/location.js';
import type { TableIdentifier, TableMetadata } from '../spec/types.js';
import { defaultCacheRoot, type LiveVersion, liveCacheKey, writeLiveVersion } from './live-snapshot.js';
import { readHotset } from './read-hotset.js';

export interface LiveCatalogOptions {
  catalog: Catalog;
  kafka: KafkaConnection;
  /** The route a table's tail is mapped with. */
  routeFor: (table: LoadedTable) => Promise<TableRoute>;
  /** @default `<table location>/floe-live` */
  cacheRoot?: (table: LoadedTable) => string;
  /** @default 10 minutes; at most LIVE_CACHE_MAX_TTL_MS (orphan removal's guard) */
  ttlMs?: number;
  onWarning?: (message: string) => void;
}

interface CachedVersion {
  /** Shared by concurrent loads of the same tail, so it is written once. */
  version: Promise<LiveVersion>;
  createdMs: number;
  cacheKey: string;
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

/** Loads tables with their live snapshot on top. */
export class LiveCatalog {
  private readonly cache = new Map<string, CachedVersion>();
  private readonly ttlMs: number;

  constructor(private readonly options: LiveCatalogOptions) {
    this.ttlMs = Math.min(options.ttlMs ?? 10 * 60 * 1000, LIVE_CACHE_MAX_TTL_MS);
  }

  /**
   * @throws NoSuchTableError; LakeError (retryable) when Kafka does not answer in time; ValidationError
   *   when the table's route does not fit it; whatever writing the cache throws
   */
  async loadTable(id: TableIdentifier): Promise<{ metadataLocation: string; metadata: TableMetadata }> {
    const table = await this.options.catalog.loadTable(id);
    const route = await this.options.routeFor(table);
    const hotset = await readHotset({ table, route, kafka: this.options.kafka });
    const root = this.options.cacheRoot?.(table) ?? defaultCacheRoot(table);
    const key = `${formatIdentifier(id)}/${liveCacheKey(table, hotset)}`;
    const now = Date.now();
    let cached = this.cache.get(key);
    if (!cached || now - cached.createdMs >= this.ttlMs || !(await this.stillThere(table, cached))) {
      const version = writeLiveVersion(table, hotset, root);
      const entry: CachedVersion = { version, createdMs: now, cacheKey: key.slice(key.lastIndexOf('/') + 1) };
      this.cache.set(key, entry);
      // A failed write is not kept: the next load tries again.
      version.catch(() => {
        if (this.cache.get(key) === entry) this.cache.delete(key);
      });
      cached = entry;
    }
    const version = await cached.version;
    const keep = new Set(
      [...this.cache.entries()]
        .filter(([k, c]) => k.startsWith(`${formatIdentifier(id)}/`) && now - c.createdMs < this.ttlMs)
        .map(([, c]) => c.cacheKey),
    );
    await sweepLiveCache(table.io, root, this.ttlMs, now, keep).catch((error: unknown) =>
      this.options.onWarning?.(`sweeping the live cache ${root}: ${describeError(error)}`),
    );
    return { metadataLocation: version.metadataLocation, metadata: version.metadata };
  }

  /** Whether a cached version's files are still there (a sweep by another process may have removed them). */
  private async stillThere(table: LoadedTable, cached: CachedVersion): Promise<boolean> {
    const version = await cached.version.catch(() => undefined);
    if (!version) return false;
    return version.snapshot === undefined || (await table.io.exists(version.metadataLocation));
  }
}
