/**
 * Index entries and the latest-wins view of them.
 *
 * Every entry is a fact of the main table's history about one row, named by its data file and
 * position: "in the snapshot with sequence number `seq`, the row at `filePath`/`pos` holds `key` and
 * is live" (a live entry: the snapshot added it) or "... is dead" (a dead entry: the snapshot deleted it
 * by position, or removed its data file). Rows never move and never come back, so:
 *   - a key's row is the one of its newest live entry (a newer row of the key replaced older ones);
 *   - that row is gone when a dead entry names the same file and position at the same or a later seq.
 * A dead entry names the row, not only the key, because a position delete may name a row that was
 * already dead (equality deletes converted to positions, another engine's delete, a dropped file of a
 * compaction): "key k is gone" would then hide k's live row elsewhere. Two live entries of one key at
 * one seq would mean the snapshot holds the key twice; the tie is broken by path, position and version only so
 * the view is deterministic (verify-index.ts reports the table's duplicate).
 */
import type { Row } from '../spec/types.js';

/** A change version (`_kafka` topic/partition/offset). */
export interface EntryVersion {
  topic: string;
  partition: number;
  offset: bigint;
}

export interface IndexEntry {
  key: string;
  filePath: string;
  pos: bigint;
  /** Whether the snapshot at `seq` added the row (true) or deleted it (false). */
  live: boolean;
  seq: bigint;
  /** The row's `_kafka` (live), or the deleting change's (dead), when known. */
  version: EntryVersion | null;
}

/** Where a key's live row is, by the index: null when it has none. */
export interface KeyState {
  key: string;
  row: { filePath: string; pos: bigint; seq: bigint; version: EntryVersion | null } | null;
}

const at = (e: IndexEntry) => `${e.filePath}\u0000${e.pos}`;

function compareVersions(a: EntryVersion | null, b: EntryVersion | null): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? -1 : 1;
  if (a.topic !== b.topic) return a.topic < b.topic ? -1 : 1;
  if (a.partition !== b.partition) return a.partition - b.partition;
  return a.offset === b.offset ? 0 : a.offset < b.offset ? -1 : 1;
}

type LiveFact = Pick<IndexEntry, 'filePath' | 'pos' | 'seq' | 'version'>;

/**
 * The order of one key's live entries: by seq, then path, position and version. A total order, so the
 * newest is the same whatever order the entries come in (a view kept across batches sees them in
 * another order than a read of the whole index). Never throws.
 */
export function compareLive(a: LiveFact, b: LiveFact): number {
  if (a.seq !== b.seq) return a.seq < b.seq ? -1 : 1;
  if (a.filePath !== b.filePath) return a.filePath < b.filePath ? -1 : 1;
  if (a.pos !== b.pos) return a.pos < b.pos ? -1 : 1;
  return compareVersions(a.version, b.version);
}

/** Whether live entry `a` supersedes live entry `b` (same key). Never throws. */
const newerLive = (a: IndexEntry, b: IndexEntry): boolean => compareLive(a, b) > 0;

/** Per key: its newest live entry and the newest seq each of its rows died at. */
export class IndexView {
  private readonly newest = new Map<string, IndexEntry>();
  private readonly deaths = new Map<string, Map<string, bigint>>();

  /** Folds one entry in (order does not matter). Never throws. */
  add(entry: IndexEntry): void {
    if (entry.live) {
      const held = this.newest.get(entry.key);
      if (held === undefined || newerLive(entry, held)) this.newest.set(entry.key, entry);
      return;
    }
    const rows = this.deaths.get(entry.key) ?? new Map<string, bigint>();
    this.deaths.set(entry.key, rows);
    const seen = rows.get(at(entry));
    if (seen === undefined || entry.seq > seen) rows.set(at(entry), entry.seq);
  }

  /** The keys any entry names. Never throws. */
  keys(): Set<string> {
    return new Set([...this.newest.keys(), ...this.deaths.keys()]);
  }

  /** Where `key`'s live row is, by the entries folded in. Never throws. */
  state(key: string): KeyState {
    const live = this.newest.get(key);
    if (live === undefined) return { key, row: null };
    const died = this.deaths.get(key)?.get(at(live));
    if (died !== undefined && died >= live.seq) return { key, row: null };
    return { key, row: { filePath: live.filePath, pos: live.pos, seq: live.seq, version: live.version } };
  }
}

/**
 * Per key of `keys` with a live row by `state`, that row's newest live entry: what a compacted index
 * holds (IndexView's and KeyView's). Never throws.
 */
export function liveEntriesOf(keys: Iterable<string>, state: (key: string) => KeyState): IndexEntry[] {
  const out: IndexEntry[] = [];
  for (const key of keys) {
    const { row } = state(key);
    if (row)
      out.push({ key, filePath: row.filePath, pos: row.pos, live: true, seq: row.seq, version: row.version });
  }
  return out;
}

/** The view of `entries`. Never throws. */
export function viewOf(entries: Iterable<IndexEntry>): IndexView {
  const view = new IndexView();
  for (const entry of entries) view.add(entry);
  return view;
}

/** An entry as an index table row (index-table.ts INDEX_SCHEMA). Never throws. */
export function entryRow(entry: IndexEntry): Row {
  return {
    key: entry.key,
    file_path: entry.filePath,
    pos: entry.pos,
    live: entry.live,
    seq: entry.seq,
    topic: entry.version?.topic ?? null,
    partition: entry.version?.partition ?? null,
    offset: entry.version?.offset ?? null,
  };
}

/** An index table row as an entry; undefined for a row that is not one (written by someone else). Never throws. */
export function rowEntry(row: Row): IndexEntry | undefined {
  const { key, file_path, pos, live, seq, topic, partition, offset } = row;
  if (typeof key !== 'string' || typeof file_path !== 'string') return undefined;
  if (typeof pos !== 'bigint' || typeof seq !== 'bigint' || typeof live !== 'boolean') return undefined;
  const part = typeof partition === 'bigint' ? Number(partition) : partition;
  const version =
    typeof topic === 'string' && typeof part === 'number' && typeof offset === 'bigint'
      ? { topic, partition: part, offset }
      : null;
  return { key, filePath: file_path, pos, live, seq, version };
}
