/**
 * The one way floe deletes a table's files (orphan removal, snapshot expiry, compaction and failed-commit
 * cleanup): a delete happens only inside the table's own area, and any other path is refused and
 * reported, never deleted.
 *
 * The table's own area is its location, except
 *   - every folder below it that holds another table's metadata (`<folder>/metadata/*.metadata.json`):
 *     a table nested inside this one (warehouses written before the embedded catalog refused that, or by
 *     other tools) keeps all of its files;
 *   - everything, when the location does not hold the table's current metadata file under
 *     `<location>/metadata/`: a location edited by hand or answered wrongly by a catalog cannot be told
 *     from the table's own, so nothing is deleted on its word.
 *
 * Paths come from metadata (manifest lists, manifests, data files), which another tool or a hand edit
 * may have pointed anywhere; the area is decided from the location alone, never from those paths.
 */
import type { FileIO } from './file-io.js';
import { isWithinLocation, joinLocation, normalizeLocation, parentLocation } from './location.js';

/**
 * `floe serve --live` writes the Kafka tail of a table it serves to `<location>/floe-live/<key>/`:
 * files no committed snapshot references, read by engines through the served (uncommitted) snapshot.
 * Orphan removal must leave them alone while they may still be read: younger than the longest TTL a
 * live cache may have. Older ones are ordinary orphans.
 */
export const LIVE_CACHE_FOLDER = 'floe-live';
export const LIVE_CACHE_MAX_TTL_MS = 24 * 60 * 60 * 1000;

/** Whether a file is in the table's live cache and younger than the longest cache TTL. Never throws. */
export function isFreshLiveCacheFile(
  tableLocation: string,
  file: { location: string; lastModifiedMs: number },
  nowMs: number,
): boolean {
  const folder = joinLocation(tableLocation, LIVE_CACHE_FOLDER);
  return isWithinLocation(file.location, folder) && nowMs - file.lastModifiedMs < LIVE_CACHE_MAX_TTL_MS;
}

/** A path a delete was asked for and refused, with why. */
export interface RefusedDelete {
  location: string;
  reason: string;
}

export interface ConfinedDeletes {
  /** The table's own files, safe to delete. */
  allowed: string[];
  refused: RefusedDelete[];
}

export interface DeleteOutcome extends ConfinedDeletes {
  /** Of `allowed`, those deleted (all of them unless some delete failed). */
  deleted: string[];
  failed: string[];
}

/** What identifies a table's area: its storage, its location and its current metadata file. */
export interface TableAreaSource {
  io: FileIO;
  metadata: { location: string };
  /**
   * Confirms the location: it must hold this file under `<location>/metadata/`. Absent only where the
   * location is the catalog's own layout rather than metadata's word (the embedded catalog's folders).
   */
  metadataLocation?: string;
}

/** A file a listing found. */
export interface ListedFile {
  location: string;
}

/** `<folder>/metadata/<name>.metadata.json`: the folder is a table's (Iceberg's and the Hadoop layout). */
const TABLE_METADATA = /^(.*)\/metadata\/[^/]+\.metadata\.json$/;

const DELETE_CONCURRENCY = 8;

/**
 * Why `source`'s location cannot be trusted as the table's own — it does not hold the table's current
 * metadata under `<location>/metadata/` — or undefined when it can. Never throws.
 */
export function checkTableLocation(source: TableAreaSource): string | undefined {
  const { metadataLocation } = source;
  const location = normalizeLocation(source.metadata.location);
  if (
    metadataLocation === undefined ||
    isWithinLocation(metadataLocation, joinLocation(location, 'metadata'))
  )
    return undefined;
  return (
    `the table's location ${location} does not hold its current metadata ${metadataLocation}, so floe ` +
    'cannot confirm the folder is the table’s own and deletes nothing there; correct the location ' +
    '(retrying does not help)'
  );
}

/**
 * A table's own area, for confining deletes. Folders are checked for other tables' metadata once each
 * (one small listing of `<folder>/metadata/`), except under the prefixes a caller already listed in full.
 */
export class TableArea {
  readonly io: FileIO;
  /** The table's location, normalized. */
  readonly root: string;
  private readonly unconfirmed?: string;
  private readonly listedUnder: string[];
  private readonly listedTableFolders = new Set<string>();
  private readonly probes = new Map<string, Promise<boolean>>();

  /**
   * @param listing every file under `listedUnder` (prefixes inside the location), when the caller listed
   *   them anyway: folders there are judged from it, with no further request
   */
  constructor(source: TableAreaSource, listing?: { files: readonly ListedFile[]; under: readonly string[] }) {
    this.io = source.io;
    this.root = normalizeLocation(source.metadata.location);
    this.listedUnder = (listing?.under ?? []).map(normalizeLocation);
    for (const f of listing?.files ?? []) {
      const m = TABLE_METADATA.exec(normalizeLocation(f.location));
      if (m) this.listedTableFolders.add(m[1]);
    }
    this.unconfirmed = checkTableLocation(source);
  }

  /** Why nothing may be deleted in this area, or undefined when the location is confirmed. Never throws. */
  get refusal(): string | undefined {
    return this.unconfirmed;
  }

  /**
   * Splits `locations` into the table's own files and the rest (each with its reason). Duplicates, in any
   * spelling, count once.
   * @throws nothing: a folder that cannot be checked refuses its files, with the error as the reason
   */
  async confine(locations: Iterable<string>): Promise<ConfinedDeletes> {
    const out: ConfinedDeletes = { allowed: [], refused: [] };
    const seen = new Set<string>();
    const unique: string[] = [];
    for (const l of locations) {
      const n = normalizeLocation(l);
      if (!seen.has(n)) {
        seen.add(n);
        unique.push(l);
      }
    }
    const reasons = await Promise.all(unique.map((l) => this.reasonToRefuse(l)));
    unique.forEach((location, i) => {
      const reason = reasons[i];
      if (reason === undefined) out.allowed.push(location);
      else out.refused.push({ location, reason });
    });
    return out;
  }

  /**
   * Deletes the table's own files among `locations` (see {@link confine}); the rest are refused. A failed
   * delete is counted, never thrown: what stays behind is an orphan for orphan removal.
   */
  async delete(locations: Iterable<string>): Promise<DeleteOutcome> {
    const { allowed, refused } = await this.confine(locations);
    const out: DeleteOutcome = { allowed, refused, deleted: [], failed: [] };
    let next = 0;
    const worker = async () => {
      while (next < allowed.length) {
        const location = allowed[next++];
        try {
          await this.io.delete(location);
          out.deleted.push(location);
        } catch {
          out.failed.push(location);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(DELETE_CONCURRENCY, allowed.length) }, worker));
    return out;
  }

  private async reasonToRefuse(location: string): Promise<string | undefined> {
    if (this.unconfirmed) return this.unconfirmed;
    const file = normalizeLocation(location);
    if (file === this.root || !isWithinLocation(file, this.root))
      return `outside the table's location ${this.root}`;
    for (let folder = parentLocation(file); folder !== undefined && folder !== this.root; ) {
      try {
        if (await this.holdsTable(folder))
          return `in ${folder}, a folder holding another table's metadata (a table nested in this one)`;
      } catch (error) {
        return `could not check whether ${folder} holds another table (${String(error)}); a retry may help`;
      }
      folder = parentLocation(folder);
    }
    return undefined;
  }

  /** Whether `folder` (below the root) holds a table's metadata. */
  private holdsTable(folder: string): Promise<boolean> {
    if (this.listedUnder.some((prefix) => isWithinLocation(folder, prefix)))
      return Promise.resolve(this.listedTableFolders.has(folder));
    let probe = this.probes.get(folder);
    if (!probe) {
      probe = this.io
        .list(joinLocation(folder, 'metadata'))
        .then((files) =>
          files.some((f) => TABLE_METADATA.exec(normalizeLocation(f.location))?.[1] === folder),
        );
      this.probes.set(folder, probe);
    }
    return probe;
  }
}
