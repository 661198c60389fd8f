/**
 * The views of whole key indexes kept in the process across batches (a warm Lambda container, a
 * `floe run` process), so a lookup reads from storage only what the index gained since the view was
 * made. The index table stays the truth: a view is a cache of one index snapshot, keyed by the index
 * table's uuid, that snapshot's id and the main table's uuid the index covers.
 *
 * The index is an append-only log, so a view at snapshot V becomes the view of a newer snapshot N by
 * folding in the rows of the data files the `append` snapshots between V and N added (another writer's
 * catch-ups: only their files are read). Anything else between them — a `replace` (the index compacted
 * or rebuilt), V no longer an ancestor of N, another uuid — drops the view and the index is read whole.
 * This process's own commits fold their entries in as they land (noteAppended, noteReplaced), so the
 * next batch reads nothing of the index at all.
 *
 * Memory is bounded: the views together hold at most `maxBytes` (by KeyView.bytes); an index whose view
 * alone would not fit is not kept, and its lookups read the index as without a view (readIndexView).
 */
import { getHeapStatistics } from 'node:v8';
import type { LoadedTable } from '../catalog/catalog.js';
import { ancestors, currentSnapshot } from '../spec/metadata.js';
import type { Snapshot } from '../spec/types.js';
import { readSnapshotManifests } from '../table/snapshot-manifests.js';
import { columnChunk, type EntryColumns, readEntryColumns } from './index-columns.js';
import type { IndexEntry } from './index-entries.js';
import { readCoverage } from './index-table.js';
import { KeyView, type RowChunk } from './key-view.js';

/** Past this many index snapshots since the view, reading the index whole is the simpler read. */
const MAX_WALK = 1_000;
/** Index data files read at once. */
const READ_AHEAD = 4;
/**
 * The share of V8's heap limit the views may hold: a 1024 MB Lambda (old space 922 MB) keeps ~370 MB,
 * ~9M long keys; a batch's own peak (~210 MB RSS for 10,000 records) fits beside it.
 */
const VIEW_HEAP_SHARE = 0.4;
/** The most keys one view holds (its slot numbers and hash table stay far within typed arrays' limits). */
const MAX_KEYS = 100_000_000;

interface Cached {
  mainUuid: string;
  snapshotId: bigint;
  /** The main snapshot the index snapshot covers (its summary's marker). */
  covers: bigint | undefined;
  view: KeyView;
}

/** What the cache holds, for the bench and `floe index status`. */
export interface ViewCacheStats {
  views: number;
  keys: number;
  bytes: number;
  /** Index uuids whose view was too large to keep. */
  unkept: number;
}

/** The index data files `snapshots` (all appends) added, oldest first. @throws as readSnapshotManifests */
async function addedFiles(index: LoadedTable, snapshots: readonly Snapshot[]): Promise<string[]> {
  const out: string[] = [];
  for (const snapshot of snapshots) {
    const id = snapshot['snapshot-id'];
    const own = await readSnapshotManifests(index.io, snapshot, (m) => m.added_snapshot_id === id);
    for (const { entries } of own)
      for (const e of entries)
        if (e.status === 1 && e.snapshot_id === id && e.data_file.content === 0)
          out.push(e.data_file.file_path);
  }
  return out;
}

/** Every live data file of the index's current snapshot. @throws as readSnapshotManifests */
async function liveFiles(index: LoadedTable, snapshot: Snapshot): Promise<string[]> {
  const manifests = await readSnapshotManifests(index.io, snapshot);
  return manifests.flatMap((m) =>
    m.entries.filter((e) => e.status !== 2 && e.data_file.content === 0).map((e) => e.data_file.file_path),
  );
}

/**
 * The entries of `paths`, one chunk a file, read a few files ahead: straight from the files' columns,
 * as numbers and one reused row object (index-columns.ts). @throws as readDataFile
 */
async function* entriesOf(index: LoadedTable, paths: readonly string[]): AsyncGenerator<RowChunk> {
  const reads: Promise<EntryColumns[]>[] = [];
  const start = (i: number) => {
    if (i < paths.length) reads[i] = readEntryColumns(index.io, paths[i]!);
  };
  for (let i = 0; i < Math.min(READ_AHEAD, paths.length); i++) start(i);
  for (let i = 0; i < paths.length; i++) {
    const batches = await reads[i]!;
    delete reads[i];
    start(i + READ_AHEAD);
    yield columnChunk(batches);
  }
}

export class IndexViewCache {
  private readonly views = new Map<string, Cached>();
  private readonly unkept = new Set<string>();
  private readonly locks = new Map<string, Promise<unknown>>();
  readonly maxBytes: number;

  /** `maxBytes`: the most all views hold together. @default VIEW_HEAP_SHARE of V8's heap limit */
  constructor(options: { maxBytes?: number } = {}) {
    this.maxBytes = options.maxBytes ?? Math.floor(getHeapStatistics().heap_size_limit * VIEW_HEAP_SHARE);
  }

  /** What the cache holds. Never throws. */
  stats(): ViewCacheStats {
    let keys = 0;
    let bytes = 0;
    for (const c of this.views.values()) {
      keys += c.view.size;
      bytes += c.view.bytes;
    }
    return { views: this.views.size, keys, bytes, unkept: this.unkept.size };
  }

  /** Drops every view (tests, the bench's cold figures). Never throws. */
  clear(): void {
    this.views.clear();
    this.unkept.clear();
  }

  /**
   * The view of `index`'s current snapshot: the kept one, grown by the files appended since, or the
   * index read whole; undefined when the index is too large to keep a view of (read it by keys then).
   * @throws NotFoundError / TransientIOError / ValidationError from reading the index
   */
  view(index: LoadedTable): Promise<KeyView | undefined> {
    return this.locked(index.metadata['table-uuid'], () => this.viewUnlocked(index));
  }

  /**
   * A kept view of an index snapshot that covers the main table `mainUuid` at `mainSnapshotId` exactly:
   * the facts of every main snapshot up to that one, all a lookup on it needs, whatever the index
   * did since (nothing is read). Never throws.
   */
  async covering(mainUuid: string, mainSnapshotId: bigint): Promise<KeyView | undefined> {
    const matches = (c: Cached | undefined) => c?.mainUuid === mainUuid && c.covers === mainSnapshotId;
    const uuid = [...this.views].find(([, c]) => matches(c))?.[0];
    if (uuid === undefined) return undefined;
    return this.locked(uuid, async () => {
      const cached = this.views.get(uuid);
      return matches(cached) ? this.keep(uuid, cached!) : undefined;
    });
  }

  /**
   * The kept view of `index`'s current snapshot, when there is one (nothing is read). Never throws.
   */
  held(index: LoadedTable): Promise<KeyView | undefined> {
    const uuid = index.metadata['table-uuid'];
    return this.locked(uuid, async () => {
      const cached = this.views.get(uuid);
      const id = currentSnapshot(index.metadata)?.['snapshot-id'];
      const fresh = cached?.snapshotId === id && cached?.mainUuid === readCoverage(index)?.tableUuid;
      return fresh ? cached?.view : undefined;
    });
  }

  /**
   * This process appended `entries` to the index in the commit that made `committed`: a view at that
   * commit's parent snapshot takes them in and moves to it (nothing to read). Never throws.
   */
  async noteAppended(committed: LoadedTable, entries: readonly IndexEntry[]): Promise<void> {
    const snapshot = currentSnapshot(committed.metadata);
    const uuid = committed.metadata['table-uuid'];
    if (snapshot === undefined) return;
    await this.locked(uuid, async () => {
      const cached = this.views.get(uuid);
      const parent = snapshot['parent-snapshot-id'];
      if (cached === undefined || parent === undefined || cached.snapshotId !== parent) return;
      if (cached.mainUuid !== readCoverage(committed)?.tableUuid) return;
      if (cached.view.fold(entries) !== true) this.views.delete(uuid);
      else
        this.keep(uuid, {
          ...cached,
          snapshotId: snapshot['snapshot-id'],
          covers: readCoverage(committed)?.snapshotId,
        });
    });
  }

  /**
   * This process replaced the index's data files by `kept` in the commit that made `committed`: a
   * rebuild (`readAt` undefined: every file of the base was replaced) or a compaction of the files of
   * snapshot `readAt` (compact-index.ts: the new snapshot holds exactly `kept` when the commit's parent
   * is `readAt`). The view of the new snapshot is made from `kept` (nothing to read). Never throws.
   */
  async noteReplaced(
    committed: LoadedTable,
    readAt: bigint | undefined,
    kept: readonly IndexEntry[],
  ): Promise<void> {
    const snapshot = currentSnapshot(committed.metadata);
    const uuid = committed.metadata['table-uuid'];
    if (snapshot === undefined) return;
    await this.locked(uuid, async () => {
      this.views.delete(uuid);
      const mainUuid = readCoverage(committed)?.tableUuid;
      const whole = readAt === undefined || snapshot['parent-snapshot-id'] === readAt;
      if (!whole || mainUuid === undefined || this.unkept.has(uuid)) return;
      if (KeyView.bytesFor(kept.length) > this.maxBytes) {
        this.unkept.add(uuid);
        return;
      }
      const view = new KeyView();
      if (view.fold(kept) !== true) return;
      view.trim();
      if (view.bytes <= this.maxBytes)
        this.keep(uuid, { mainUuid, snapshotId: snapshot['snapshot-id'], covers: coversOf(committed), view });
    });
  }

  private async viewUnlocked(index: LoadedTable): Promise<KeyView | undefined> {
    const uuid = index.metadata['table-uuid'];
    const snapshot = currentSnapshot(index.metadata);
    if (snapshot === undefined) return new KeyView();
    const mainUuid = readCoverage(index)?.tableUuid ?? '';
    const cached = this.views.get(uuid);
    if (cached !== undefined && cached.mainUuid === mainUuid) {
      if (cached.snapshotId === snapshot['snapshot-id']) return this.keep(uuid, cached);
      const since = appendsSince(index, cached.snapshotId);
      if (since !== undefined) {
        this.views.delete(uuid);
        const files = await addedFiles(index, since);
        if ((await cached.view.foldChunks(entriesOf(index, files))) === true) {
          if (cached.view.bytes <= this.maxBytes)
            return this.keep(uuid, {
              mainUuid,
              snapshotId: snapshot['snapshot-id'],
              covers: coversOf(index),
              view: cached.view,
            });
          // Grown past the bound: read by keys from now on, not whole again.
          this.unkept.add(uuid);
          return undefined;
        }
      }
    }
    this.views.delete(uuid);
    if (this.unkept.has(uuid)) return undefined;
    const view = new KeyView();
    const tooLarge = () => view.bytes > this.maxBytes || view.size > MAX_KEYS;
    const folded = await view.foldChunks(entriesOf(index, await liveFiles(index, snapshot)), tooLarge);
    if (folded === true) view.trim();
    if (folded !== true || view.bytes > this.maxBytes) {
      if (folded !== false) this.unkept.add(uuid);
      return undefined;
    }
    return this.keep(uuid, { mainUuid, snapshotId: snapshot['snapshot-id'], covers: coversOf(index), view });
  }

  /** Keeps `cached` as the most recently used view, dropping the least recently used past the bound. */
  private keep(uuid: string, cached: Cached): KeyView {
    this.views.delete(uuid);
    this.views.set(uuid, cached);
    let total = 0;
    for (const c of this.views.values()) total += c.view.bytes;
    for (const [other, c] of this.views) {
      if (total <= this.maxBytes || other === uuid) break;
      this.views.delete(other);
      total -= c.view.bytes;
    }
    return cached.view;
  }

  private async locked<T>(uuid: string, fn: () => Promise<T>): Promise<T> {
    const before = this.locks.get(uuid) ?? Promise.resolve();
    const run = before.then(fn, fn);
    const settled = run.catch(() => undefined);
    this.locks.set(uuid, settled);
    try {
      return await run;
    } finally {
      if (this.locks.get(uuid) === settled) this.locks.delete(uuid);
    }
  }
}

/** The main snapshot `index`'s current snapshot covers. Never throws. */
const coversOf = (index: LoadedTable) => readCoverage(index)?.snapshotId;

/**
 * The snapshots of `index` after `from` up to its current one, oldest first, when all are appends;
 * undefined when one is not, or `from` is not an ancestor within reach. Never throws.
 */
function appendsSince(index: LoadedTable, from: bigint): Snapshot[] | undefined {
  const chain = ancestors(index.metadata);
  const since = chain.findIndex((s) => s['snapshot-id'] === from);
  if (since < 0 || since > MAX_WALK) return undefined;
  const out = chain.slice(0, since);
  return out.every((s) => s.summary.operation === 'append') ? out.reverse() : undefined;
}

/** The views this process keeps (module state: it lives as long as a warm Lambda container). */
export const sharedIndexViews = new IndexViewCache();
