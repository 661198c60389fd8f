/** Findings of one check are listed up to a cap, the rest summed into one line (bounded output and memory). */
import { describe, expect, it } from 'vitest';
import { FindingList, MAX_LISTED } from '../../../functions/core/verify/findings.js';

describe('FindingList', () => {
  it('lists MAX_LISTED places per check, then one line counting the rest', () => {
    // Prepare
    const list = new FindingList();
    // Act
    for (let i = 0; i < MAX_LISTED + 5; i++) {
      list.add({ check: 'missing-file', what: 'data file does not exist', where: `f${i}`, count: 2n });
    }
    list.add({ check: 'summary-total', what: 'total-records', where: 's', count: 1n });
    // Assess
    const all = list.all();
    expect(all.filter((f) => f.check === 'missing-file')).toHaveLength(MAX_LISTED + 1);
    expect(all.filter((f) => f.check === 'summary-total')).toHaveLength(1);
    expect(all[all.length - 1]).toEqual({
      check: 'missing-file',
      what: '5 more place(s) of the same kind (not listed)',
      where: '…',
      count: 10n,
    });
  });
});
