/**
 * Row lineage kept through a rewrite (spec, "Row Lineage": a row moved to another file keeps its
 * `_row_id` and `_last_updated_sequence_number`, written as columns of the new file). A row's values are
 * the file's physical columns where non-null (a file compacted before carries them), else inherited:
 * `_row_id` = the file's `first_row_id` + the row's position, `_last_updated_sequence_number` = the
 * file's data sequence number. The new file holds them explicitly, so the row ids its manifest is given
 * on commit (table/row-lineage.ts) go unused, a gap the spec allows, as in Iceberg Java.
 *
 * A file without a `first_row_id` (its rows never had ids: added before an upgrade to v3 and not yet
 * given ids) keeps a null `_row_id`: the new file's inherited ids are those rows' first ids.
 */
import * as arrow from 'apache-arrow';
import type { Schema, StructField } from '../spec/types.js';

/** Reserved field ids of the spec's row-lineage metadata columns. */
export const ROW_ID_FIELD_ID = 2147483540;
export const LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID = 2147483539;

const LINEAGE_FIELDS: readonly StructField[] = [
  { id: ROW_ID_FIELD_ID, name: '_row_id', required: false, type: 'long' },
  {
    id: LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID,
    name: '_last_updated_sequence_number',
    required: false,
    type: 'long',
  },
];

/** The schema a rewritten v3 file is written with: the table's, then the two lineage columns. Never throws. */
export function withLineageFields(schema: Schema): Schema {
  return { ...schema, fields: [...schema.fields, ...LINEAGE_FIELDS] };
}

/** Where a batch of a file's rows starts, and what that file's rows inherit. */
export interface LineageSource {
  /** The file's first_row_id (null: its rows have no ids yet). */
  firstRowId: bigint | null | undefined;
  dataSequenceNumber: bigint;
  /** The position in the file of the batch's first row. */
  position: number;
}

/**
 * The batch's `_row_id` and `_last_updated_sequence_number` columns with inherited values filled in.
 * `rowId` and `sequence` are the file's columns as projected (BigInt64 longs; all null where the file
 * lacks them). Never throws.
 */
export function fillLineage(
  rowId: arrow.Data,
  sequence: arrow.Data,
  source: LineageSource,
): [arrow.Data, arrow.Data] {
  const first = source.firstRowId;
  const ids = fill(rowId, (r) =>
    first === null || first === undefined ? null : first + BigInt(source.position + r),
  );
  return [ids, fill(sequence, () => source.dataSequenceNumber)];
}

function fill(data: arrow.Data, inherited: (row: number) => bigint | null): arrow.Data {
  const length = data.length;
  const values = new BigInt64Array(length);
  const physical = data.values as BigInt64Array | undefined;
  const bitmap = data.nullCount > 0 ? data.nullBitmap : undefined;
  const validity = new Uint8Array((length + 7) >> 3);
  let nullCount = 0;
  for (let r = 0; r < length; r++) {
    const at = data.offset + r;
    const present =
      physical !== undefined && physical.length > at && (!bitmap || (bitmap[at >> 3] >> (at & 7)) & 1);
    const value = present ? physical[at] : inherited(r);
    if (value === null) {
      nullCount++;
      continue;
    }
    values[r] = value;
    validity[r >> 3] |= 1 << (r & 7);
  }
  return arrow.makeData({
    type: new arrow.Int64(),
    length,
    nullCount,
    ...(nullCount > 0 ? { nullBitmap: validity } : {}),
    data: values,
  });
}
