/**
 * A bounded least-recently-used cache, and an async loader on top of it that shares one in-flight
 * promise per key. Written by hand (a Map keeps insertion order, which is all an LRU needs); a
 * dependency for 40 lines is not worth it.
 */

export class LruCache<K, V> {
  readonly #entries = new Map<K, V>();
  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError('capacity must be a positive integer');
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: K): V | undefined {
    const value = this.#entries.get(key);
    if (value === undefined) return undefined;
    // Re-inserting moves the key to the young end.
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.capacity) {
      const oldest = this.#entries.keys().next().value as K;
      this.#entries.delete(oldest);
    }
  }

  delete(key: K): void {
    this.#entries.delete(key);
  }
}

/**
 * Loads values by key at most once while they stay cached: concurrent callers of a key share one
 * load; a successful load is cached (schemas by id never change); a failed load is not cached unless
 * `cacheFailure` says the error is permanent, and then only for `failureTtlMs`.
 */
export class CachedLoader<K, V> {
  readonly #values: LruCache<K, { value: V } | { error: unknown; until: number }>;
  readonly #inFlight = new Map<K, Promise<V>>();

  constructor(
    private readonly load: (key: K) => Promise<V>,
    private readonly options: {
      capacity: number;
      cacheFailure?: (error: unknown) => boolean;
      failureTtlMs?: number;
      now?: () => number;
    },
  ) {
    this.#values = new LruCache(options.capacity);
  }

  /** @throws whatever `load` throws */
  async get(key: K): Promise<V> {
    const cached = this.#values.get(key);
    if (cached !== undefined) {
      if ('value' in cached) return cached.value;
      if (cached.until > this.#now()) throw cached.error;
      this.#values.delete(key);
    }
    const pending = this.#inFlight.get(key);
    if (pending) return pending;
    const promise = this.load(key).then(
      (value) => {
        this.#values.set(key, { value });
        return value;
      },
      (error: unknown) => {
        if (this.options.cacheFailure?.(error)) {
          this.#values.set(key, { error, until: this.#now() + (this.options.failureTtlMs ?? 30_000) });
        }
        throw error;
      },
    );
    this.#inFlight.set(key, promise);
    try {
      return await promise;
    } finally {
      this.#inFlight.delete(key);
    }
  }

  #now(): number {
    return (this.options.now ?? Date.now)();
  }
}
