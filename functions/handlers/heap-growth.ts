/**
 * How far V8 lets the old generation grow between mark-compacts, for a function Lambda gives a fixed
 * memory to.
 *
 * Lambda's Node.js bootstrap starts node with `--max-old-space-size` = 90 % of the function's memory. V8
 * reads a heap limit under 2 GiB as a small device's and grows the old generation by at most 1.3–2× after
 * each mark-compact (4× from 2 GiB up). A 6 MB batch leaves ~40 MiB live in the old generation and promotes
 * ~15 MiB more, and V8 also starts marking whenever the old generation's room is below the young
 * generation's capacity (the bootstrap's semi-space is memory / 20), so a 512 or 1024 MB function ran a
 * mark-compact nearly every batch: 96–133 ms CPU per batch, against ~72 with the growth V8 itself allows a
 * larger heap (measured handler after handler under the bootstrap's flags: test/bench/ingest-lambda-heap.ts).
 * The function's memory is its own and paid for either way; its CPU time is what the batch costs.
 *
 * `--heap-growing-percent` is V8's own knob for this factor, read at every mark-compact (so it can be set
 * after start-up). The allocation limit stays bounded by the old space the bootstrap set: V8 still
 * collects before it runs out, only later. Peak RSS measured under the 1024 MB flags rose from ~350 to
 * ~475 MiB, under the 512 MB flags at 200 % from ~265 to ~315 MiB.
 */
import { setFlagsFromString } from 'node:v8';
import { ValidationError } from '../core/errors.js';

/** The growth per function memory: V8's 4× from 1024 MB up, 3× from 512, V8's own choice below. */
export function defaultHeapGrowingPercent(memoryMb: number): number | undefined {
  if (memoryMb >= 1024) return 300;
  if (memoryMb >= 512) return 200;
  return undefined;
}

/**
 * The growth to set, or undefined to leave V8's: only inside Lambda (AWS_LAMBDA_FUNCTION_MEMORY_SIZE), and
 * FLOE_HEAP_GROWING_PERCENT overrides the default (0 leaves V8's choice).
 * @throws ValidationError for a FLOE_HEAP_GROWING_PERCENT that is not a whole number from 0 to 1000
 */
export function heapGrowingPercent(env: NodeJS.ProcessEnv): number | undefined {
  const override = env.FLOE_HEAP_GROWING_PERCENT;
  if (override !== undefined && override !== '') {
    const percent = Number(override);
    if (!Number.isInteger(percent) || percent < 0 || percent > 1000) {
      throw new ValidationError(
        `FLOE_HEAP_GROWING_PERCENT must be a whole number from 0 (V8's own choice) to 1000, not "${override}"`,
      );
    }
    return percent === 0 ? undefined : percent;
  }
  const memory = Number(env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE);
  if (!Number.isFinite(memory) || memory <= 0) return undefined;
  return defaultHeapGrowingPercent(memory);
}

/** Sets the growth for this process (once, at a cold start); returns what was set. */
export function tuneHeapGrowth(
  env: NodeJS.ProcessEnv = process.env,
  setFlags: (flags: string) => void = setFlagsFromString,
): number | undefined {
  const percent = heapGrowingPercent(env);
  if (percent !== undefined) setFlags(`--heap-growing-percent=${percent}`);
  return percent;
}
