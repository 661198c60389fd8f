/**
 * What a table keeps of the records behind its committed ranges (floe.offset-marks): the marks of a
 * batch, their text, how they merge as ranges merge, and that they are carried like the ranges.
 */
import { describe, expect, it } from 'vitest';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import { commitWithRetry } from '../../../functions/core/table/commit-loop.js';
import {
  decodeOffsetMarks,
  encodeOffsetMarks,
  marksOf,
  mergeMarks,
  type OffsetMarks,
  recordHash,
} from '../../../functions/core/table/offset-marks.js';
import { decodeOffsetRanges, unionOffsets } from '../../../functions/core/table/offset-ranges.js';
import { prepareSnapshot } from '../../../functions/core/table/snapshot-producer.js';
import {
  committedSummary,
  MARKS_KEY,
  readCommittedState,
} from '../../../functions/core/table/source-offsets.js';
import { header, rawRecord } from '../mapping/support.js';
import { SIMPLE_SCHEMA, tempWarehouse } from '../../support/tables.js';

const enc = new TextEncoder();
const rec = (offset: number, value: string, timestamp = 1_000 + offset, partition = 0) =>
  rawRecord({ offset: BigInt(offset), value: enc.encode(value), timestamp, partition });

describe('offset marks', () => {
  it('hashes key, value and headers: any change shows, a null header value reads as an empty one', () => {
    // Prepare
    const base = rawRecord({ key: enc.encode('k'), value: enc.encode('v'), headers: [header('h', 'x')] });
    // Act
    const hashes = [
      recordHash(base),
      recordHash({ ...base, key: enc.encode('k2') }),
      recordHash({ ...base, key: null }),
      recordHash({ ...base, value: enc.encode('w') }),
      recordHash({ ...base, headers: [header('h', 'y')] }),
      recordHash({ ...base, headers: [] }),
      // the key's bytes moved into the value: the field split is hashed too
      recordHash({ ...base, key: enc.encode(''), value: enc.encode('kv') }),
    ];
    // Assess
    expect(hashes[0]).toMatch(/^[0-9a-f]{8}$/);
    expect(new Set(hashes).size).toBe(hashes.length);
    expect(recordHash({ ...base, headers: [{ key: 'h', value: null }] })).toBe(
      recordHash({ ...base, headers: [{ key: 'h', value: new Uint8Array(0) }] }),
    );
    expect(recordHash(base)).toBe(recordHash(rawRecord({ ...base })));
  });

  it("marks each partition's first and last record and its highest timestamp, whatever the order", () => {
    // Prepare: partition 0 with its newest timestamp in the middle; partition 1 of one record
    const records = [rec(5, 'a', 50), rec(6, 'b', 90), rec(7, 'c', 60), rec(3, 'z', 10, 1)];
    // Act
    const marks = marksOf(records);
    // Assess
    const p0 = marks.get('orders')!.get(0)!;
    expect(p0).toEqual([
      {
        first: { offset: 5n, timestamp: 50, hash: recordHash(records[0]) },
        last: { offset: 7n, timestamp: 60, hash: recordHash(records[2]) },
        maxTimestamp: 90,
      },
    ]);
    expect(marks.get('orders')!.get(1)![0]).toMatchObject({ first: { offset: 3n }, last: { offset: 3n } });
  });

  it('round-trips its text and refuses text it did not write', () => {
    // Prepare
    const marks = marksOf([rec(0, 'a', -1), rec(41_999, 'b', 1_764_900_360_000), rec(2, 'c', 0, 3)]);
    // Act
    const text = encodeOffsetMarks(marks);
    // Assess
    expect(decodeOffsetMarks(text)).toEqual(marks);
    expect(text).toMatch(
      /^\{"orders":\{"0":"0:-1:[0-9a-f]{8},41999:1764900360000:[0-9a-f]{8},1764900360000"/,
    );
    expect(() => decodeOffsetMarks('{"t":{"0":"0:1:zz,1:1:00000000,1"}}')).toThrow(/bad range marks/);
    expect(() => decodeOffsetMarks('{"t":{"0":"9:1:00000000,1:1:00000000,1"}}')).toThrow(/bad range marks/);
    expect(() => decodeOffsetMarks('[1]')).toThrow(/not an object of topics/);
  });

  it('merges as the ranges merge: the outer marks and the highest timestamp; separate ranges keep their own', () => {
    // Prepare: [0,9] and [20,29] committed, then [10,19] fills the gap; [40,49] stays apart
    const a = marksOf([rec(0, 'a', 100), rec(9, 'b', 900)]);
    const c = marksOf([rec(20, 'c', 300), rec(29, 'd', 400)]);
    const b = marksOf([rec(10, 'e', 50), rec(19, 'f', 60)]);
    const d = marksOf([rec(40, 'g'), rec(49, 'h')]);
    const ranges = decodeOffsetRanges('{"orders":{"0":"0-29,40-49"}}');
    // Act
    const merged = mergeMarks(ranges, a, c, b, d);
    // Assess
    const list = merged.get('orders')!.get(0)!;
    expect(list).toHaveLength(2);
    expect(list[0]).toEqual({
      first: a.get('orders')!.get(0)![0].first,
      last: c.get('orders')!.get(0)![0].last,
      maxTimestamp: 900,
    });
    expect(list[1]).toEqual(d.get('orders')!.get(0)![0]);
  });

  it('drops marks whose range is no longer committed (moved to another epoch)', () => {
    const marks = marksOf([rec(0, 'a'), rec(9, 'b')]);
    expect(mergeMarks(decodeOffsetRanges('{"orders":{"1":"0-9"}}'), marks)).toEqual(new Map());
  });

  it('keeps a legacy range without marks as it is, and marks only the part committed since', () => {
    // Prepare: ranges committed before marks existed ([0, 99]), then a batch [100, 109] with marks
    const legacy = {
      offsets: decodeOffsetRanges('{"orders":{"0":"0-99"}}'),
      marks: new Map() as OffsetMarks,
    };
    const batch = [rec(100, 'x', 5), rec(109, 'y', 7)];
    // Act
    const summary = committedSummary(
      { ...legacy, epochs: new Map() },
      unionOffsets(new Map(), decodeOffsetRanges('{"orders":{"0":"100-109"}}')),
      marksOf(batch),
    );
    // Assess: one range, marked from 100 (the check leaves offsets before the first mark alone)
    expect(summary['floe.committed-offsets']).toBe('{"orders":{"0":"0-109"}}');
    const marks = decodeOffsetMarks(summary[MARKS_KEY]).get('orders')!.get(0)!;
    expect(marks).toEqual([
      {
        first: expect.objectContaining({ offset: 100n }),
        last: expect.objectContaining({ offset: 109n }),
        maxTimestamp: 7,
      },
    ]);
  });

  it('is carried by a snapshot that does not set it (maintenance, an anchor), like the ranges', async () => {
    // Prepare: a snapshot with offsets and marks, then one with neither
    const wh = await tempWarehouse();
    try {
      const id = { namespace: ['t'], name: 'marks' };
      const table = await wh.catalog.createTable(id, { schema: SIMPLE_SCHEMA });
      const marks = encodeOffsetMarks(marksOf([rec(0, 'a'), rec(4, 'b')]));
      const commit = (summary: Record<string, string>) =>
        commitWithRetry(wh.catalog, id, {
          prepare: (base) =>
            prepareSnapshot(base, { operation: 'append', addedDataFiles: [], addedDeleteFiles: [], summary }),
        });
      await commit({ 'floe.committed-offsets': '{"orders":{"0":"0-4"}}', [MARKS_KEY]: marks });
      // Act
      await commit({ 'floe.maintenance-run': 'x' });
      // Assess
      const loaded = await wh.catalog.loadTable(id);
      expect(currentSnapshot(loaded.metadata)!.summary[MARKS_KEY]).toBe(marks);
      expect(readCommittedState(loaded.metadata).marks).toEqual(decodeOffsetMarks(marks));
      expect(table.metadata['table-uuid']).toBe(loaded.metadata['table-uuid']);
    } finally {
      await wh.cleanup();
    }
  });
});
