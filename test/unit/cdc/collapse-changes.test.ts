import { describe, expect, it } from 'vitest';
import { collapseChanges } from '../../../functions/core/cdc/collapse-changes.js';
import type { Change } from '../../../functions/core/cdc/extract-changes.js';
import { keyFromRow } from '../../../functions/core/cdc/record-key.js';
import type { Row } from '../../../functions/core/spec/types.js';
import { ID_KEY, rawRecord } from './cdc-fixtures.js';

function change(offset: number, id: number, row: Row | null, mayExist: boolean, partition = 0): Change {
  return {
    record: rawRecord(offset, null, null, { partition }),
    key: keyFromRow({ id: BigInt(id) }, ID_KEY),
    row,
    mayExist,
  };
}

describe('collapseChanges', () => {
  it('keeps the last change per key in offset order, and whether older rows must go', () => {
    // Prepare: given out of order on purpose; offsets decide
    const changes = [
      change(3, 1, { id: 1n, v: 'third' }, true),
      change(1, 1, { id: 1n, v: 'first' }, false),
      change(2, 2, { id: 2n, v: 'created' }, false),
      change(4, 3, { id: 3n, v: 'created' }, false),
      change(5, 3, null, true),
      change(6, 4, { id: 4n, v: 'created' }, false),
      change(7, 4, null, false),
    ];

    // Act
    const { finals, warnings } = collapseChanges(changes, ID_KEY);

    // Assess
    expect(warnings).toEqual([]);
    expect(finals.map((f) => [f.key.values[0], f.row?.v ?? null, f.deleteExisting])).toEqual([
      [1n, 'third', true],
      [2n, 'created', false],
      [3n, null, true],
      [4n, null, false],
    ]);
  });

  it('warns when one key changes on two Kafka partitions in one batch', () => {
    const { finals, warnings } = collapseChanges(
      [change(10, 7, { id: 7n }, true, 0), change(3, 7, null, true, 1), change(4, 8, null, true, 1)],
      ID_KEY,
    );
    expect(finals).toHaveLength(2);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^1 key\(s\) changed on more than one Kafka partition in one batch \(id=7 on db\.public\.items\/0 and db\.public\.items\/1\)/,
    );
  });
});
