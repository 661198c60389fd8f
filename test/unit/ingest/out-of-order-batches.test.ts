/**
 * Batches of one partition that arrive out of order (an ESM on-failure batch redriven after a fix, a
 * backfill under the live tail, two CLI ingests of different batches) each take effect exactly once:
 * a record is a replay only if its offset lies inside a range the table has committed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { esmEvent, eoRoute, expectedKeys, type OffsetRange } from '../../support/esm-batches.js';
import { readKeysWithFloe } from '../../support/exactly-once-checks.js';
import { tempWarehouse } from '../../support/tables.js';

const TABLE = { namespace: ['eo'], name: 'ordered' };

describe('out-of-order batches of one partition', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(() => wh.cleanup());

  const ingest = (ranges: OffsetRange[]) =>
    ingestEvent({ catalog: wh.catalog, routes: [eoRoute(TABLE)] }, esmEvent(ranges, { oneDay: true }));

  it('keeps an earlier batch that arrives after a later one (600 of 1,800 records were lost)', async () => {
    // Prepare: the live tail [600, 1799] commits first; the batch [0, 599] arrives afterwards
    const tail: OffsetRange = { partition: 0, first: 600, count: 1200 };
    const early: OffsetRange = { partition: 0, first: 0, count: 600 };

    // Act
    const first = await ingest([tail]);
    const second = await ingest([early]);

    // Assess: both batches wrote all their rows; none was taken for a replay
    expect(first.tables[0].rowsWritten).toBe(1200);
    expect(second.tables[0]).toMatchObject({ rowsWritten: 600, skippedAsReplayed: 0, status: 'committed' });
    const keys = await readKeysWithFloe(await wh.catalog.loadTable(TABLE));
    expect(keys).toEqual(expectedKeys([early, tail]).sort());
  });

  it('fills a gap between two committed batches, and recognises replays on both sides of it', async () => {
    const a: OffsetRange = { partition: 0, first: 0, count: 10 };
    const c: OffsetRange = { partition: 0, first: 20, count: 10 };
    const b: OffsetRange = { partition: 0, first: 10, count: 10 };
    await ingest([a]);
    await ingest([c]);
    const filled = await ingest([b]);
    // a batch straddling everything committed: all of it is a replay
    const replay = await ingest([{ partition: 0, first: 5, count: 20 }]);

    expect(filled.tables[0]).toMatchObject({ rowsWritten: 10, skippedAsReplayed: 0 });
    expect(replay.tables[0]).toMatchObject({ rowsWritten: 0, skippedAsReplayed: 20 });
    const keys = await readKeysWithFloe(await wh.catalog.loadTable(TABLE));
    expect(keys).toEqual(expectedKeys([a, b, c]).sort());
  });
});
