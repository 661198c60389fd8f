/**
 * Keeps floe's committed offsets safe from snapshot expiry floe does not control (S3 Tables' own
 * snapshot management). Readers find `floe.committed-offsets` by walking back from the current snapshot;
 * when another engine's snapshots (S3 Tables compaction) sit on top, the walk passes them — until the
 * older floe snapshots expire and the walk ends empty-handed. Anchoring commits a snapshot with no data
 * change (same manifests, operation `replace`) that carries the offsets and the batch id again at the top.
 */
import type { Catalog } from '../../catalog/catalog.js';
import { currentSnapshot } from '../../spec/metadata.js';
import type { TableIdentifier } from '../../spec/types.js';
import type { Noop } from './table-action.js';
import { type CommitOptions, commitAction } from '../commit-loop.js';
import { prepareSnapshot } from '../snapshot-producer.js';
import { findInAncestry, OFFSETS_KEY } from '../source-offsets.js';
import { carriedFloeSummary } from '../carried-summary.js';

export interface AnchorResult {
  status: 'anchored' | 'not-needed';
  snapshotId: string | null;
}

/**
 * Commits an offsets anchor when the current snapshot lacks floe's offsets and an ancestor has them.
 * @throws CommitFailedError / CommitStateUnknownError / LockTimeoutError from the commit loop
 */
export async function anchorCommittedOffsets(
  catalog: Catalog,
  id: TableIdentifier,
  options: CommitOptions = {},
): Promise<AnchorResult> {
  const outcome = await commitAction<Noop<'not-needed'>>(
    catalog,
    id,
    {
      prepare: async (base) => {
        const current = currentSnapshot(base.metadata);
        const offsets = findInAncestry(base.metadata, OFFSETS_KEY);
        if (!current || current.summary[OFFSETS_KEY] !== undefined || offsets === undefined) {
          return { kind: 'noop', reason: 'not-needed' };
        }
        // prepareSnapshot carries the offsets (and the other carried keys) up from the ancestry.
        const change = await prepareSnapshot(base, {
          operation: 'replace',
          addedDataFiles: [],
          addedDeleteFiles: [],
          summary: {
            ...carriedFloeSummary(base.metadata),
            [OFFSETS_KEY]: offsets,
            'floe.offsets-anchor': 'true',
          },
        });
        return { kind: 'change', change };
      },
    },
    options,
  );
  if (outcome.kind === 'noop') return { status: 'not-needed', snapshotId: null };
  const { snapshotId } = outcome.result;
  return { status: 'anchored', snapshotId: snapshotId === undefined ? null : String(snapshotId) };
}
