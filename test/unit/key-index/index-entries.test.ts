/** The latest-wins view of index entries: which row of a key is live, whatever order entries come in. */
import { describe, expect, it } from 'vitest';
import { type IndexEntry, viewOf } from '../../../functions/core/key-index/index-entries.js';

const live = (key: string, filePath: string, pos: number, seq: number): IndexEntry => ({
  key,
  filePath,
  pos: BigInt(pos),
  live: true,
  seq: BigInt(seq),
  version: null,
});
const dead = (key: string, filePath: string, pos: number, seq: number): IndexEntry => ({
  ...live(key, filePath, pos, seq),
  live: false,
});

/** Every order of `entries` (they are few). */
function orders<T>(entries: readonly T[]): T[][] {
  if (entries.length <= 1) return [[...entries]];
  return entries.flatMap((e, i) =>
    orders([...entries.slice(0, i), ...entries.slice(i + 1)]).map((rest) => [e, ...rest]),
  );
}

describe('index view', () => {
  it('keeps the newest live row of a key, whatever the order', () => {
    // Prepare: k written at seq 1, replaced at seq 3 (old row deleted, new row written in one snapshot)
    const entries = [live('k', 'a', 0, 1), dead('k', 'a', 0, 3), live('k', 'b', 4, 3)];

    // Act
    const states = orders(entries).map((o) => viewOf(o).state('k'));

    // Assess
    for (const state of states) expect(state.row).toMatchObject({ filePath: 'b', pos: 4n, seq: 3n });
  });

  it('a key whose newest row died has no live row', () => {
    // Act
    const views = orders([live('k', 'a', 0, 1), live('k', 'b', 2, 2), dead('k', 'b', 2, 5)]).map(viewOf);

    // Assess
    for (const view of views) expect(view.state('k').row).toBeNull();
  });

  it('a death of a row that was not the live one (a compaction input, an old row deleted again) hides nothing', () => {
    // Prepare: the row at a@0 was replaced at seq 2; a later snapshot deletes a@0 again and removes file a.
    const entries = [live('k', 'a', 0, 1), dead('k', 'a', 0, 2), live('k', 'b', 1, 2), dead('k', 'a', 0, 7)];

    // Act
    const states = orders(entries).map((o) => viewOf(o).state('k'));

    // Assess
    for (const state of states) expect(state.row).toMatchObject({ filePath: 'b', pos: 1n });
  });

  it('a row added and deleted in one snapshot is dead; a compaction output supersedes its input', () => {
    // Act
    const sameSnapshot = viewOf([live('k', 'a', 0, 4), dead('k', 'a', 0, 4)]).state('k');
    const moved = viewOf([live('m', 'a', 3, 1), dead('m', 'a', 3, 6), live('m', 'c', 0, 6)]).state('m');

    // Assess
    expect(sameSnapshot.row).toBeNull();
    expect(moved.row).toMatchObject({ filePath: 'c', pos: 0n, seq: 6n });
    expect(viewOf([]).state('x').row).toBeNull();
  });
});
