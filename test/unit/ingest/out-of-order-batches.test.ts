/**
 * Batches of one partition that arrive out of order (an ESM on-failure batch redriven after a fix, a
 * backfill under the live tail, two CLI ingests of different batches) each take effect exactly once:
 * a record is a replay only if its offset lies inside a range the table has committed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dlqIdentifier } from '../../../functions/core/records/dead-letters.js';
import { commitDeadLetters } from '../../../functions/core/ingest/commit-dead-letters.js';
import { batchIdOf, ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { loadOrCreateTable } from '../../../functions/core/ingest/load-or-create-table.js';
import { decodeEsmEvent } from '../../../functions/core/records/esm-event.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import { commitWithRetry } from '../../../functions/core/table/commit-loop.js';
import { prepareSnapshot } from '../../../functions/core/table/snapshot-producer.js';
import { BATCH_ID_KEY, OFFSETS_KEY } from '../../../functions/core/table/source-offsets.js';
import { EO_TOPIC, esmEvent, eoRoute, expectedKeys, type OffsetRange } from '../../support/esm-batches.js';
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

  const offsetsText = async () =>
    currentSnapshot((await wh.catalog.loadTable(TABLE)).metadata)!.summary[OFFSETS_KEY];

  it('commits each batch’s delivered span: offsets Kafka skipped inside it do not split the ranges', async () => {
    // Prepare: [0, 9] without offset 5 (a transaction marker, a compacted record), then [20, 29]
    const withGap = esmEvent([{ partition: 0, first: 0, count: 10 }], { oneDay: true });
    const group = (withGap.records as Record<string, { offset: number }[]>)[`${EO_TOPIC}-0`];
    group.splice(5, 1);

    // Act
    await ingestEvent({ catalog: wh.catalog, routes: [eoRoute(TABLE)] }, withGap);
    const afterFirst = await offsetsText();
    await ingest([{ partition: 0, first: 20, count: 10 }]);
    const withHole = await offsetsText();
    await ingest([{ partition: 0, first: 10, count: 10 }]);

    // Assess: the ranges merge once the missing batch arrives, and the batch id is still there
    expect(afterFirst).toBe(`{"${EO_TOPIC}":{"0":"0-9"}}`);
    expect(withHole).toBe(`{"${EO_TOPIC}":{"0":"0-9,20-29"}}`);
    expect(await offsetsText()).toBe(`{"${EO_TOPIC}":{"0":"0-29"}}`);
    const last = esmEvent([{ partition: 0, first: 10, count: 10 }], { oneDay: true });
    expect(currentSnapshot((await wh.catalog.loadTable(TABLE)).metadata)!.summary[BATCH_ID_KEY]).toBe(
      batchIdOf(decodeEsmEvent(last).records),
    );
  });

  it('writes an offset held twice in one batch once; the repeat is a dead letter saying so', async () => {
    // Prepare: offset 3 appears twice
    const event = esmEvent([{ partition: 0, first: 0, count: 5 }], { oneDay: true });
    const group = (event.records as Record<string, { offset: number }[]>)[`${EO_TOPIC}-0`];
    group.push({ ...group[3] });

    // Act
    const report = await ingestEvent({ catalog: wh.catalog, routes: [eoRoute(TABLE)] }, event);
    const replay = await ingestEvent({ catalog: wh.catalog, routes: [eoRoute(TABLE)] }, event);

    // Assess
    expect(report.tables[0]).toMatchObject({ rowsWritten: 5, deadLettered: 1 });
    expect(replay.tables[0]).toMatchObject({ rowsWritten: 0, deadLettered: 0, skippedAsReplayed: 6 });
    const keys = await readKeysWithFloe(await wh.catalog.loadTable(TABLE));
    expect(keys).toEqual(expectedKeys([{ partition: 0, first: 0, count: 5 }]));
    const dlq = await wh.catalog.loadTable(dlqIdentifier(TABLE));
    const letters = await readScanRows(dlq, await planScan(dlq));
    expect(letters.map((l) => [l.offset, l.stage, l.error])).toEqual([
      [3n, 'duplicate', `offset 3 of ${EO_TOPIC}/0 is held twice in the batch; the first is kept`],
    ]);
  });
});

describe('dead letters of a batch whose main commit did not land', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(() => wh.cleanup());

  it('in its span are not replays for another batch that finds more of them', async () => {
    // Prepare: a batch [0, 9] whose dead letter for offset 3 landed, its main commit not (the schema
    // changed during the batch); a later batch [0, 19] (a backfill) finds offset 7 failing too
    const records = decodeEsmEvent(esmEvent([{ partition: 0, first: 0, count: 20 }])).records;
    const letter = (i: number) => ({ record: records[i], stage: 'map' as const, error: 'does not fit' });
    const route = eoRoute(TABLE);

    // Act
    const first = await commitDeadLetters(
      { catalog: wh.catalog },
      route,
      batchIdOf(records.slice(0, 10)),
      [letter(3)],
      new Map(),
    );
    const later = await commitDeadLetters(
      { catalog: wh.catalog },
      route,
      batchIdOf(records),
      [letter(3), letter(7)],
      new Map(),
    );

    // Assess: offset 7 is not taken for a replay of the first commit (the batch's span was not committed)
    expect([first, later]).toEqual([1, 1]);
    const dlq = await wh.catalog.loadTable(dlqIdentifier(TABLE));
    expect((await readScanRows(dlq, await planScan(dlq))).map((r) => r.offset).sort()).toEqual([3n, 7n]);
  });

  it('land when the redelivery of the same batch finds more of them', async () => {
    // Prepare: batch [0, 9] dead-lettered offset 3 and its main commit failed; redelivered under the same
    // batch id, the schema has moved on and offset 7 no longer fits either
    const records = decodeEsmEvent(esmEvent([{ partition: 0, first: 0, count: 10 }])).records;
    const letter = (i: number) => ({ record: records[i], stage: 'map' as const, error: 'does not fit' });
    const route = eoRoute(TABLE);
    const batchId = batchIdOf(records);

    // Act
    const first = await commitDeadLetters({ catalog: wh.catalog }, route, batchId, [letter(3)], new Map());
    const again = await commitDeadLetters(
      { catalog: wh.catalog },
      route,
      batchId,
      [letter(3), letter(7)],
      new Map(),
    );
    const replay = await commitDeadLetters(
      { catalog: wh.catalog },
      route,
      batchId,
      [letter(3), letter(7)],
      new Map(),
    );

    // Assess: offset 7 is not taken for the first delivery's commit; a third delivery adds nothing
    expect([first, again, replay]).toEqual([1, 1, 0]);
    const dlq = await wh.catalog.loadTable(dlqIdentifier(TABLE));
    expect((await readScanRows(dlq, await planScan(dlq))).map((r) => r.offset).sort()).toEqual([3n, 7n]);
  });
});

describe('a table written before ranges (one high-water offset per partition)', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(() => wh.cleanup());

  it('reads the offset o as the range [0, o] and writes ranges from then on', async () => {
    // Prepare: the table's snapshot says "everything up to 96 of partition 0", in the old format
    const table = await loadOrCreateTable(wh.catalog, eoRoute(TABLE));
    await commitWithRetry(
      wh.catalog,
      TABLE,
      {
        prepare: (base) =>
          prepareSnapshot(base, {
            operation: 'append',
            addedDataFiles: [],
            addedDeleteFiles: [],
            summary: { [BATCH_ID_KEY]: 'old', [OFFSETS_KEY]: `{"${EO_TOPIC}":{"0":"96"}}` },
          }),
      },
      { base: table },
    );

    // Act: a batch overlapping the old mark, and one on a partition the table never saw
    const report = await ingestEvent(
      { catalog: wh.catalog, routes: [eoRoute(TABLE)] },
      esmEvent(
        [
          { partition: 0, first: 50, count: 100 },
          { partition: 1, first: 7, count: 3 },
        ],
        { oneDay: true },
      ),
    );

    // Assess
    expect(report.tables[0]).toMatchObject({ skippedAsReplayed: 47, rowsWritten: 56 });
    const after = await wh.catalog.loadTable(TABLE);
    expect(currentSnapshot(after.metadata)!.summary[OFFSETS_KEY]).toBe(
      `{"${EO_TOPIC}":{"0":"0-149","1":"7-9"}}`,
    );
  });
});
