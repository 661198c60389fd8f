/**
 * How a maintenance result reports the deletes the guard (io/confined-delete.ts) refused: paths that
 * metadata named or a listing found but that are not the table's own. They are never deleted; the
 * result (logged by the handler, summarised by `floe maintain`) says which and why.
 */
import type { RefusedDelete } from '../io/confined-delete.js';

export interface DeleteRefusals {
  /** Deletes refused: paths outside the table's own files. */
  refused: number;
  /** The first of them, with the reason (the result may travel in a Step Functions state). */
  refusedSample: RefusedDelete[];
}

/** The report of `refused`, naming at most `sampleSize` of them. Never throws. */
export function reportRefusals(refused: readonly RefusedDelete[], sampleSize = 100): DeleteRefusals {
  return { refused: refused.length, refusedSample: refused.slice(0, sampleSize) };
}
