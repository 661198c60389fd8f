/**
 * The exactly-once round: every change floe commits for written files (a batch's rows, a DLQ's
 * letters, redriven dead letters) and every maintenance change goes through here, on top of the one
 * commit loop (commit-loop.ts):
 *
 *   write(base) → commit loop, whose prepare(base, files) answers
 *     change → committed (files are in the table) / already-committed (files are spare: deleted)
 *     noop   → nothing to commit on this base (the change is done, or there is nothing to do)
 *     stale  → the files no longer fit the base: delete them and write again on a fresh base (≤ 3 times)
 *   an unknown outcome (CommitStateUnknownError) keeps the files: they may be in the table
 *   any other failure deletes them (through the one delete guard, io/confined-delete.ts)
 *
 * `prepare` says what happened instead of throwing: the loop is stopped by a result, not a sentinel.
 */
import type { Catalog, LoadedTable } from '../catalog/catalog.js';
import { CommitStateUnknownError, LakeError } from '../errors.js';
import { TableArea } from '../io/confined-delete.js';
import type { TableIdentifier } from '../spec/types.js';
import type { CommitOptions, CommitResult, PreparedChange } from './commit-loop.js';
import { commitWithRetry } from './commit-loop.js';

/** The files no longer fit the base being committed on (another writer moved it meanwhile). */
export interface Stale {
  kind: 'stale';
  reason: string;
}

/** Nothing to commit on this base; `reason` tells the caller why. */
export interface Noop<R extends string> {
  kind: 'noop';
  reason: R;
}

/** What `prepare` answers for one base. */
export type Prepared<R extends string = never> = { kind: 'change'; change: PreparedChange } | Noop<R> | Stale;

export type ChangeOutcome<R extends string = never> =
  | { kind: 'committed'; result: CommitResult }
  | Noop<R>
  | Stale;

/** A stale base after the last rewrite: the batch is retryable (a redelivery starts over). */
export class StaleBaseError extends LakeError {
  constructor(message: string) {
    super(message, { retryable: true });
  }
}

/** Carries a noop/stale answer out of the commit loop; never leaves this file. */
class Answered extends Error {
  constructor(readonly answer: Noop<string> | Stale) {
    super(answer.reason);
  }
}

/**
 * Commits the change `prepare` builds on each base, or stops with its noop/stale answer.
 * @throws as commitWithRetry (an answer while an attempt may still land is CommitStateUnknownError)
 */
export async function commitChange<R extends string = never>(
  catalog: Catalog,
  id: TableIdentifier,
  action: { batchId?: string; prepare(base: LoadedTable, attempt: number): Promise<Prepared<R>> },
  options: CommitOptions = {},
): Promise<ChangeOutcome<R>> {
  try {
    const result = await commitWithRetry(
      catalog,
      id,
      {
        batchId: action.batchId,
        prepare: async (base, attempt) => {
          const prepared = await action.prepare(base, attempt);
          if (prepared.kind === 'change') return prepared.change;
          throw new Answered(prepared);
        },
      },
      options,
    );
    return { kind: 'committed', result };
  } catch (error) {
    if (error instanceof Answered) return error.answer as Noop<R> | Stale;
    throw error;
  }
}

export interface FilesRound<T> {
  /** Deterministic id of the change (floe.batch-id), or how to derive it from what was written. */
  batchId: string | ((files: T) => string);
  /** The table as the caller loaded it: the first round's base. */
  loaded?: LoadedTable;
  /** Writes the files for a base; `undefined` when nothing is left to write on it. */
  write(base: LoadedTable): Promise<T | undefined>;
  /** The locations of what `write` wrote (deleted when they certainly did not land). */
  paths(files: T): string[];
  /** Checks the files against a commit attempt's base and builds the change. */
  prepare(base: LoadedTable, files: T, attempt: number): Promise<Prepared>;
}

export type FilesOutcome<T> =
  | { kind: 'nothing-to-write' }
  | { kind: 'committed'; result: CommitResult; files: T };

/** The rounds a stale base is rewritten before the batch gives up (retryably). */
const STALE_REWRITES = 3;

/**
 * Writes files and commits them exactly once (see the file comment).
 * @throws StaleBaseError when the base moved under the files more than 3 times (retryable)
 * @throws LakeError subclasses from writing and committing; files are kept on CommitStateUnknownError
 */
export async function commitFilesOnce<T>(
  catalog: Catalog,
  id: TableIdentifier,
  round: FilesRound<T>,
  options: CommitOptions = {},
): Promise<FilesOutcome<T>> {
  for (let n = 0; ; n++) {
    // The caller's table serves the first round; the commit checks it is still current.
    const table = n === 0 && round.loaded ? round.loaded : await catalog.loadTable(id);
    const files = await round.write(table);
    if (files === undefined) return { kind: 'nothing-to-write' };
    const drop = () => deleteWritten(table, round.paths(files));
    let outcome: ChangeOutcome;
    try {
      outcome = await commitChange(
        catalog,
        id,
        {
          batchId: typeof round.batchId === 'string' ? round.batchId : round.batchId(files),
          prepare: (base, attempt) => round.prepare(base, files, attempt),
        },
        { ...options, base: table },
      );
    } catch (error) {
      // After an unknown outcome the files may be part of the table: never delete them.
      if (!(error instanceof CommitStateUnknownError)) await drop();
      throw error;
    }
    if (outcome.kind === 'committed') {
      if (outcome.result.status === 'already-committed') await drop();
      return { kind: 'committed', result: outcome.result, files };
    }
    await drop();
    if (n >= STALE_REWRITES) throw new StaleBaseError(outcome.reason);
  }
}

async function deleteWritten(table: LoadedTable, paths: string[]): Promise<void> {
  // Through the one delete guard: only the table's own files go, failures stay as orphans.
  if (paths.length > 0) await new TableArea(table).delete(paths);
}
