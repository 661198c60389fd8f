/**
 * The latest-wins view of a whole index held compactly in memory, to be kept across batches
 * (view-cache.ts) and grown by the entries appended since: what IndexView (index-entries.ts) answers for
 * the same entries, in a fraction of its memory.
 *
 * Per key it keeps one slot: the newest live entry (file path interned, position, seq, version), the
 * newest seq a death named that entry's row at (`deathAt`), and the newest seq of any other death of
 * the key (`pruned`: a death of a row that is not the newest one cannot matter unless that row becomes
 * the newest later). That is exact when the entries come in batches (`fold`): within one batch every
 * live entry is folded before any death, so a death always meets the newest row of everything seen.
 * Only a live entry that becomes the newest in a later batch while an earlier pruned death might have
 * named its row (its seq ≤ `pruned`) is undecidable: `fold` then answers false and the caller reads the
 * index whole. Honest writers never cause that: a later batch's rows come from newer snapshots than
 * every death already seen.
 *
 * Numbers live in typed arrays (seqs and positions as 32-bit ints, offsets as doubles): an entry past
 * those ranges makes `fold` refuse the view (`'unkept'`), and the caller reads as without a view.
 */
import {
  compareLive,
  type EntryVersion,
  type IndexEntry,
  type KeyState,
  liveEntriesOf,
} from './index-entries.js';

/** Whether `fold` kept the view exact (true), or could not (false: read whole; 'unkept': no view). */
export type FoldResult = true | false | 'unkept';

/** Bytes of one slot in the typed arrays. */
const SLOT_BYTES = 36;
/** V8's cost of one Map entry with a short string key (measured: see key-index/README.md). */
const KEY_OVERHEAD_BYTES = 64;
const NONE = -1;
const INT_MAX = 2 ** 31 - 1;

/** What state() needs of any view: the whole-index one here, or IndexView of some keys. */
export interface KeyStates {
  state(key: string): KeyState;
}

const INT_MAX_BIG = BigInt(INT_MAX);
const fits = (n: bigint) => n >= 0n && n <= INT_MAX_BIG;

export class KeyView implements KeyStates {
  private readonly slots = new Map<string, number>();
  private readonly paths: string[] = [];
  private readonly pathIds = new Map<string, number>();
  private readonly topics: string[] = [];
  private readonly topicIds = new Map<string, number>();
  private file = new Int32Array(1024);
  private pos = new Int32Array(1024);
  private seq = new Int32Array(1024);
  private deathAt = new Int32Array(1024);
  private pruned = new Int32Array(1024);
  private topic = new Int32Array(1024);
  private partition = new Int32Array(1024);
  private offset = new Float64Array(1024);
  private keyChars = 0;

  /** Keys held (with a live row or not). Never throws. */
  get size(): number {
    return this.slots.size;
  }

  /** About what a view of `keys` keys would hold (short keys): to refuse one before making it. Never throws. */
  static bytesFor(keys: number): number {
    return keys * (SLOT_BYTES + KEY_OVERHEAD_BYTES + 8);
  }

  /** An estimate of the memory the view holds. Never throws. */
  get bytes(): number {
    const strings = this.keyChars + this.paths.reduce((n, p) => n + p.length + 32, 0);
    return this.file.length * SLOT_BYTES + this.slots.size * KEY_OVERHEAD_BYTES + strings;
  }

  /** Where `key`'s live row is (as IndexView.state for the same entries). Never throws. */
  state(key: string): KeyState {
    const s = this.slots.get(key);
    if (s === undefined || this.file[s] === NONE) return { key, row: null };
    if (this.deathAt[s] !== NONE && this.deathAt[s] >= this.seq[s]) return { key, row: null };
    return { key, row: { ...this.live(s), version: this.versionAt(s) } };
  }

  /** Per key with a live row, that row's newest live entry (what a compacted index holds). Never throws. */
  liveEntries(): IndexEntry[] {
    return liveEntriesOf(this.slots.keys(), (key) => this.state(key));
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
    this.foldDeaths(deaths);
    return true;
  }

  /**
   * Folds one batch of entries that comes in chunks (one index file each), as `fold`; 'unkept' too
   * when `stop` says so after a chunk (the view outgrew a bound). Per chunk, not per entry: an async
   * step per entry cost more than the fold itself.
   * @throws whatever iterating `chunks` throws (the view must then be dropped)
   */
  async foldChunks(
    chunks: AsyncIterable<Iterable<IndexEntry>>,
    stop: () => boolean = () => false,
  ): Promise<FoldResult> {
    const deaths: IndexEntry[] = [];
    for await (const chunk of chunks) {
      const lives = this.foldLives(chunk, deaths);
      if (lives !== true) return lives;
      if (stop()) return 'unkept';
    }
    this.foldDeaths(deaths);
    return true;
  }

  private foldLives(entries: Iterable<IndexEntry>, deaths: IndexEntry[]): FoldResult {
    for (const e of entries) {
      if (!fits(e.pos) || !fits(e.seq)) return 'unkept';
      if (e.version && !Number.isSafeInteger(Number(e.version.offset))) return 'unkept';
      if (!e.live) deaths.push(e);
      else if (!this.foldLive(e)) return false;
    }
    return true;
  }

  private foldDeaths(deaths: readonly IndexEntry[]): void {
    for (const e of deaths) {
      const s = this.slotOf(e.key);
      if (this.holds(s, e)) this.deathAt[s] = Math.max(this.deathAt[s], Number(e.seq));
      else this.pruned[s] = Math.max(this.pruned[s], Number(e.seq));
    }
  }

  /** Whether slot `s`'s newest live row is the row `e` names. */
  private holds(s: number, e: IndexEntry): boolean {
    return this.file[s] !== NONE && this.pos[s] === Number(e.pos) && this.paths[this.file[s]] === e.filePath;
  }

  private foldLive(e: IndexEntry): boolean {
    const s = this.slotOf(e.key);
    // Most entries differ in seq from the held row: only a tie needs the whole comparison.
    const seq = Number(e.seq);
    const held = this.file[s] !== NONE;
    if (held && (seq < this.seq[s] || (seq === this.seq[s] && compareLive(e, this.liveEntry(s)) <= 0)))
      return true;
    if (!this.holds(s, e)) {
      // A death folded earlier may have named this row: undecidable without it (see the file comment).
      if (this.pruned[s] !== NONE && Number(e.seq) <= this.pruned[s]) return false;
      this.pruned[s] = Math.max(this.pruned[s], this.deathAt[s]);
      this.deathAt[s] = NONE;
    }
    this.setLive(s, e);
    return true;
  }

  private live(s: number): { filePath: string; pos: bigint; seq: bigint } {
    return { filePath: this.paths[this.file[s]]!, pos: BigInt(this.pos[s]), seq: BigInt(this.seq[s]) };
  }

  private liveEntry(s: number) {
    return { ...this.live(s), version: this.versionAt(s) };
  }

  private versionAt(s: number): EntryVersion | null {
    if (this.topic[s] === NONE) return null;
    return {
      topic: this.topics[this.topic[s]]!,
      partition: this.partition[s],
      offset: BigInt(this.offset[s]),
    };
  }

  private setLive(s: number, e: IndexEntry): void {
    this.file[s] = this.intern(this.pathIds, this.paths, e.filePath);
    this.pos[s] = Number(e.pos);
    this.seq[s] = Number(e.seq);
    if (e.version === null) this.topic[s] = NONE;
    else {
      this.topic[s] = this.intern(this.topicIds, this.topics, e.version.topic);
      // Partitions are int32 in the index schema.
      this.partition[s] = e.version.partition;
      this.offset[s] = Number(e.version.offset);
    }
  }

  private intern(ids: Map<string, number>, values: string[], value: string): number {
    let id = ids.get(value);
    if (id === undefined) {
      id = values.length;
      values.push(value);
      ids.set(value, id);
    }
    return id;
  }

  private slotOf(key: string): number {
    let s = this.slots.get(key);
    if (s !== undefined) return s;
    s = this.slots.size;
    if (s === this.file.length) this.grow();
    this.slots.set(key, s);
    this.keyChars += key.length;
    this.file[s] = NONE;
    this.deathAt[s] = NONE;
    this.pruned[s] = NONE;
    this.topic[s] = NONE;
    return s;
  }

  private grow(): void {
    const bigger = <T extends Int32Array | Float64Array>(a: T): T => {
      // 1.5×, not 2×: at 10M keys doubling leaves ~40% of the arrays empty.
      const b = new (a.constructor as new (n: number) => T)(Math.ceil(a.length * 1.5));
      b.set(a);
      return b;
    };
    this.file = bigger(this.file);
    this.pos = bigger(this.pos);
    this.seq = bigger(this.seq);
    this.deathAt = bigger(this.deathAt);
    this.pruned = bigger(this.pruned);
    this.topic = bigger(this.topic);
    this.partition = bigger(this.partition);
    this.offset = bigger(this.offset);
  }
}
