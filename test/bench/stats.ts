/** Small measuring helpers: medians, wall + CPU time of one run, a full GC between runs. */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { PerformanceObserver } from 'node:perf_hooks';

// `global.gc` without restarting node with --expose-gc: a fresh context picks up the flag.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as (options?: { type: 'minor' | 'major' }) => void;

/**
 * Collects garbage before a timed run, so a run does not pay for the garbage of the one before it
 * (which belongs to the other engine, or to the other variant, in alternating measurements).
 *
 * A regular full GC (`gc({ type: 'major' })`), as a busy process's own: it keeps hidden classes (maps)
 * no live object uses for two more GCs. Plain `gc()` is a memory-reducing GC instead
 * (collectGarbageReducingMemory), and that one deoptimises floe's code.
 */
export function collectGarbage(): void {
  gc({ type: 'major' });
}

/**
 * A memory-reducing full GC, the one plain `gc()` runs and V8's memory reducer runs on its own after
 * ~8 s of idling. It frees every map no live object uses, and V8 deoptimises each function whose
 * optimised code embeds one of them (`--trace-deopt`: "marking dependent code for deoptimization,
 * reason: weak objects"; ~130 of floe's functions after an ingest batch). Until 2026-12-01 every forced
 * GC of the bench was this one: the ingest section's DuckDB runs started after it, so each warm floe run
 * was the second batch after a deoptimisation storm (~80 instead of ~62 ms of CPU).
 */
export function collectGarbageReducingMemory(): void {
  gc();
}

/** A young-generation GC only: the objects a run leaves behind, without a full mark of the heap. */
export function collectYoungGarbage(): void {
  gc({ type: 'minor' });
}

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export interface Timed<T> {
  result: T;
  wallMs: number;
  /** User + system CPU of the whole process (every thread: DuckDB's and the WASM's count too). */
  cpuMs: number;
}

/**
 * Wall and process CPU time of one call, after a forced full GC (so earlier work's garbage is not
 * collected on its time) unless `fullGcFirst` is false (a warm process, as a Lambda's next invocation);
 * `youngGcFirst` collects the young generation only (collectYoungGarbage), `memoryReducingGcFirst`
 * runs a memory-reducing GC (collectGarbageReducingMemory) instead of the regular one.
 */
export async function timed<T>(
  fn: () => Promise<T> | T,
  options: { fullGcFirst?: boolean; youngGcFirst?: boolean; memoryReducingGcFirst?: boolean } = {},
): Promise<Timed<T>> {
  if (options.youngGcFirst) collectYoungGarbage();
  else if (options.memoryReducingGcFirst) collectGarbageReducingMemory();
  else if (options.fullGcFirst !== false) collectGarbage();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await fn();
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { result, wallMs, cpuMs: (cpu.user + cpu.system) / 1000 };
}

/** Rounds to `digits` significant-looking decimals for printing and JSON. */
export function round(value: number, digits = 1): number {
  if (!Number.isFinite(value)) return value;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** Per-second rate of `count` items done in `ms`. */
export function perSecond(count: number, ms: number): number {
  return ms > 0 ? count / (ms / 1000) : Number.NaN;
}

/**
 * Milliseconds of GC pauses (PerformanceObserver 'gc' entries: every scavenge, mark-compact and
 * incremental step V8 reports, as main-thread pause durations) that started inside [t0, t1] on
 * `performance.now()`'s clock. Durations are wall time of the main thread's pauses; the collector's
 * helper threads work in parallel beyond them. No --trace-gc needed.
 */
export class GcRecorder {
  private readonly entries: { start: number; duration: number }[] = [];
  private readonly observer: PerformanceObserver;

  constructor() {
    this.observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) this.entries.push({ start: e.startTime, duration: e.duration });
    });
    this.observer.observe({ entryTypes: ['gc'] });
  }

  /** Pause ms inside [t0, t1]; waits a tick first, as entries are delivered asynchronously. */
  async pausesBetween(t0: number, t1: number): Promise<number> {
    await new Promise((resolve) => setTimeout(resolve, 0));
    let ms = 0;
    for (const e of this.entries) if (e.start >= t0 && e.start <= t1) ms += e.duration;
    return ms;
  }

  stop(): void {
    this.observer.disconnect();
  }
}
