/**
 * The exactly-once round: every change floe commits for written files (a batch's rows, a DLQ's
 * letters, redriven dead letters) goes through here, on top of the one commit loop (commit-loop.ts;
 * maintenance commits its actions through that loop directly and cleans up after them itself):
 *
 *   write(base) → commit loop, whose prepare(base, files) answers
 *     change → committed (files are in the table) / already-committed (files are spare: deleted)
 *     stale  → the files no longer fit the base: delete them and write again on a fresh base (≤ 3 times)
 *   an unknown outcome (CommitStateUnknownError) keeps the files: they may be in the table
 *   any other failure deletes them (through the one delete guard, io/confined-delete.ts)
 *
 * `prepare` says what happened instead of throwing (table/actions/table-action.ts): the loop is stopped
 * by a result, not a sentinel.
 */
import type { Catalog, LoadedTable } from '../catalog/catalog.js';
import { CommitStateUnknownError, LakeError } from '../errors.js';
import { TableArea } from '../io/confined-delete.js';
import type { TableIdentifier } from '../spec/types.js';
import type { Prepared, Stale } from './actions/table-action.js';
import { type CommitOptions, type CommitOutcome, type CommitResult, commitAction } from './commit-loop.js';

/** A stale base after the last rewrite: the batch is retryable (a redelivery starts over). */
export class StaleBaseError extends LakeError {
  constructor(message: string) {
    super(message, { retryable: true });
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
  /** Checks the files against a commit attempt's base and builds the change (or answers stale). */
  prepare(base: LoadedTable, files: T, attempt: number): Promise<Prepared<Stale>>;
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
    let outcome: CommitOutcome<Stale>;
    try {
      outcome = await commitAction<Stale>(
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
