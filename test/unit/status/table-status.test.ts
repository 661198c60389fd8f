/**
 * `floe status` on a real table fed through the ingest path (ESM-style batches, one withheld): the gap
 * it leaves with its age, the times the snapshot history gives, the newest record from the manifests'
 * `_kafka.timestamp` bounds, and the dead letters by stage — and what status says of hostile metadata.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { ancestors, currentSnapshot } from '../../../functions/core/spec/metadata.js';
import type { TableMetadata } from '../../../functions/core/spec/types.js';
import { heldSince } from '../../../functions/core/status/commit-times.js';
import { countDeadLetters } from '../../../functions/core/status/dead-letter-counts.js';
import { newestBound, readNewestRecord } from '../../../functions/core/status/newest-record.js';
import { readTableStatus } from '../../../functions/core/status/table-status.js';
import { decodeOffsetRanges } from '../../../functions/core/table/offset-ranges.js';
import { OFFSETS_KEY } from '../../../functions/core/table/source-offsets.js';
import { EO_TOPIC, eoRoute, esmEvent, type OffsetRange } from '../../support/esm-batches.js';
import { tempWarehouse } from '../../support/tables.js';

const TABLE = { namespace: ['st'], name: 'events' };
const FIRST_DAY = Date.UTC(2026, 10, 1);
/** esmEvent's record timestamp with `oneDay`. */
const timestampOf = (offset: number) => FIRST_DAY + offset * 1000;

describe('the status of a table fed by ESM batches with one withheld', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(() => wh.cleanup());

  const ingest = (ranges: OffsetRange[], bad: { partition: number; offset: number }[] = []) =>
    ingestEvent(
      { catalog: wh.catalog, routes: [eoRoute(TABLE)] },
      esmEvent(ranges, { oneDay: true, badOffsets: bad }),
    );

  async function feedWithHole(): Promise<LoadedTable> {
    await ingest([{ partition: 0, first: 0, count: 10 }]);
    // offsets 10-19 of partition 0 never commit (the ESM gave up on that batch)
    await ingest(
      [
        { partition: 0, first: 20, count: 10 },
        { partition: 1, first: 0, count: 5 },
      ],
      [
        { partition: 0, offset: 22 },
        { partition: 1, offset: 3 },
      ],
    );
    await ingest([{ partition: 1, first: 5, count: 5 }]);
    return wh.catalog.loadTable(TABLE);
  }

  it('reports the hole as a gap open since the batch after it committed, stale once older than the gap age', async () => {
    // Prepare
    const table = await feedWithHole();
    const [third, second, first] = ancestors(table.metadata);
    const now = third['timestamp-ms'] + 60_000;
    // Act
    const fresh = await readTableStatus({
      catalog: wh.catalog,
      table: TABLE,
      gapAgeMs: 15 * 60_000,
      nowMs: now,
    });
    const stale = await readTableStatus({ catalog: wh.catalog, table: TABLE, gapAgeMs: 0, nowMs: now });
    // Assess
    const gap = {
      topic: EO_TOPIC,
      partition: 0,
      first: 10n,
      last: 19n,
      size: 10n,
      openSinceMs: second['timestamp-ms'],
      ageMs: now - second['timestamp-ms'],
      atLeast: false,
      records: null,
      expired: null,
    };
    expect(fresh.gaps).toEqual([{ ...gap, stale: false }]);
    expect(fresh.staleGaps).toBe(0);
    expect(stale.gaps).toEqual([{ ...gap, stale: true }]);
    expect(stale.staleGaps).toBe(1);
    expect(fresh.partitions.map((p) => [p.partition, p.lastCommitted, p.lastAdvancedMs])).toEqual([
      [0, 29n, second['timestamp-ms']],
      [1, 9n, third['timestamp-ms']],
    ]);
    expect(fresh.partitions[0].newestRecordMs).toBe(timestampOf(29));
    expect(first['timestamp-ms']).toBeLessThanOrEqual(second['timestamp-ms']);
    expect(fresh).toMatchObject({ kafka: false, totalLag: null, lastCommitMs: third['timestamp-ms'] });
  });

  it("takes the newest record time from the manifests' _kafka.timestamp upper bounds", async () => {
    const table = await feedWithHole();
    const newest = await readNewestRecord(table);
    // partition 0 reached offset 29, partition 1 offset 9; offset 22 of partition 0 is a dead letter
    expect(newest).toMatchObject({ newestMs: timestampOf(29), filesWithoutBound: 0 });
    expect(newest.files).toBe(3);
  });

  it('counts the dead letters by stage, with their reasons', async () => {
    await feedWithHole();
    const status = await readTableStatus({ catalog: wh.catalog, table: TABLE, gapAgeMs: 0 });
    expect(status.deadLetters).toMatchObject({
      table: 'st.events__dlq',
      exists: true,
      total: 2,
      redriven: 0,
    });
    expect(status.deadLetters.byStage).toEqual([
      {
        stage: 'decode',
        count: 2,
        redriven: 0,
        reasons: [{ reason: expect.stringMatching(/JSON/), count: 2 }],
      },
    ]);
  });

  it('dates an offset held since the first snapshot kept as "at least" once older snapshots expired', async () => {
    const table = await feedWithHole();
    const [third, second] = ancestors(table.metadata);
    // the first snapshot expired: the second is the oldest kept, and its parent is gone
    const expired: TableMetadata = {
      ...table.metadata,
      snapshots: table.metadata.snapshots.filter((s) => s['snapshot-id'] !== second['parent-snapshot-id']),
    };
    const probes = [
      { topic: EO_TOPIC, partition: 0, offset: 5n },
      { topic: EO_TOPIC, partition: 1, offset: 9n },
      { topic: EO_TOPIC, partition: 0, offset: 15n },
    ];
    expect(heldSince(expired, probes)).toEqual([
      { sinceMs: second['timestamp-ms'], atLeast: true },
      { sinceMs: third['timestamp-ms'], atLeast: false },
      { sinceMs: null, atLeast: false },
    ]);
    // with the whole history, offset 5 is dated exactly by the table's first snapshot
    expect(heldSince(table.metadata, probes)[0].atLeast).toBe(false);
  });

  it('stops dating at a summary that does not read, and passes over snapshots without offsets', async () => {
    const table = await feedWithHole();
    const [third, second, first] = ancestors(table.metadata);
    const withSummary = (id: bigint, summary: Record<string, string>) =>
      table.metadata.snapshots.map((s) =>
        s['snapshot-id'] === id ? { ...s, summary: { ...s.summary, ...summary } } : s,
      );
    const broken: TableMetadata = {
      ...table.metadata,
      snapshots: withSummary(first['snapshot-id'], { [OFFSETS_KEY]: 'not json' }),
    };
    expect(heldSince(broken, [{ topic: EO_TOPIC, partition: 0, offset: 5n }])).toEqual([
      { sinceMs: second['timestamp-ms'], atLeast: true },
    ]);
    const { [OFFSETS_KEY]: _, ...bare } = second.summary;
    const external: TableMetadata = {
      ...table.metadata,
      snapshots: table.metadata.snapshots.map((s) => (s === second ? { ...s, summary: bare } : s)),
    };
    expect(heldSince(external, [{ topic: EO_TOPIC, partition: 0, offset: 5n }])).toEqual([
      { sinceMs: first['timestamp-ms'], atLeast: false },
    ]);
    expect(third).toBeDefined();
  });

  it('reports a table whose summaries carry no committed offsets (another writer) as having none', async () => {
    const table = await feedWithHole();
    const stripped: TableMetadata = {
      ...table.metadata,
      snapshots: table.metadata.snapshots.map((s) => {
        const { [OFFSETS_KEY]: _, ...rest } = s.summary;
        return { ...s, summary: rest };
      }),
    };
    const status = await readTableStatus({
      catalog: wh.catalog,
      table: TABLE,
      gapAgeMs: 0,
      loaded: { ...table, metadata: stripped },
    });
    expect(status.partitions).toEqual([]);
    expect(status.gaps).toEqual([]);
    expect(currentSnapshot(stripped)).toBeDefined();
  });
});

describe('newestBound: hostile and missing bounds', () => {
  const bound = (micros: bigint) => {
    const bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setBigInt64(0, micros, true);
    return bytes;
  };
  it('takes the highest bound, counts files without one, and ignores bounds that do not decode', () => {
    const files = [
      { record_count: 3n, upper_bounds: new Map([[7, bound(5_000_000n)]]) },
      { record_count: 3n, upper_bounds: new Map([[7, bound(9_000_999n)]]) },
      { record_count: 3n, upper_bounds: new Map([[7, new Uint8Array([1, 2, 3])]]) },
      { record_count: 2n },
      { record_count: 0n },
    ];
    expect(newestBound(files, 7)).toEqual({ newestMs: 9000, filesWithoutBound: 2 });
  });

  it('floors a bound before the epoch to its millisecond', () => {
    expect(newestBound([{ record_count: 1n, upper_bounds: new Map([[1, bound(-1n)]]) }], 1).newestMs).toBe(
      -1,
    );
  });

  it('has no time when no file has a bound', () => {
    expect(newestBound([], 1)).toEqual({ newestMs: null, filesWithoutBound: 0 });
  });
});

describe('countDeadLetters', () => {
  it('counts the target table only, marks redriven ones, and keeps the three most frequent reasons', async () => {
    const row = (stage: string, error: string, offset: bigint, target = 'a.t') => ({
      topic: 't',
      partition: 0,
      offset,
      stage,
      error,
      target_table: target,
    });
    const rows = [
      row('map', 'x', 1n),
      row('map', 'y', 2n),
      row('map', 'y', 3n),
      row('map', 'z', 4n),
      row('map', 'w', 5n),
      row('map', 'w', 6n),
      row('map', 'w', 7n),
      row('decode', 'bad', 8n),
      row('decode', 'bad', 9n, 'other.t'),
      { stage: null, error: null },
    ];
    const counts = await countDeadLetters(rows, 'a.t', decodeOffsetRanges('{"t":{"0":"1-2"}}'));
    expect(counts).toEqual({
      total: 9,
      redriven: 2,
      byStage: [
        { stage: 'decode', count: 1, redriven: 0, reasons: [{ reason: 'bad', count: 1 }] },
        {
          stage: 'map',
          count: 7,
          redriven: 2,
          reasons: [
            { reason: 'w', count: 3 },
            { reason: 'y', count: 2 },
            { reason: 'x', count: 1 },
          ],
        },
        { stage: 'unknown', count: 1, redriven: 0, reasons: [{ reason: '', count: 1 }] },
      ],
    });
  });
});
