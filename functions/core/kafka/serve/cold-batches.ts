/**
 * The encoded record batches of a table's cold offsets, built once and shared by every fetch and every
 * consumer. Cold data is immutable per snapshot, so a partition's offsets are cut into fixed chunks
 * (chunk k holds offsets [kC, (k+1)C)) and each chunk's batches are built once per (table, snapshot,
 * partition, chunk, end of the cold range) and kept in a byte-bounded LRU; 100 consumers asking for one
 * chunk at once share its one build (single flight). A fetch is answered by slicing whole cached
 * batches: the first one may start before the fetch offset, as a broker's batches do, and clients skip
 * the records below their offset (kafkajs's consumer Batch and librdkafka's msgset reader both do).
 *
 * A chunk is built from the files whose `_kafka` statistics may hold its offsets, reading only the
 * row groups and pages that may (table-records.ts), never the whole table: a consumer far behind costs
 * the files of its offsets. The chunk remembers where the next held offset may be (the next file's lower
 * bound when there is a gap), so a run of offsets the table does not hold is skipped in one step.
 * A file that goes on past the chunk is read on through the next chunk's offsets in the same pass, and
 * those records are left for the next chunk's build (a spill): files seldom end where chunks do, and
 * reading the rest of a file again for the next chunk decoded its pages and its filter columns twice.
 *
 * Memory: the cache bound (`--cache-mb`), plus the chunks being built (at most BUILDS_AT_ONCE), plus
 * the spills waiting (at most MAX_SPILLS, each the records of at most one chunk), plus the answers in
 * flight, each capped at MAX_COLD_RESPONSE_BYTES whatever max bytes a client asks for.
 */
import type { LoadedTable } from '../../catalog/catalog.js';
import { currentSnapshot } from '../../spec/metadata.js';
import { ByteLru, type Sized } from './byte-lru.js';
import { buildBatch, type ColdRecord, groupIntoBatches } from './record-batches.js';
import { type TableRecords, withLetters } from './table-records.js';

/** The default cache bound (`--cache-mb`). */
export const DEFAULT_CACHE_MB = 256;
/**
 * The cold bytes of one Fetch answer at most, whatever the client's max bytes (a broker caps its
 * answers too, with `fetch.max.bytes`): clients fetch again from where the answer ends.
 */
export const MAX_COLD_RESPONSE_BYTES = 4 * 1024 * 1024;
/** Chunks built at once: building is CPU-bound, and each build holds its chunk's decoded rows. */
const BUILDS_AT_ONCE = 2;
/** About this many bytes of data files per chunk (so about 4× that once encoded as JSON values). */
const CHUNK_FILE_BYTES = 256 * 1024;
const MIN_CHUNK_OFFSETS = 64n;
const MAX_CHUNK_OFFSETS = 8192n;
/** Per batch beyond its bytes, for the cache's accounting (the Buffer and the entry's fields). */
const BATCH_OVERHEAD = 96;
/** Spills kept for chunks not built yet; the oldest goes first (its chunk then reads its files again). */
const MAX_SPILLS = 8;

/**
 * Records a chunk's build read past its end for the next chunk: of `files` (data file paths), every
 * record with an offset in the next chunk, ascending, each offset once.
 */
interface Spill {
  files: Set<string>;
  records: ColdRecord[];
}

/** One encoded batch and the offsets it spans. */
export interface CachedBatch {
  base: bigint;
  last: bigint;
  bytes: Buffer;
}

interface Chunk extends Sized {
  batches: CachedBatch[];
  /** Where the next held offset may be (undefined: nothing past this chunk up to the range's end). */
  next: bigint | undefined;
}

/**
 * Whole batches from `batches` (ascending) that hold an offset ≥ `from`, until `maxBytes` would be
 * passed; the first such batch always goes, however large (KIP-74).
 */
export function sliceBatches(
  batches: readonly CachedBatch[],
  from: bigint,
  maxBytes: number,
  out: Buffer[] = [],
): { batches: Buffer[]; full: boolean } {
  let total = out.reduce((n, b) => n + b.length, 0);
  for (const b of batches) {
    if (b.last < from) continue;
    if (out.length > 0 && total + b.bytes.length > maxBytes) return { batches: out, full: true };
    out.push(b.bytes);
    total += b.bytes.length;
    if (total >= maxBytes) return { batches: out, full: true };
  }
  return { batches: out, full: false };
}

/**
 * Offsets per chunk for a table's snapshot: about CHUNK_FILE_BYTES of its data files, a power of two.
 * Fixed per snapshot (from its summary), so every fetch cuts the same chunks.
 */
export function chunkOffsets(table: LoadedTable, fileBytes = CHUNK_FILE_BYTES): bigint {
  const summary = currentSnapshot(table.metadata)?.summary;
  const size = Number(summary?.['total-files-size']);
  const records = Number(summary?.['total-records']);
  if (!(size > 0) || !(records > 0)) return MAX_CHUNK_OFFSETS;
  let chunk = MIN_CHUNK_OFFSETS;
  while (chunk < MAX_CHUNK_OFFSETS && Number(chunk * 2n) * (size / records) <= fileBytes) chunk *= 2n;
  return chunk;
}

export class ColdBatches {
  readonly cache: ByteLru<Chunk>;
  private building = 0;
  private readonly queue: (() => void)[] = [];
  private readonly spills = new Map<string, Spill>();

  /**
   * @param cacheBytes the cache bound
   * @param chunkFileBytes about how many bytes of data files a chunk covers
   * @throws RangeError for a cache bound that is not a positive integer
   */
  constructor(
    private readonly records: TableRecords,
    cacheBytes = DEFAULT_CACHE_MB * 1024 * 1024,
    private readonly chunkFileBytes = CHUNK_FILE_BYTES,
  ) {
    this.cache = new ByteLru<Chunk>(cacheBytes);
  }

  /**
   * Encoded batches of `topic`/`partition` holding offsets from `from` up to `last` (inclusive, the
   * cold range's end) at the table's current snapshot, within `maxBytes` (at least one batch when the
   * table holds anything there); empty when it holds nothing in [from, last].
   * @throws ValidationError / TransientIOError / NotFoundError from planning and reading the table
   */
  async read(
    table: LoadedTable,
    topic: string,
    partition: number,
    from: bigint,
    last: bigint,
    maxBytes: number,
  ): Promise<Buffer[]> {
    const snapshot = currentSnapshot(table.metadata);
    if (!snapshot || from > last) return [];
    const size = chunkOffsets(table, this.chunkFileBytes);
    const prefix = `${table.metadata['table-uuid']}\u0000${snapshot['snapshot-id']}\u0000${topic}\u0000${partition}\u0000${size}\u0000${last}`;
    const out: Buffer[] = [];
    let k = from / size;
    for (;;) {
      const index = k;
      const chunk = await this.cache.get(`${prefix}\u0000${index}`, () =>
        this.limited(() => this.build(table, topic, partition, index * size, size, last, prefix)),
      );
      const full = sliceBatches(chunk.batches, from, maxBytes, out).full;
      const next = chunk.next;
      if (next === undefined) return out;
      if (full) {
        const ahead = next / size;
        this.readAhead(`${prefix}\u0000${ahead}`, () =>
          this.build(table, topic, partition, ahead * size, size, last, prefix),
        );
        return out;
      }
      k = next / size;
    }
  }

  private async build(
    table: LoadedTable,
    topic: string,
    partition: number,
    lo: bigint,
    size: bigint,
    last: bigint,
    prefix: string,
  ): Promise<Chunk> {
    const hi = lo + size - 1n < last ? lo + size - 1n : last;
    const spill = this.takeSpill(`${prefix}\u0000${lo / size}`);
    // Dead letters of the rest of the range: the chunk's are served in it, the first past it bounds
    // the skip to the next chunk worth reading (a gap in the table may hold letters).
    const letters = await this.records.letters(table, topic, partition, lo, last);
    const planned = await this.records.plan(table, topic, partition, lo, last);
    const files = planned
      ? planned.files.filter((f) => f.lower <= hi && !spill?.files.has(f.task.file.file_path))
      : [];
    // A file going on past the chunk is read through the next chunk too: one range for all the files
    // read, so their records stay in one offset-ordered list, each offset once.
    const through = files.some((f) => f.upper === undefined || f.upper > hi)
      ? hi + size < last
        ? hi + size
        : last
      : hi;
    const read = planned
      ? await this.records.readFiles(table, planned.plan, files, topic, partition, lo, through)
      : [];
    if (through > hi) {
      this.putSpill(`${prefix}\u0000${lo / size + 1n}`, {
        files: new Set(files.map((f) => f.task.file.file_path)),
        records: read.filter((r) => r.offset > hi),
      });
    }
    // An offset both hold (two files holding one record, written by another engine) is served once.
    const held = withLetters(
      spill ? spill.records.filter((r) => r.offset >= lo && r.offset <= hi) : [],
      read.filter((r) => r.offset <= hi),
    );
    const records = withLetters(
      held,
      letters.filter((r) => r.offset <= hi),
    );
    const batches: CachedBatch[] = [];
    let bytes = BATCH_OVERHEAD;
    for (const group of groupIntoBatches(records)) {
      const encoded = await buildBatch(group);
      batches.push({ base: group[0].offset, last: group[group.length - 1].offset, bytes: encoded });
      bytes += encoded.length + BATCH_OVERHEAD;
    }
    // The next chunk worth reading: right after this one while a file goes on past it, else the next
    // file's first offset (a gap the table does not hold is skipped in one step).
    let next = letters.find((r) => r.offset > hi)?.offset;
    if (hi < last)
      for (const f of planned?.files ?? []) {
        const at = f.lower > hi ? f.lower : f.upper === undefined || f.upper > hi ? hi + 1n : undefined;
        if (at !== undefined && at <= last && (next === undefined || at < next)) next = at;
      }
    return { batches, next, bytes };
  }

  private takeSpill(key: string): Spill | undefined {
    const spill = this.spills.get(key);
    this.spills.delete(key);
    return spill;
  }

  private putSpill(key: string, spill: Spill): void {
    this.spills.delete(key);
    this.spills.set(key, spill);
    for (const oldest of this.spills.keys()) {
      if (this.spills.size <= MAX_SPILLS) break;
      this.spills.delete(oldest);
    }
  }

  /**
   * Builds the chunk a consumer will ask for next while it takes in this answer, as a broker's
   * read-ahead does: only with a build slot free and nobody waiting, so it never delays a fetch; its
   * failure is dropped (the fetch that needs the chunk builds it again).
   */
  private readAhead(key: string, build: () => Promise<Chunk>): void {
    if (this.building >= BUILDS_AT_ONCE || this.queue.length > 0) return;
    this.cache.get(key, () => this.limited(build)).catch(() => undefined);
  }

  private async limited<T>(work: () => Promise<T>): Promise<T> {
    // A finished build hands its slot straight to the next waiter, so no newcomer slips in between.
    if (this.building >= BUILDS_AT_ONCE) await new Promise<void>((resolve) => this.queue.push(resolve));
    else this.building++;
    try {
      return await work();
    } finally {
      const next = this.queue.shift();
      if (next) next();
      else this.building--;
    }
  }
}
