/**
 * Holes between batches that Kafka never delivers (transaction markers, compacted-away records):
 * with the consumer's fetch start as a hint they close, without it (the Lambda's ESM) they stay.
 * No broker: the events are what `floe run` forms, the hint what kafkajs's fetch position gives.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { loadOrCreateTable } from '../../../functions/core/ingest/load-or-create-table.js';
import {
  extendToSpanStarts,
  fragmentationWarning,
  type SpanStarts,
} from '../../../functions/core/ingest/span-starts.js';
import type { IngestWarningKind } from '../../../functions/core/ingest/table-batch.js';
import {
  type ConsumedMessage,
  formEsmEvents,
  markFetchStarts,
  spanStartsOf,
} from '../../../functions/core/kafka/esm-batch.js';
import { fetchStartOf } from '../../../functions/core/kafka/kafka-client.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import { commitWithRetry } from '../../../functions/core/table/commit-loop.js';
import { decodeOffsetRanges, type OffsetRanges } from '../../../functions/core/table/offset-ranges.js';
import { prepareSnapshot } from '../../../functions/core/table/snapshot-producer.js';
import { BATCH_ID_KEY, OFFSETS_KEY } from '../../../functions/core/table/source-offsets.js';
import { EO_TOPIC, eoRoute, esmEvent } from '../../support/esm-batches.js';
import { tempWarehouse } from '../../support/tables.js';

const TABLE = { namespace: ['eo'], name: 'holes' };
const set = (text: string): OffsetRanges => decodeOffsetRanges(`{"${EO_TOPIC}":{"0":"${text}"}}`);
const starts = (from: bigint): SpanStarts => new Map([[EO_TOPIC, new Map([[0, from]])]]);

/** An ESM event of partition 0 holding exactly these offsets (the others are markers, compacted). */
function eventWith(offsets: number[]): Record<string, unknown> {
  const first = Math.min(...offsets);
  const event = esmEvent([{ partition: 0, first, count: Math.max(...offsets) - first + 1 }], {
    oneDay: true,
  });
  const records = event.records as Record<string, { offset: number }[]>;
  records[`${EO_TOPIC}-0`] = records[`${EO_TOPIC}-0`].filter((r) => offsets.includes(r.offset));
  return event;
}

const range = (first: number, last: number) => Array.from({ length: last - first + 1 }, (_, i) => first + i);

describe('extendToSpanStarts', () => {
  it('reaches back to the fetch start only when the table covers the offset before it', () => {
    const spans = set('11-20');
    expect(extendToSpanStarts(spans, starts(10n), set('0-9'))).toEqual(set('10-20'));
    // a fetch that did not start next to the table's ranges (a seek, a reset, a timestamp start)
    expect(extendToSpanStarts(spans, starts(10n), set('0-8'))).toEqual(spans);
    expect(extendToSpanStarts(spans, starts(10n), new Map())).toEqual(spans);
    // a hint past the batch's first record is wrong: ignored
    expect(extendToSpanStarts(spans, starts(12n), set('0-11'))).toEqual(spans);
    // no hint (the Lambda), or a hint for another partition
    expect(extendToSpanStarts(spans, undefined, set('0-9'))).toEqual(spans);
    expect(extendToSpanStarts(spans, new Map([[EO_TOPIC, new Map([[1, 10n]])]]), set('0-9'))).toEqual(spans);
  });
});

describe('markFetchStarts', () => {
  const message = (offset: number): ConsumedMessage => ({
    topic: EO_TOPIC,
    partition: 0,
    offset: String(offset),
    timestamp: 0,
    timestampType: 'CREATE_TIME',
    key: null,
    value: new Uint8Array([1]),
    headers: [],
  });

  it('starts the first event at the fetch start and each next one right after the one before', () => {
    // a fetch from 10: a marker at 10, records 11-14, a marker at 15, records 16-19
    const events = formEsmEvents('b:9092', [...range(11, 14), ...range(16, 19)].map(message), {
      batchSize: 3,
    });
    markFetchStarts(events, 10n);
    expect(events.map((e) => [e.spans[0].from, e.spans[0].first, e.spans[0].last])).toEqual([
      [10n, 11n, 13n],
      [14n, 14n, 17n],
      [18n, 18n, 19n],
    ]);
    expect(spanStartsOf(events[1])).toEqual(starts(14n));
  });

  it('marks nothing without a fetch start, or with one past the first record', () => {
    const a = formEsmEvents('b:9092', range(11, 12).map(message), { batchSize: 10 });
    markFetchStarts(a, undefined);
    const b = formEsmEvents('b:9092', range(11, 12).map(message), { batchSize: 10 });
    markFetchStarts(b, 12n);
    expect([spanStartsOf(a[0]), spanStartsOf(b[0])]).toEqual([undefined, undefined]);
  });

  it('reads kafkajs’s fetch position off its batch', () => {
    expect(fetchStartOf({ fetchedOffset: '42' })).toBe(42n);
    expect(fetchStartOf({})).toBeUndefined();
    expect(fetchStartOf({ fetchedOffset: '-1' })).toBeUndefined();
  });
});

describe('holes between batches in the committed ranges', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(() => wh.cleanup());

  const offsetsText = async () =>
    currentSnapshot((await wh.catalog.loadTable(TABLE)).metadata)!.summary[OFFSETS_KEY];
  const ingest = (event: Record<string, unknown>, spanStarts?: SpanStarts) =>
    ingestEvent({ catalog: wh.catalog, routes: [eoRoute(TABLE)], spanStarts }, event);

  it('close when the event says where the consumer fetched from: one merged range', async () => {
    // Prepare: transactions of 10 records, each followed by its commit marker (10, 21, 32)
    const batches = [range(0, 9), range(11, 20), range(22, 31), range(33, 35)];

    // Act: each next fetch starts right after the previous batch's last record (at the marker)
    await ingest(eventWith(batches[0]), starts(0n));
    for (const offsets of batches.slice(1)) await ingest(eventWith(offsets), starts(BigInt(offsets[0] - 1)));

    // Assess
    expect(await offsetsText()).toBe(`{"${EO_TOPIC}":{"0":"0-35"}}`);
  });

  it('stay without the hint, as the Lambda commits them today', async () => {
    const batches = [range(0, 9), range(11, 20), range(22, 31)];
    for (const offsets of batches) await ingest(eventWith(offsets));
    expect(await offsetsText()).toBe(`{"${EO_TOPIC}":{"0":"0-9,11-20,22-31"}}`);
  });

  it('stay when the fetch did not start next to what the table holds (nothing unread is claimed)', async () => {
    // Prepare: [0, 9] committed; a consumer sought to 25 (a timestamp start) reads 26-30
    await ingest(eventWith(range(0, 9)));

    // Act
    const report = await ingest(eventWith(range(26, 30)), starts(25n));

    // Assess: 10-25 may hold records nobody read yet; a later batch with them is not a replay
    expect(await offsetsText()).toBe(`{"${EO_TOPIC}":{"0":"0-9,26-30"}}`);
    expect(report.tables[0].rowsWritten).toBe(5);
    const late = await ingest(eventWith(range(10, 25)));
    expect(late.tables[0]).toMatchObject({ rowsWritten: 16, skippedAsReplayed: 0 });
    expect(await offsetsText()).toBe(`{"${EO_TOPIC}":{"0":"0-30"}}`);
  });

  it('past 100 ranges in a partition, an operator is told (kind fragmented-offsets), only as they grow', async () => {
    // Prepare: a table whose partition 0 holds 100 ranges (every other offset below 200)
    const table = await loadOrCreateTable(wh.catalog, eoRoute(TABLE));
    const hundred = range(0, 99)
      .map((i) => `${2 * i}-${2 * i}`)
      .join(',');
    await commitWithRetry(
      wh.catalog,
      TABLE,
      {
        prepare: (base) =>
          prepareSnapshot(base, {
            operation: 'append',
            addedDataFiles: [],
            addedDeleteFiles: [],
            summary: { [BATCH_ID_KEY]: 'old', [OFFSETS_KEY]: `{"${EO_TOPIC}":{"0":"${hundred}"}}` },
          }),
      },
      { base: table },
    );
    const warnings: { message: string; kind: IngestWarningKind }[] = [];
    const onWarning = (_table: string, message: string, kind: IngestWarningKind) =>
      warnings.push({ message, kind });

    // Act: one batch adds a 101st range; one fills a hole (fewer ranges)
    await ingestEvent({ catalog: wh.catalog, routes: [eoRoute(TABLE)], onWarning }, eventWith([300]));
    await ingestEvent({ catalog: wh.catalog, routes: [eoRoute(TABLE)], onWarning }, eventWith([1]));

    // Assess
    expect(warnings).toHaveLength(1);
    expect(warnings[0].kind).toBe('fragmented-offsets');
    expect(warnings[0].message).toMatch(new RegExp(`${EO_TOPIC}/0: 101 ranges`));
  });
});

describe('fragmentationWarning', () => {
  it('is said when a partition of the batch passes the limit and grew', () => {
    expect(fragmentationWarning(set('0-0,2-2'), set('0-0,2-2,4-4'), set('4-4'), 2)).toMatch(/3 ranges/);
    expect(fragmentationWarning(set('0-0,2-2,4-4'), set('0-2,4-4'), set('1-1'), 1)).toBeUndefined();
    expect(fragmentationWarning(set('0-0'), set('0-0,2-2'), set('2-2'), 2)).toBeUndefined();
  });
});
