/**
 * The row-lineage columns a v3 compaction writes: a row's physical `_row_id` and
 * `_last_updated_sequence_number` are kept where non-null, the rest inherited from its file (first row
 * id + position, the data sequence number); a file without a first row id leaves `_row_id` null.
 */
import * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { fillLineage } from '../../../functions/core/maintenance/lineage-columns.js';

/** A long column as the projection gives it: values with nulls where `null`. */
function longs(values: readonly (bigint | null)[]): arrow.Data {
  return arrow.vectorFromArray(values, new arrow.Int64()).data[0];
}

const read = (data: arrow.Data) => [...arrow.makeVector(data)].map((v) => (v === null ? null : BigInt(v)));

describe('row-lineage columns of a rewritten file', () => {
  it('keeps physical values and inherits the rest from the file and the row position', () => {
    // Prepare: rows 10..13 of a file, two with lineage written by an earlier compaction
    const rowIds = longs([500n, null, 7n, null]);
    const sequences = longs([3n, null, null, 9n]);

    // Act
    const [ids, seqs] = fillLineage(rowIds, sequences, {
      firstRowId: 100n,
      dataSequenceNumber: 12n,
      position: 10,
    });

    // Assess
    expect(read(ids)).toEqual([500n, 111n, 7n, 113n]);
    expect(read(seqs)).toEqual([3n, 12n, 12n, 9n]);
  });

  it('leaves _row_id null for a file whose rows have no ids yet (added before an upgrade to v3)', () => {
    // Act
    const [ids, seqs] = fillLineage(longs([null, 4n]), longs([null, null]), {
      firstRowId: null,
      dataSequenceNumber: 2n,
      position: 0,
    });

    // Assess
    expect(read(ids)).toEqual([null, 4n]);
    expect(ids.nullCount).toBe(1);
    expect(read(seqs)).toEqual([2n, 2n]);
  });
});
