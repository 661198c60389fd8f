/**
 * Starts a new offset epoch for a topic (or some of its partitions) of a table: the way on after an
 * OffsetIdentityError, when the topic's history really changed (recreated, a new cluster, a failover)
 * and the table is to follow the new one. One snapshot with no data change moves the partitions'
 * committed ranges and marks to `floe.offset-epochs` (table/offset-epochs.ts) and leaves the committed
 * state empty for them, so the next batches are checked against the new epoch only and land as new.
 * Rows already in the table stay; their epoch is told by the snapshot that added them.
 */
import type { Catalog } from '../../catalog/catalog.js';
import { formatIdentifier } from '../../catalog/catalog.js';
import { currentSnapshot } from '../../spec/metadata.js';
import type { SnapshotId, TableIdentifier } from '../../spec/types.js';
import { type CommitOptions, commitAction } from '../commit-loop.js';
import { encodeOffsetEpochs, type Rebased, rebaseEpochs } from '../offset-epochs.js';
import { encodeOffsetMarks } from '../offset-marks.js';
import type { OffsetRange } from '../offset-ranges.js';
import { prepareSnapshot } from '../snapshot-producer.js';
import {
  BATCH_ID_KEY,
  EPOCHS_KEY,
  encodeOffsets,
  findInAncestry,
  MARKS_KEY,
  OFFSETS_KEY,
  readCommittedState,
} from '../source-offsets.js';
import type { Noop } from './table-action.js';

/** Marks the snapshot a rebase committed (the topic it rebased). */
export const REBASED_KEY = 'floe.offsets-rebased';

export interface RebaseResult {
  table: string;
  status: 'rebased' | 'nothing-committed';
  snapshotId?: SnapshotId;
  /** The partitions whose epoch was closed: the epoch they are in now and the ranges moved aside. */
  closed: { partition: number; epoch: number; ranges: readonly OffsetRange[] }[];
}

/**
 * Closes the current offset epoch of `topic`'s partitions (all with committed offsets, or `partitions`)
 * in one table. Partitions with nothing committed are left as they are (no epoch to close).
 * @throws CommitFailedError / CommitStateUnknownError / LockTimeoutError from the commit loop
 * @throws ValidationError when the table's summary holds offsets floe did not write
 */
export async function rebaseOffsets(
  catalog: Catalog,
  id: TableIdentifier,
  topic: string,
  partitions: readonly number[] | undefined,
  options: CommitOptions = {},
): Promise<RebaseResult> {
  let rebased: Rebased | undefined;
  const outcome = await commitAction<Noop<'nothing-committed'>>(
    catalog,
    id,
    {
      prepare: async (base) => {
        const state = readCommittedState(base.metadata);
        const last = currentSnapshot(base.metadata)?.['snapshot-id'];
        rebased = rebaseEpochs(state, topic, partitions, last, Date.now());
        if (rebased.closed.length === 0) return { kind: 'noop', reason: 'nothing-committed' };
        const batch = findInAncestry(base.metadata, BATCH_ID_KEY);
        const change = await prepareSnapshot(base, {
          operation: 'replace',
          addedDataFiles: [],
          addedDeleteFiles: [],
          summary: {
            // The newest batch stays recognisable after older snapshots expire (as an offsets anchor).
            ...(batch === undefined ? {} : { [BATCH_ID_KEY]: batch }),
            [OFFSETS_KEY]: encodeOffsets(rebased.offsets),
            [MARKS_KEY]: encodeOffsetMarks(rebased.marks),
            [EPOCHS_KEY]: encodeOffsetEpochs(rebased.epochs),
            [REBASED_KEY]: topic,
          },
        });
        return { kind: 'change', change };
      },
    },
    options,
  );
  const table = formatIdentifier(id);
  if (outcome.kind !== 'committed') return { table, status: 'nothing-committed', closed: [] };
  return {
    table,
    status: 'rebased',
    snapshotId: outcome.result.snapshotId,
    closed: rebased?.closed ?? [],
  };
}
