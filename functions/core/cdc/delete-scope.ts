/**
 * Where a CDC batch's equality deletes live. An equality delete reaches only data files of its own
 * spec and partition, unless its spec is unpartitioned (then it reaches every file). So deletes are
 * written per partition only when the key alone decides a row's partition — every partition field
 * of the default spec is a transform of an identifier column — and every live data file is of that
 * spec; otherwise a row may sit in a partition its key does not tell (an update moved it, or an older
 * spec placed it), and the deletes are written with an unpartitioned spec. A partitioned table has
 * no such spec at first: the batch then adds one (`add-spec`, never made the default).
 */
import type { LoadedTable } from '../catalog/catalog.js';
import type { TableRequirement, TableUpdate } from '../catalog/requirements-updates.js';
import { readManifestList } from '../manifest/manifest-list.js';
import { isUnpartitioned } from '../scan/delete-index.js';
import { currentSnapshot, defaultSpec } from '../spec/metadata.js';
import { addSpec } from '../table/actions/evolve-partition-spec.js';
import type { PartitionSpec } from '../spec/types.js';

export interface DeleteScope {
  kind: 'partitioned' | 'unpartitioned';
  /** The spec the delete files are written with. */
  spec: PartitionSpec;
  /** `add-spec` when the unpartitioned spec is new, committed with the batch. */
  preUpdates: TableUpdate[];
  preRequirements: TableRequirement[];
}

/** Whether the live data files are all of spec `specId` (reads the manifest list only). */
async function dataOnlyInSpec(table: LoadedTable, specId: number): Promise<boolean> {
  const snapshot = currentSnapshot(table.metadata);
  if (!snapshot) return true;
  const manifests = await readManifestList(table.io, snapshot['manifest-list']);
  return manifests.every(
    (m) =>
      m.content !== 0 || m.partition_spec_id === specId || m.added_files_count + m.existing_files_count === 0,
  );
}

/**
 * The scope for equality deletes on `keyIds` in the table as it is now.
 * @throws NotFoundError / TransientIOError from reading the manifest list
 */
export async function planDeleteScope(table: LoadedTable, keyIds: readonly number[]): Promise<DeleteScope> {
  const md = table.metadata;
  const spec = defaultSpec(md);
  const none = { preUpdates: [], preRequirements: [] };
  if (isUnpartitioned(spec)) return { kind: 'unpartitioned', spec, ...none };
  const keyDecides = spec.fields.every((f) => f.transform === 'void' || keyIds.includes(f['source-id']));
  if (keyDecides && (await dataOnlyInSpec(table, spec['spec-id'])))
    return { kind: 'partitioned', spec, ...none };
  const existing = md['partition-specs'].find((s) => s.fields.length === 0);
  if (existing) return { kind: 'unpartitioned', spec: existing, ...none };
  const added: PartitionSpec = {
    'spec-id': Math.max(...md['partition-specs'].map((s) => s['spec-id'])) + 1,
    fields: [],
  };
  // Another writer evolving the specs meanwhile would take this spec id: commit only on the specs
  // this one was planned against.
  const change = addSpec(md, added);
  return {
    kind: 'unpartitioned',
    spec: added,
    preUpdates: change.updates,
    preRequirements: change.requirements,
  };
}

/** Whether delete files written for `written` are still right on a base planned as `now`. Never throws. */
export function sameScope(written: DeleteScope, now: DeleteScope): boolean {
  return (
    written.kind === now.kind &&
    written.spec['spec-id'] === now.spec['spec-id'] &&
    written.spec.fields.length === now.spec.fields.length
  );
}
