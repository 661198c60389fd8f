import { describe, expect, it } from 'vitest';
import type { KeyState } from '../../../functions/core/cdc/collapse-changes.js';
import { keyFromRow } from '../../../functions/core/cdc/record-key.js';
import type { KeyColumn } from '../../../functions/core/routing/table-mode.js';
import { overlayChanges, unionRows } from '../../../functions/core/live/overlay-changes.js';
import type { Row } from '../../../functions/core/spec/types.js';

const KEY: KeyColumn[] = [{ id: 1, name: 'id', path: ['id'], type: 'long' }];
const row = (id: number, name: string): Row => ({ id: BigInt(id), name });
const final = (id: number, name: string | null): KeyState => ({
  key: keyFromRow({ id: BigInt(id) }, KEY),
  row: name === null ? null : row(id, name),
  deleteExisting: true,
});

describe('overlayChanges: the tail’s collapsed changes over the cold rows', () => {
  it('replaces updated keys, removes deleted keys, adds new keys, keeps the rest', () => {
    // Prepare
    const cold = [row(1, 'a'), row(2, 'b'), row(3, 'c')];
    const finals = [final(2, 'b2'), final(3, null), final(4, 'd')];
    // Act
    const merged = overlayChanges(cold, finals, KEY);
    // Assess
    expect(merged.rows).toEqual([row(1, 'a'), row(2, 'b2'), row(4, 'd')]);
    expect(merged.replaced).toBe(2);
    expect(merged.added).toBe(2);
  });

  it('drops a cold row whose key the tail updates to a row the filter refuses', () => {
    const merged = overlayChanges(
      [row(1, 'a'), row(2, 'b')],
      [final(1, 'zzz')],
      KEY,
      (r) => r.name !== 'zzz',
    );
    expect(merged.rows).toEqual([row(2, 'b')]);
  });

  it('a key created and deleted in the tail leaves no row', () => {
    const merged = overlayChanges([row(1, 'a')], [final(9, null)], KEY);
    expect(merged.rows).toEqual([row(1, 'a')]);
    expect(merged.replaced).toBe(0);
  });
});

describe('unionRows: append tables', () => {
  it('puts the hot rows after the cold ones, through the filter', () => {
    const merged = unionRows([row(1, 'a')], [row(2, 'b'), row(3, 'c')], (r) => r.name !== 'c');
    expect(merged.rows).toEqual([row(1, 'a'), row(2, 'b')]);
    expect(merged.added).toBe(1);
  });
});
