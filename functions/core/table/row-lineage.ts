/**
 * v3 row lineage at commit (spec, "Row Lineage"), as Iceberg Java's ManifestListWriter assigns it: the
 * snapshot's `first-row-id` is the base's `next-row-id`; each data manifest in the new list that has no
 * `first_row_id` yet (added by this snapshot, merged or rewritten by it, or carried from before an
 * upgrade to v3) takes the next ids, as many as its existing and added rows; `added-rows` is how many
 * ids that handed out, and the catalog raises `next-row-id` by it (catalog/apply-updates.ts). Manifests
 * carried with a `first_row_id` keep it. A data file in a manifest keeps its explicit `first_row_id`;
 * one without inherits from its manifest when read (manifest/manifest-reader.ts), so an EXISTING entry
 * copied into a merged manifest keeps the ids it had. Ids are counted per rewritten manifest rather than
 * per row without one (the spec allows gaps), exactly as Java does. Recomputed on every attempt: a
 * rebase on a newer base starts from that base's `next-row-id`.
 */
import { ValidationError } from '../errors.js';
import type { ManifestFile, TableMetadata } from '../spec/types.js';

export interface AssignedRowIds {
  manifests: ManifestFile[];
  /** The snapshot's `first-row-id` (the base's `next-row-id`). */
  firstRowId: number;
  /** How many row ids the snapshot assigned (`added-rows`). */
  addedRows: number;
}

/**
 * Gives each data manifest without a `first_row_id` the next row ids, in list order.
 * @throws ValidationError when the row ids would pass 2^53 (metadata JSON numbers stop being exact)
 */
export function assignFirstRowIds(md: TableMetadata, manifests: readonly ManifestFile[]): AssignedRowIds {
  const firstRowId = md['next-row-id'] ?? 0;
  let next = BigInt(firstRowId);
  const out = manifests.map((m) => {
    if (m.content !== 0 || (m.first_row_id !== null && m.first_row_id !== undefined)) return m;
    const assigned = { ...m, first_row_id: next };
    next += m.existing_rows_count + m.added_rows_count;
    return assigned;
  });
  if (next > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new ValidationError(`row ids would pass ${Number.MAX_SAFE_INTEGER}: next-row-id ${next}`);
  }
  return { manifests: out, firstRowId, addedRows: Number(next) - firstRowId };
}
