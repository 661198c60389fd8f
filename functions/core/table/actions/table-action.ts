/**
 * What an action is (one file per kind of change in this folder): given a base, it answers with the
 * requirements + updates that make its change on that base, or says why it has none — `noop` (nothing
 * to do, or already done) or `stale` (what it was given no longer fits the base). An answer is a result,
 * not an exception: the one commit loop (../commit-loop.ts) ends with it.
 */
import type { LoadedTable } from '../../catalog/catalog.js';
import type { TableChange } from '../../catalog/requirements-updates.js';
import type { SnapshotId } from '../../spec/types.js';

export interface PreparedChange extends TableChange {
  /** The snapshot this change adds, if any (to recognise it after an unknown outcome). */
  snapshot?: { 'snapshot-id': SnapshotId };
  /** Files written for this attempt only; deleted when the attempt certainly did not land. */
  attemptFiles?: string[];
}

/** Nothing to commit on this base (the change is done, or there is nothing to do); `reason` says which. */
export interface Noop<R extends string = string> {
  kind: 'noop';
  reason: R;
}

/** What the action was given no longer fits the base (another writer moved it meanwhile). */
export interface Stale {
  kind: 'stale';
  reason: string;
}

/** Why an action has no change to commit on a base. */
export type Answer = Noop | Stale;

/** What an action's `prepare` answers for one base: a change to commit, or why there is none. */
export type Prepared<A extends Answer = never> = { kind: 'change'; change: PreparedChange } | A;

/** A change to a table (table/actions/): builds its requirements + updates on each base it is given. */
export interface TableAction<A extends Answer = never> {
  /** Deterministic id of the change (floe.batch-id); lets replays and unknown outcomes be recognised. */
  readonly batchId?: string;
  /** Called again on a fresh base after every conflict; an answer other than a change ends the loop. */
  prepare(base: LoadedTable, attempt: number): Promise<Prepared<A>>;
}
