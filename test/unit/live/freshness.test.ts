/**
 * The live snapshot says how fresh it is: the tail's newest record time, the offsets read up to, and the
 * tail's size, in its summary (`floe.live.*`), and `floe scan --live` prints them.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatFreshnessLine } from '../../../functions/cli/commands/scan-live.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import {
  describeReadUpTo,
  freshnessSummary,
  LIVE_HOT_RECORDS_KEY,
  LIVE_NEWEST_RECORD_KEY,
  LIVE_READ_UP_TO_KEY,
  newestTimestamp,
} from '../../../functions/core/live/freshness.js';
import { defaultCacheRoot, writeLiveVersion } from '../../../functions/core/live/live-snapshot.js';
import { mapHotset } from '../../../functions/core/live/map-hotset.js';
import type { LiveReport } from '../../../functions/core/live/read-live-table.js';
import { decodeEsmEvent } from '../../../functions/core/records/esm-event.js';
import { eoRoute, esmEvent } from '../../support/esm-batches.js';
import { tempWarehouse } from '../../support/tables.js';

const TABLE = { namespace: ['live'], name: 'fresh' };

describe('newestTimestamp and the summary entries', () => {
  it('takes the highest timestamp, leaving out records without one (-1) and non-finite ones', () => {
    expect(
      newestTimestamp([{ timestamp: 5 }, { timestamp: -1 }, { timestamp: 9 }, { timestamp: Number.NaN }]),
    ).toBe(9);
    expect(newestTimestamp([{ timestamp: -1 }])).toBeNull();
    expect(newestTimestamp([])).toBeNull();
  });

  it('writes the offsets read up to sorted by topic and partition, and leaves out an unknown newest time', () => {
    const readUpTo = [
      { topic: 'b', partition: 0, readUpTo: 3n },
      { topic: 'a', partition: 2, readUpTo: 9_007_199_254_740_993n },
      { topic: 'a', partition: 1, readUpTo: 0n },
    ];
    expect(describeReadUpTo(readUpTo)).toBe('{"a":{"1":"0","2":"9007199254740993"},"b":{"0":"3"}}');
    expect(freshnessSummary({ newestRecordMs: null, readUpTo, hotRecords: 0 })).toEqual({
      [LIVE_READ_UP_TO_KEY]: '{"a":{"1":"0","2":"9007199254740993"},"b":{"0":"3"}}',
      [LIVE_HOT_RECORDS_KEY]: '0',
    });
  });
});

describe("the live snapshot's freshness summary", () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(() => wh.cleanup());

  it('carries the tail’s newest record time, the offsets read up to and the tail’s size', async () => {
    // Prepare: offsets 0-9 committed, 10-14 the tail the broker holds (high watermark 15)
    const route = eoRoute(TABLE);
    await ingestEvent(
      { catalog: wh.catalog, routes: [route] },
      esmEvent([{ partition: 0, first: 0, count: 10 }], { oneDay: true }),
    );
    const table = await wh.catalog.loadTable(TABLE);
    const records = decodeEsmEvent(
      esmEvent([{ partition: 0, first: 10, count: 5 }], { oneDay: true }),
    ).records;
    const mapped = await mapHotset(table.metadata, route, 'append', 'evolve', records);
    const ranges = [{ topic: route.topics[0], partition: 0, from: 10n, toExclusive: 15n }];
    const readUpTo = [
      { topic: route.topics[0], partition: 0, readUpTo: 15n },
      { topic: route.topics[0], partition: 1, readUpTo: 0n },
    ];
    const freshness = { newestRecordMs: newestTimestamp(records), readUpTo, hotRecords: records.length };
    // Act
    const version = await writeLiveVersion(
      table,
      {
        snapshotId: null,
        partitions: [],
        ranges,
        records: records.length,
        mapped,
        identityMismatches: [],
        freshness,
      },
      defaultCacheRoot(table),
    );
    // Assess
    const summary: Record<string, string> = version.snapshot?.summary ?? {};
    expect(summary[LIVE_NEWEST_RECORD_KEY]).toBe(String(Date.UTC(2026, 10, 1) + 14_000));
    expect(JSON.parse(summary[LIVE_READ_UP_TO_KEY])).toEqual({ payments: { '0': '15', '1': '0' } });
    expect(summary[LIVE_HOT_RECORDS_KEY]).toBe('5');
    expect(summary['floe.live']).toBe('true');
  });

  it('is printed by scan --live as a fresh: line', () => {
    const report = {
      freshness: {
        newestRecordMs: Date.UTC(2026, 11, 5, 8),
        readUpTo: [
          { topic: 't', partition: 0, readUpTo: 13n },
          { topic: 't', partition: 1, readUpTo: 9n },
        ],
        hotRecords: 4,
      },
    } as Pick<LiveReport, 'freshness'> as LiveReport;
    expect(formatFreshnessLine(report)).toBe(
      'fresh: newest record 2026-12-05T08:00:00.000Z (tail of 4 record(s)); read up to t/0@13, t/1@9',
    );
    report.freshness = { newestRecordMs: null, readUpTo: [], hotRecords: 0 };
    expect(formatFreshnessLine(report)).toBe(
      'fresh: no record in the tail (the table alone is current); read up to nothing',
    );
  });
});
