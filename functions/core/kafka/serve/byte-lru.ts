/**
 * A least-recently-used cache bounded in bytes, with single-flight loads: callers asking for a key
 * while it is being built share that one build, so 100 consumers reading the same cold range build
 * its batches once. Hand-written: formats/lru-cache.ts bounds entries by count, not by size, and
 * npm's lru-cache is not a dependency of floe (a Map keeps insertion order, which is all an LRU needs).
 *
 * The bound holds for what the cache keeps: an entry larger than the whole bound is handed to its
 * callers and not kept. A value still referenced by a response being sent lives until that response
 * is written, so a process holds at most the bound plus the answers in flight.
 */

export interface Sized {
  /** The bytes this value holds (what the bound counts). */
  readonly bytes: number;
}

export class ByteLru<V extends Sized> {
  private readonly entries = new Map<string, V>();
  private readonly building = new Map<string, Promise<V>>();
  private held = 0;
  /** Builds started (misses that were not joined to a build in flight); for tests and the bench. */
  builds = 0;

  /** @throws RangeError for a bound that is not a positive integer */
  constructor(readonly maxBytes: number) {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 1)
      throw new RangeError(`a cache bound must be a positive number of bytes, got ${maxBytes}`);
  }

  /** Bytes of the values kept now (never over maxBytes). */
  get bytes(): number {
    return this.held;
  }

  /**
   * The value of `key`: kept, being built (joined), or built now by `build`. A failed build is not
   * kept: the next caller builds again.
   * @throws whatever `build` throws
   */
  async get(key: string, build: () => Promise<V>): Promise<V> {
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    const pending = this.building.get(key);
    if (pending) return pending;
    this.builds++;
    const promise = build().then((value) => {
      this.keep(key, value);
      return value;
    });
    this.building.set(key, promise);
    try {
      return await promise;
    } finally {
      this.building.delete(key);
    }
  }

  private keep(key: string, value: V): void {
    if (value.bytes > this.maxBytes) return;
    this.entries.set(key, value);
    this.held += value.bytes;
    for (const [k, v] of this.entries) {
      if (this.held <= this.maxBytes) break;
      this.entries.delete(k);
      this.held -= v.bytes;
    }
  }
}
