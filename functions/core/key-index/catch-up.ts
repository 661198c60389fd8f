/**
 * Brings a key index up to the main table's loaded snapshot T, from the snapshot C it covers.
 *
 * Why this is sound without a cross-table transaction: the main table's commit is the truth, and the
 * index only ever says which main snapshot it reflects. Every entry is a fact of one main snapshot,
 * derived from that snapshot's own files (snapshot-facts.ts), so appending entries twice, or facts
 * another writer appended already, changes nothing a lookup sees; a crash anywhere between the main
 * commit and the index commit leaves the index covering an older snapshot, and the next writer derives
 * the missed facts again from the snapshots since C. The covered marker moves only forward along the
 * main table's history: an append is accepted only on an index base covering C or a snapshot between
 * C and T (else it is noop, when the base covers T or later, or redone from the new base). When C is
 * no longer an ancestor of T (expired, rolled back, another table of the same name) or a snapshot
 * since C cannot be turned into facts (equality deletes, deletion vectors, a file gone), the index is
 * rebuilt from a scan of T instead (a batch allows that only for a small table: `maxRebuildRows`).
 */
import type { Catalog, LoadedTable } from '../catalog/catalog.js';
import { LakeError, NotFoundError } from '../errors.js';
import type { KeyColumn } from '../routing/table-mode.js';
import { ancestors, currentSnapshot, snapshotById } from '../spec/metadata.js';
import type { Snapshot } from '../spec/types.js';
import { appendEntries } from './index-commit.js';
import type { IndexEntry } from './index-entries.js';
import { type Coverage, loadOrCreateIndex, readCoverage } from './index-table.js';
import { rebuildIndex } from './rebuild-index.js';
import { KeyReader, type KeyHints, snapshotFacts } from './snapshot-facts.js';

/** The index needs a rebuild larger than the caller allows (a batch leaves it to `floe index rebuild`). */
export class KeyIndexRebuildError extends LakeError {
  constructor(message: string) {
    super(message, { retryable: false });
  }
}

/** The main table's live rows by its summary (unknown: another writer left the total out). Never throws. */
function liveRows(snapshot: Snapshot): number | undefined {
  const total = Number(snapshot.summary['total-records']);
  const deleted = Number(snapshot.summary['total-position-deletes'] ?? '0');
  return Number.isFinite(total) && Number.isFinite(deleted) ? Math.max(0, total - deleted) : undefined;
}

/** Past this many missed snapshots a rebuild is the simpler read. */
const MAX_MISSED = 256;
const MAX_ROUNDS = 4;

export type CatchUp =
  | {
      kind: 'covered';
      index: LoadedTable;
      how: 'current' | 'caught-up' | 'rebuilt';
      snapshots: number;
      reason?: string;
    }
  /** The index covers a newer snapshot than the one loaded (another writer was faster). */
  | { kind: 'ahead'; index: LoadedTable };

/**
 * The snapshots after `covered` up to the main table's current one, oldest first; a string saying why
 * not when `covered` is not an ancestor of it (or too far back). Never throws.
 */
export function missedSnapshots(main: LoadedTable, covered: Coverage | null): Snapshot[] | string {
  if (covered === null) return 'the index covers no snapshot';
  if (covered.tableUuid !== main.metadata['table-uuid'])
    return 'the index was built for another table of that name';
  const chain = ancestors(main.metadata);
  const missed = chain.findIndex((s) => s['snapshot-id'] === covered.snapshotId);
  if (missed > MAX_MISSED || (missed < 0 && chain.length > MAX_MISSED))
    return `the index is more than ${MAX_MISSED} snapshots behind`;
  if (missed < 0) return `the covered snapshot ${covered.snapshotId} is no longer an ancestor of the table`;
  return chain.slice(0, missed).reverse();
}

/** The facts of `snapshots`, or why they cannot be read. @throws as snapshotFacts, but NotFoundError */
async function factsSince(
  main: LoadedTable,
  snapshots: readonly Snapshot[],
  reader: KeyReader,
): Promise<IndexEntry[] | string> {
  const entries: IndexEntry[] = [];
  try {
    for (const snapshot of snapshots) {
      const facts = await snapshotFacts(main, snapshot, reader);
      if (facts.kind === 'unreadable') return facts.reason;
      entries.push(...facts.entries);
    }
  } catch (error) {
    // A file of an old snapshot already removed (orphan clean-up after a rewrite): scan instead.
    if (error instanceof NotFoundError) return `a file of a missed snapshot is gone (${error.message})`;
    throw error;
  }
  return entries;
}

/**
 * Brings the index of `main` (created when missing) up to `main`'s loaded snapshot.
 * `hints`: keys already known by position (the rows the batch located), read instead of data files.
 * `maxRebuildRows`: the most live rows a rebuild may scan here. @default no limit
 * @throws KeyIndexRebuildError when a rebuild is needed and the table has more rows than allowed
 * @throws NotFoundError / TransientIOError / ValidationError from reading the main table's files;
 *   CommitFailedError / CommitStateUnknownError / LockTimeoutError from the index commit
 */
export async function catchUpIndex(
  catalog: Catalog,
  main: LoadedTable,
  columns: readonly KeyColumn[],
  options: { hints?: KeyHints; maxRebuildRows?: number } = {},
): Promise<CatchUp> {
  let index = await loadOrCreateIndex(catalog, main.identifier);
  const target = currentSnapshot(main.metadata);
  if (target === undefined) return { kind: 'covered', index, how: 'current', snapshots: 0 };
  const coverage: Coverage = {
    snapshotId: target['snapshot-id'],
    sequenceNumber: target['sequence-number'],
    tableUuid: main.metadata['table-uuid'],
  };
  const reader = new KeyReader(main, columns, options.hints);
  const rebuild = async (reason: string): Promise<CatchUp> => {
    const rows = liveRows(target);
    const max = options.maxRebuildRows;
    if (max !== undefined && (rows === undefined || rows > max)) {
      throw new KeyIndexRebuildError(
        `the key index must be rebuilt (${reason}) from ${rows ?? 'an unknown number of'} rows, more than a batch reads; run floe index rebuild`,
      );
    }
    const rebuilt = await rebuildIndex(catalog, main, target, columns, index);
    return { kind: 'covered', index: rebuilt, how: 'rebuilt', snapshots: 0, reason };
  };
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const covered = readCoverage(index);
    if (covered?.tableUuid === coverage.tableUuid) {
      if (covered.snapshotId === coverage.snapshotId)
        return { kind: 'covered', index, how: 'current', snapshots: 0 };
      // Newer than the loaded snapshot and unknown to its metadata: committed since it was loaded.
      // (A known one that is no ancestor is a rolled-back branch: rebuilt below.)
      const known = snapshotById(main.metadata, covered.snapshotId) !== undefined;
      if (covered.sequenceNumber >= coverage.sequenceNumber && !known) return { kind: 'ahead', index };
    }
    const missed = missedSnapshots(main, covered);
    const entries = typeof missed === 'string' ? missed : await factsSince(main, missed, reader);
    if (typeof entries === 'string') return rebuild(entries);
    const between = new Set([covered!.snapshotId, ...(missed as Snapshot[]).map((s) => s['snapshot-id'])]);
    const result = await appendEntries(catalog, index, entries, coverage, (base) => {
      if (base?.tableUuid === coverage.tableUuid && base.snapshotId === coverage.snapshotId) return 'noop';
      if (base?.tableUuid === coverage.tableUuid && between.has(base.snapshotId)) return 'append';
      if (base?.tableUuid === coverage.tableUuid && base.sequenceNumber >= coverage.sequenceNumber)
        return 'noop';
      return 'stale';
    });
    const count = (missed as Snapshot[]).length;
    if (result.kind === 'committed')
      return { kind: 'covered', index: result.index, how: 'caught-up', snapshots: count };
    index = await catalog.loadTable(index.identifier);
    if (result.kind === 'noop') {
      const now = readCoverage(index);
      return now?.snapshotId === coverage.snapshotId
        ? { kind: 'covered', index, how: 'current', snapshots: 0 }
        : { kind: 'ahead', index };
    }
  }
  index = await rebuildIndex(catalog, main, target, columns, index);
  return {
    kind: 'covered',
    index,
    how: 'rebuilt',
    snapshots: 0,
    reason: 'the index kept moving while it was caught up',
  };
}
