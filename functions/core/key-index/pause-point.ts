/**
 * Crash tests' hook: with `FLOE_TEST_PAUSE_AT` naming a step, the process writes the step's name to
 * `FLOE_TEST_PAUSE_FILE` when it gets there and then waits to be killed, so a test can SIGKILL a real
 * `floe` child at exactly that step. Read here and nowhere else; unset (always, outside tests) it
 * costs one environment look-up.
 */
import { writeFileSync } from 'node:fs';

/** The steps between a CDC batch's main commit and its index commit. */
export type PausePoint = 'after-main-commit' | 'after-index-write' | 'after-index-commit';

/** Waits forever at `point` when the test hook names it; returns at once otherwise. Never throws. */
export async function pauseAt(point: PausePoint): Promise<void> {
  if (process.env.FLOE_TEST_PAUSE_AT !== point) return;
  const marker = process.env.FLOE_TEST_PAUSE_FILE;
  if (marker) writeFileSync(marker, point);
  // A timer keeps the event loop alive: an unresolved promise alone would let the process exit.
  await new Promise<never>(() => setInterval(() => undefined, 60_000));
}
