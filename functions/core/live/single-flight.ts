/**
 * Sharing work between concurrent requests of `floe serve --live`, so 200 loads of one table cost one
 * Kafka read, not 200.
 *
 * Two kinds, because they promise different things:
 * - `SingleFlight`: callers with the same key while a call is running share it. Right when the key
 *   fixes the answer (a table at a given metadata file with its tail at given watermarks: the same
 *   records, the same files).
 * - `FreshFlight`: a caller only joins a call that *started after it arrived*; if one is already
 *   running, it waits for the next, which starts when the running one ends, and every caller arriving
 *   meanwhile joins that next one. Right for "where is the tail now" (the table's metadata and the
 *   high watermarks): a caller that produced a record, then asked, must see it, so an answer read
 *   before it asked will not do. At most one call runs and one waits per key, whatever the concurrency.
 */

/** Concurrent calls with the same key share one run. */
export class SingleFlight<K, V> {
  private readonly running = new Map<K, Promise<V>>();

  /** Calls `work` unless a call for `key` is running, whose result (or error) is shared. */
  run(key: K, work: () => Promise<V>): Promise<V> {
    const current = this.running.get(key);
    if (current) return current;
    const started = (async () => work())().finally(() => {
      if (this.running.get(key) === started) this.running.delete(key);
    });
    this.running.set(key, started);
    return started;
  }

  /** Keys with a call running. */
  get size(): number {
    return this.running.size;
  }
}

interface FreshState<V> {
  running?: Promise<V>;
  next?: Promise<V>;
}

/** Concurrent calls share runs that started after they arrived (see the file comment). */
export class FreshFlight<K, V> {
  private readonly states = new Map<K, FreshState<V>>();

  /** Resolves with (or rejects as) a run of `work` that started no earlier than this call. */
  run(key: K, work: () => Promise<V>): Promise<V> {
    const state = this.states.get(key) ?? {};
    this.states.set(key, state);
    if (!state.running) return this.start(key, state, work);
    state.next ??= state.running
      .then(
        () => undefined,
        () => undefined,
      )
      .then(() => {
        state.next = undefined;
        return this.start(key, state, work);
      });
    return state.next;
  }

  private start(key: K, state: FreshState<V>, work: () => Promise<V>): Promise<V> {
    const started = (async () => work())().finally(() => {
      if (state.running === started) state.running = undefined;
      if (!state.running && !state.next && this.states.get(key) === state) this.states.delete(key);
    });
    state.running = started;
    return started;
  }

  /** Keys with a call running or waiting. */
  get size(): number {
    return this.states.size;
  }
}
