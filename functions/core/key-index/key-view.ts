/**
 * The latest-wins view of a whole index held compactly in memory, to be kept across batches
 * (view-cache.ts) and grown by the entries appended since: what IndexView (index-entries.ts) answers for
 * the same entries, in a fraction of its memory.
 *
 * Per key it keeps one slot: the newest live entry, whether a death named that entry's row at or after
 * its seq (the row is gone), and `gone`: the newest seq of any death of the key. That is exact when
 * the entries come in batches (`fold`): within one batch every live entry is folded before any death,
 * so a death always meets the newest row of everything seen. Only a live entry that becomes the newest
 * in a later batch at a seq no newer than a death already folded (≤ `gone`) is undecidable, as is the
 * held row named live again at a newer seq after a death reached it: `fold` then answers false and the
 * caller reads the index whole. Honest writers never cause that: a later batch's rows come from newer
 * snapshots than every death already seen.
 *
 * About 20 bytes a key besides the key itself (key-arena.ts): the live entry's file path, seq, topic,
 * partition and the offset's high bits are one `origin` (interned: one per data file and partition
 * in practice), the position and the offset's low 16 bits sit in typed arrays beside `gone`. Seqs and
 * positions are 32-bit: an entry past those ranges makes `fold` refuse the view (`'unkept'`), and the
 * caller reads as without a view.
 */
import {
  compareLive,
  type EntryVersion,
  type IndexEntry,
  type KeyState,
  liveEntriesOf,
} from './index-entries.js';
import { KeyArena } from './key-arena.js';

/** Whether `fold` kept the view exact (true), or could not (false: read whole; 'unkept': no view). */
export type FoldResult = true | false | 'unkept';

/** Bytes of one slot in the typed arrays of the view. */
const SLOT_BYTES = 4 + 4 + 2 + 4;
/** About what a short key costs in the arena and its hash table (measured: see key-index/README.md). */
const KEY_BYTES = 20;
/** What one interned origin costs (its fields, its Map entry and text). */
const ORIGIN_BYTES = 160;
const NONE = -1;
const INT_MAX = 2 ** 31 - 1;
/** The offset's low bits kept per key; the rest go in its origin. */
const LOW = 2 ** 16;
const RECENT = 8;

/**
 * One live entry as the fold takes it: its position, seq and offset as numbers (a read of the index's
 * columns gives them so, without a bigint per entry: index-columns.ts); `topic` null without a version.
 */
export interface LiveRow {
  key: string;
  filePath: string;
  pos: number;
  seq: number;
  topic: string | null;
  partition: number;
  offset: number;
}

/**
 * Entries a chunk hands over itself, one call per entry: `live` per live one (the row object may be
 * reused: it is not kept), `dead` per dead one; it stops at the first answer that is not true.
 */
export interface RowChunk {
  each(live: (row: LiveRow) => FoldResult, dead: (entry: IndexEntry) => FoldResult): FoldResult;
}

/** What state() needs of any view: the whole-index one here, or IndexView of some keys. */
export interface KeyStates {
  state(key: string): KeyState;
}

const INT_MAX_BIG = BigInt(INT_MAX);
const fits = (n: bigint) => n >= 0n && n <= INT_MAX_BIG;
const fitsNumber = (n: number) => n >= 0 && n <= INT_MAX;

/** What entries share: a data file, seq, topic, partition and an offset's high bits. */
interface Origin {
  path: number;
  seq: number;
  topic: number;
  partition: number;
  high: number;
}

export class KeyView implements KeyStates {
  private readonly keys: KeyArena;
  private readonly paths: string[] = [];
  private readonly pathIds = new Map<string, number>();
  private readonly topics: string[] = [];
  private readonly topicIds = new Map<string, number>();
  private readonly origins: Origin[] = [];
  private readonly originIds = new Map<string, number>();
  /** The origins met last, checked before the Map (a file's rows come together, their partitions mixed). */
  private readonly recent: (Origin & { filePath: string; topicText: string | null; id: number })[] = [];
  private recentNext = 0;
  /** Per slot: its live row's origin, or NONE without one. */
  private origin = new Int32Array(1024);
  /** Per slot: its live row's position, or its complement (< 0) once a death reached the row. */
  private pos = new Int32Array(1024);
  private offsetLow = new Uint16Array(1024);
  private gone = new Int32Array(1024);

  /** `buckets`: the key hash table's first size (KeyArena). @default 2048 */
  constructor(options: { buckets?: number } = {}) {
    this.keys = new KeyArena(options.buckets);
  }

  /** Keys held (with a live row or not). Never throws. */
  get size(): number {
    return this.keys.size;
  }

  /** About what a view of `keys` keys would hold (short keys): to refuse one before making it. Never throws. */
  static bytesFor(keys: number): number {
    return keys * (SLOT_BYTES + KEY_BYTES);
  }

  /** An estimate of the memory the view holds. Never throws. */
  get bytes(): number {
    const strings = this.paths.reduce((n, p) => n + p.length + 32, 0);
    return this.keys.bytes + this.origin.length * SLOT_BYTES + this.origins.length * ORIGIN_BYTES + strings;
  }

  /** Where `key`'s live row is (as IndexView.state for the same entries). Never throws. */
  state(key: string): KeyState {
    const s = this.keys.find(key);
    if (s < 0 || this.origin[s] === NONE || this.pos[s]! < 0) return { key, row: null };
    return { key, row: this.liveEntry(s) };
  }

  /** Per key with a live row, that row's newest live entry (what a compacted index holds). Never throws. */
  liveEntries(): IndexEntry[] {
    const keys = this.keys;
    function* all() {
      for (let s = 0; s < keys.size; s++) yield keys.keyAt(s);
    }
    return liveEntriesOf(all(), (key) => this.state(key));
  }

  /**
   * Gives back the room grown for keys to come, but for a few: for a view just read whole, which
   * takes in only a batch's keys at a time from now on. Never throws.
   */
  trim(): void {
    const spare = Math.max(1024, Math.ceil(this.size / 64));
    this.keys.trim(spare);
    this.resize(this.size + spare);
  }

  /**
   * Folds one batch of entries in (see the file comment); false when the view can no longer be kept
   * exact, 'unkept' when an entry does not fit it. Either way the view must then be dropped.
   * @throws whatever iterating `entries` throws (the view must then be dropped too)
   */
  fold(entries: Iterable<IndexEntry>): FoldResult {
    const deaths: IndexEntry[] = [];
    const lives = this.foldLives(entries, deaths);
    if (lives !== true) return lives;
    return this.foldDeaths(deaths);
  }

  /**
   * Folds one batch of entries that comes in chunks (one index file each), as `fold`; 'unkept' too
   * when `stop` says so after a chunk (the view outgrew a bound). Per chunk, not per entry: an async
   * step per entry cost more than the fold itself.
   * @throws whatever iterating `chunks` throws (the view must then be dropped)
   */
  async foldChunks(
    chunks: AsyncIterable<Iterable<IndexEntry> | RowChunk>,
    stop: () => boolean = () => false,
  ): Promise<FoldResult> {
    const deaths: IndexEntry[] = [];
    const dead = (e: IndexEntry): FoldResult => {
      if (!fits(e.pos) || !fits(e.seq)) return 'unkept';
      if (e.version && !Number.isSafeInteger(Number(e.version.offset))) return 'unkept';
      deaths.push(e);
      return true;
    };
    const live = (row: LiveRow) => this.foldLive(row);
    for await (const chunk of chunks) {
      const lives = 'each' in chunk ? chunk.each(live, dead) : this.foldLives(chunk, deaths);
      if (lives !== true) return lives;
      if (stop()) return 'unkept';
    }
    return this.foldDeaths(deaths);
  }

  private foldLives(entries: Iterable<IndexEntry>, deaths: IndexEntry[]): FoldResult {
    // One row object rewritten per entry: foldLive keeps none.
    const row: LiveRow = { key: '', filePath: '', pos: 0, seq: 0, topic: null, partition: 0, offset: 0 };
    for (const e of entries) {
      if (!fits(e.pos) || !fits(e.seq)) return 'unkept';
      if (e.version && !Number.isSafeInteger(Number(e.version.offset))) return 'unkept';
      if (!e.live) deaths.push(e);
      else {
        const v = e.version;
        row.key = e.key;
        row.filePath = e.filePath;
        row.pos = Number(e.pos);
        row.seq = Number(e.seq);
        row.topic = v === null ? null : v.topic;
        row.partition = v === null ? 0 : v.partition;
        row.offset = v === null ? 0 : Number(v.offset);
        const folded = this.foldLive(row);
        if (folded !== true) return folded;
      }
    }
    return true;
  }

  private foldDeaths(deaths: readonly IndexEntry[]): FoldResult {
    for (const e of deaths) {
      const s = this.slotOf(e.key);
      if (s < 0) return 'unkept';
      const seq = Number(e.seq);
      if (this.holds(s, Number(e.pos), e.filePath) && seq >= this.origins[this.origin[s]!]!.seq)
        this.pos[s] = ~Number(e.pos);
      if (seq > this.gone[s]!) this.gone[s] = seq;
    }
    return true;
  }

  /** Whether slot `s`'s newest live row is the row `e` names. */
  private holds(s: number, at: number, filePath: string): boolean {
    const o = this.origin[s]!;
    if (o === NONE) return false;
    const pos = this.pos[s]!;
    return (pos < 0 ? ~pos : pos) === at && this.paths[this.origins[o]!.path] === filePath;
  }

  private foldLive(e: LiveRow): FoldResult {
    if (!fitsNumber(e.pos) || !fitsNumber(e.seq) || !Number.isSafeInteger(e.offset)) return 'unkept';
    const s = this.slotOf(e.key);
    if (s < 0) return 'unkept';
    // Most entries differ in seq from the held row: only a tie needs the whole comparison.
    const seq = e.seq;
    if (this.origin[s] !== NONE) {
      const held = this.origins[this.origin[s]!]!.seq;
      if (seq < held || (seq === held && compareLive(liveFact(e), this.liveEntry(s)) <= 0)) return true;
    }
    if (this.holds(s, e.pos, e.filePath)) {
      // The held row named live again at a newer seq: whether a death reached that seq is not kept.
      if (this.pos[s]! < 0) return false;
    } else if (this.gone[s] !== NONE && seq <= this.gone[s]!) {
      // A death folded earlier may have named this row: undecidable without it (see the file comment).
      return false;
    }
    this.origin[s] = this.originOf(e);
    this.pos[s] = e.pos;
    const offset = e.offset;
    this.offsetLow[s] = offset - Math.floor(offset / LOW) * LOW;
    return true;
  }

  private liveEntry(s: number): { filePath: string; pos: bigint; seq: bigint; version: EntryVersion | null } {
    const o = this.origins[this.origin[s]!]!;
    const pos = this.pos[s]!;
    const version =
      o.topic === NONE
        ? null
        : {
            topic: this.topics[o.topic]!,
            partition: o.partition,
            offset: BigInt(o.high * LOW + this.offsetLow[s]!),
          };
    return { filePath: this.paths[o.path]!, pos: BigInt(pos < 0 ? ~pos : pos), seq: BigInt(o.seq), version };
  }

  /** The interned origin of live entry `e`. */
  private originOf(e: LiveRow): number {
    const seq = e.seq;
    const topic = e.topic;
    const partition = topic === null ? 0 : e.partition;
    const high = topic === null ? 0 : Math.floor(e.offset / LOW);
    for (const r of this.recent)
      if (
        r.seq === seq &&
        r.high === high &&
        r.partition === partition &&
        r.topicText === topic &&
        r.filePath === e.filePath
      )
        return r.id;
    const path = intern(this.pathIds, this.paths, e.filePath);
    const topicId = topic === null ? NONE : intern(this.topicIds, this.topics, topic);
    const text = `${path}:${seq}:${topicId}:${partition}:${high}`;
    let id = this.originIds.get(text);
    const origin = { path, seq, topic: topicId, partition, high };
    if (id === undefined) {
      id = this.origins.length;
      this.origins.push(origin);
      this.originIds.set(text, id);
    }
    this.recent[this.recentNext] = { ...origin, filePath: e.filePath, topicText: topic, id };
    this.recentNext = (this.recentNext + 1) % RECENT;
    return id;
  }

  /** The slot of `key`, a new one if need be; NONE when the key arena is full. */
  private slotOf(key: string): number {
    const before = this.keys.size;
    const s = this.keys.insert(key);
    if (s === before) {
      if (s === this.origin.length) this.resize(Math.ceil(s * 1.5));
      this.origin[s] = NONE;
      this.gone[s] = NONE;
    }
    return s;
  }

  private resize(length: number): void {
    const to = <T extends Int32Array | Uint16Array>(a: T): T => {
      const b = new (a.constructor as new (n: number) => T)(length);
      b.set(a.subarray(0, Math.min(a.length, length)));
      return b;
    };
    this.origin = to(this.origin);
    this.pos = to(this.pos);
    this.offsetLow = to(this.offsetLow);
    this.gone = to(this.gone);
  }
}

/** A live row as compareLive takes it (only on a tie of seqs: rare). */
function liveFact(e: LiveRow) {
  const version =
    e.topic === null ? null : { topic: e.topic, partition: e.partition, offset: BigInt(e.offset) };
  return { filePath: e.filePath, pos: BigInt(e.pos), seq: BigInt(e.seq), version };
}

function intern(ids: Map<string, number>, values: string[], value: string): number {
  let id = ids.get(value);
  if (id === undefined) {
    id = values.length;
    values.push(value);
    ids.set(value, id);
  }
  return id;
}
