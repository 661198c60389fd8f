/**
 * kafka-serve's ListOffsets by time over the cold part: the table's smallest offset whose record
 * timestamp is ≥ T (timestamps that do not rise with offsets, a gap, a dead letter, the boundary), and
 * how ColdView combines it with the cluster's answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { ColdView } from '../../../functions/core/kafka/serve/cold-view.js';
import { DeadLetterRecords } from '../../../functions/core/kafka/serve/dead-letter-records.js';
import { TableRecords } from '../../../functions/core/kafka/serve/table-records.js';
import { firstAtOrAfter } from '../../../functions/core/kafka/serve/time-lookup.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { jsonEvent } from '../../support/json-event.js';
import { tempWarehouse } from '../../support/tables.js';

const ROUTE: TableRoute = {
  table: { namespace: ['app'], name: 'timed' },
  topics: ['tt'],
  kafkaLineage: true,
  properties: {},
  schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: true, type: 'long' }] },
};
const BASE = 1_795_000_000_000;

interface EventRecord {
  offset: number;
  timestamp: number;
}

/** An event of `values` at `offsets` of a partition with record timestamps BASE + `stamps`. */
function timedEvent(values: unknown[], offsets: number[], stamps: number[], partition = 0): unknown {
  const event = jsonEvent('tt', values, { partition }) as { records: Record<string, EventRecord[]> };
  event.records[`tt-${partition}`].forEach((r, i) => {
    r.offset = offsets[i];
    r.timestamp = BASE + stamps[i];
  });
  return event;
}

describe('kafka-serve time lookup', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  let table: LoadedTable;
  let records: TableRecords;
  const at = (ms: number, below = 100n) =>
    firstAtOrAfter(records, table, 'tt', 0, below, BigInt(BASE + ms)).then((a) =>
      a ? [Number(a.offset), Number(a.timestampMs) - BASE] : undefined,
    );

  beforeAll(async () => {
    // Prepare: one file of offsets 0-4 whose timestamps go back and forth, then (after a gap) a
    // dead letter at 5 and rows at 10-12 in a second file; on partition 2, files whose offsets
    // interleave (3-7, then 0-2 and 8-9, as a compaction can leave them)
    wh = await tempWarehouse();
    const options = { catalog: wh.catalog, routes: [ROUTE] };
    const ids = (offsets: number[]) => offsets.map((id) => ({ id }));
    await ingestEvent(options, timedEvent(ids([3, 4, 5, 6, 7]), [3, 4, 5, 6, 7], [0, 900, 0, 0, 0], 2));
    await ingestEvent(options, timedEvent(ids([0, 1, 2, 8, 9]), [0, 1, 2, 8, 9], [0, 0, 0, 900, 0], 2));
    await ingestEvent(
      options,
      timedEvent(
        [0, 1, 2, 3, 4].map((id) => ({ id })),
        [0, 1, 2, 3, 4],
        [100, 300, 200, 400, 500],
      ),
    );
    await ingestEvent(
      options,
      timedEvent(['{not json', { id: 10 }, { id: 11 }, { id: 12 }], [5, 10, 11, 12], [550, 600, 700, 800]),
    );
    table = await wh.catalog.loadTable(ROUTE.table);
    records = new TableRecords(
      () => () => Buffer.alloc(0),
      new DeadLetterRecords((id) => wh.catalog.loadTable(id)),
    );
  });
  afterAll(async () => {
    await wh.cleanup();
  });

  it('answers the smallest offset whose timestamp is at or after T, with that timestamp', async () => {
    // Act
    const answers = await Promise.all([0, 100, 150, 200, 301, 450, 520, 551, 750, 801].map((ms) => at(ms)));
    // Assess: 200 finds offset 1 (300), not 2 (200): the earliest offset, not the first equal stamp
    expect(answers).toEqual([
      [0, 100],
      [0, 100],
      [1, 300],
      [1, 300],
      [3, 400],
      [4, 500],
      [5, 550],
      [10, 600],
      [12, 800],
      undefined,
    ]);
  });

  it('looks only below the boundary, and in the asked partition', async () => {
    // Act
    const belowLast = await at(750, 12n);
    const belowGap = await at(551, 10n);
    const letterOnly = await at(520, 6n);
    const none = await at(0, 0n);
    const otherPartition = await firstAtOrAfter(records, table, 'tt', 1, 100n, BigInt(BASE));
    const interleaved = await firstAtOrAfter(records, table, 'tt', 2, 100n, BigInt(BASE + 900));
    // Assess
    expect(belowLast).toBeUndefined();
    expect(belowGap).toBeUndefined();
    expect(letterOnly).toEqual([5, 550]);
    expect(none).toBeUndefined();
    expect(otherPartition).toBeUndefined();
    expect(interleaved).toEqual({ offset: 4n, timestampMs: BigInt(BASE + 900) });
  });

  it('answers from the table below --cold-below, else the boundary for a cluster answer below it', async () => {
    // Prepare
    const view = (boundary: ConstructorParameters<typeof ColdView>[1]) =>
      new ColdView(
        [() => wh.catalog.loadTable(ROUTE.table)],
        boundary,
        async () => undefined,
        (t, topic, partition, below, ms) => firstAtOrAfter(records, t, topic, partition, below, ms),
      );
    const below = view({ kind: 'below', offsets: new Map([[0, 11n]]) });
    const committed = view({ kind: 'committed' });
    await Promise.all([below.load(), committed.load()]);
    const ms = (n: number) => BigInt(BASE + n);
    // Act
    const table = await below.byTime('tt', 0, ms(150), 20n);
    const intoOtherBytes = await below.byTime('tt', 0, ms(750), 3n);
    const live = await below.byTime('tt', 0, ms(750), 30n);
    const none = await below.byTime('tt', 0, ms(750), -1n);
    const failed = await below.byTime('tt', 0, ms(750), undefined);
    const otherPartition = await below.byTime('tt', 1, ms(0), 3n);
    const committedLower = await committed.byTime('tt', 0, ms(750), 40n);
    const upstreamLower = await committed.byTime('tt', 0, ms(750), 2n);
    // Assess
    expect(table).toEqual({ offset: 1n, timestampMs: ms(300) });
    expect(intoOtherBytes).toEqual({ offset: 11n, timestampMs: -1n });
    expect([live, none, failed, otherPartition, upstreamLower]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(committedLower).toEqual({ offset: 12n, timestampMs: ms(800) });
  });
});
