/**
 * The live snapshot of a format-version 3 upsert table (what `floe serve --live` hands every engine):
 * the tail deletes the cold rows it replaces with deletion vectors, each merged with its cold data
 * file's vector, which the live snapshot drops (one vector per data file, no position delete file, no
 * equality delete), and the committed table is untouched. floe's reader and DuckDB (vectors decoded by
 * roaring-wasm) show the model.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { defaultCacheRoot, writeLiveVersion } from '../../../functions/core/live/live-snapshot.js';
import { mapHotset } from '../../../functions/core/live/map-hotset.js';
import type { Hotset } from '../../../functions/core/live/read-hotset.js';
import { decodeEsmEvent } from '../../../functions/core/records/esm-event.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import type { ManifestEntry, Schema } from '../../../functions/core/spec/types.js';
import { jsonEvent } from '../../support/json-event.js';
import { duckdbLiveRows, liveEntries } from '../../support/readers.js';
import { tempWarehouse } from '../../support/tables.js';
import { checkV3 } from '../../support/v3-rules.js';

const TOPIC = 'live.items';
const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'name', required: false, type: 'string' },
  ],
};

/** An upsert by key (`name`), or a tombstone (null). */
type Change = [id: number, name: string | null];

const route: TableRoute = {
  table: { namespace: ['app'], name: 'items_v3' },
  topics: [TOPIC],
  schema: SCHEMA,
  mode: 'upsert',
  identifierColumns: ['id'],
  kafkaLineage: true,
  properties: { 'format-version': '3' },
};

function eventOf(changes: readonly Change[], firstOffset: number): unknown {
  return jsonEvent(
    TOPIC,
    changes.map(([id, name]) => (name === null ? null : { id, name })),
    { firstOffset, key: (_v, i) => String(changes[i][0]) },
  );
}

function model(...batches: (readonly Change[])[]): string[] {
  const state = new Map<number, string>();
  for (const [id, name] of batches.flat()) {
    if (name === null) state.delete(id);
    else state.set(id, name);
  }
  return [...state].map(([id, name]) => `${id}=${name}`).sort();
}

const rowsText = (rows: readonly Record<string, unknown>[]) => rows.map((r) => `${r.id}=${r.name}`).sort();
const vectors = (entries: ManifestEntry[]) => entries.filter((e) => e.data_file.content === 1);

type Warehouse = Awaited<ReturnType<typeof tempWarehouse>>;

/** The cold batches committed through ingestEvent, then the live version for the tail `hot`. */
async function serveLive(
  wh: Warehouse,
  cold: readonly (readonly Change[])[],
  hot: readonly Change[],
): Promise<{ table: LoadedTable; live: LoadedTable }> {
  let offset = 0;
  for (const batch of cold) {
    await ingestEvent({ catalog: wh.catalog, routes: [route] }, eventOf(batch, offset));
    offset += batch.length;
  }
  const table = await wh.catalog.loadTable(route.table);
  const records = decodeEsmEvent(eventOf(hot, offset)).records;
  const mapped = await mapHotset(table.metadata, route, 'upsert', 'evolve', records);
  const to = BigInt(offset + hot.length);
  const hotset: Hotset = {
    snapshotId: currentSnapshot(table.metadata)?.['snapshot-id'] ?? null,
    partitions: [],
    ranges: [{ topic: TOPIC, partition: 0, from: BigInt(offset), toExclusive: to }],
    records: records.length,
    mapped,
    identityMismatches: [],
    freshness: { newestRecordMs: null, readUpTo: [], hotRecords: records.length },
  };
  const version = await writeLiveVersion(table, hotset, defaultCacheRoot(table));
  const live = { ...table, metadata: version.metadata, metadataLocation: version.metadataLocation };
  return { table, live };
}

const equalityPaths = (list: ManifestEntry[]) =>
  list.filter((e) => e.data_file.content === 2).map((e) => e.data_file.file_path);

// Cold: ids 0..5 in one file, then an update of 1 and a delete of 2 (a vector on that file)
const COLD: Change[][] = [
  Array.from({ length: 6 }, (_, id): Change => [id, `v1-${id}`]),
  [
    [1, 'v2-1'],
    [2, null],
  ],
];
// The tail replaces 3, deletes 4 (both in the first file), replaces 1 again (in the second file), adds 9
const HOT: Change[] = [
  [3, 'v3-3'],
  [4, null],
  [1, 'v3-1'],
  [9, 'v1-9'],
];

describe('the live tail of a format-version 3 upsert table', () => {
  let wh: Warehouse;
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(() => wh.cleanup());

  it('deletes cold rows by deletion vectors merged with the cold ones, which the live snapshot drops', async () => {
    // Act
    const { table, live } = await serveLive(wh, COLD, HOT);

    // Assess: one vector per cold data file, the first file's holding its cold deletes and the tail's
    const cold = await liveEntries(table);
    const entries = await liveEntries(live);
    // No equality delete of its own (the cold ones: the key-versions carrier of key 2's delete)
    expect(equalityPaths(entries)).toEqual(equalityPaths(cold));
    const first = cold.find((e) => e.data_file.content === 0 && e.data_file.record_count === 6n)!;
    const on = (list: ManifestEntry[]) =>
      vectors(list).filter((e) => e.data_file.referenced_data_file === first.data_file.file_path);
    expect(on(cold).map((e) => e.data_file.record_count)).toEqual([2n]);
    expect(on(entries).map((e) => e.data_file.record_count)).toEqual([4n]);
    expect(on(entries)[0].data_file.file_path).toContain('/floe-live/');
    await checkV3(live);
    const summary = currentSnapshot(live.metadata)!.summary;
    expect(summary['floe.live']).toBe('true');
    expect(summary['removed-position-deletes']).toBe('2');
    const expected = model(...COLD, HOT);
    expect(rowsText(await readScanRows(live, await planScan(live)))).toEqual(expected);
    expect(rowsText(await duckdbLiveRows(live, ['id', 'name'], ['id']))).toEqual(expected);
    // The committed table is as it was
    const committed = await wh.catalog.loadTable(route.table);
    expect(committed.metadataLocation).toBe(table.metadataLocation);
    expect(rowsText(await readScanRows(committed, await planScan(committed)))).toEqual(model(...COLD));
  });

  it('shows the model for random cold batches and tails, by floe and by DuckDB', async () => {
    const change = fc.tuple(
      fc.integer({ min: 0, max: 7 }),
      fc.option(fc.constantFrom('a', 'b', 'c'), { nil: null, freq: 3 }),
    );
    const batch = fc.array(change, { minLength: 1, maxLength: 8 });
    await fc.assert(
      fc.asyncProperty(fc.array(batch, { minLength: 1, maxLength: 3 }), batch, async (cold, hot) => {
        // Prepare: a fresh warehouse per case
        const own = await tempWarehouse();
        try {
          // Act
          const { table, live } = await serveLive(own, cold, hot);

          // Assess
          const expected = model(...cold, hot);
          expect(rowsText(await readScanRows(live, await planScan(live)))).toEqual(expected);
          expect(rowsText(await duckdbLiveRows(live, ['id', 'name'], ['id']))).toEqual(expected);
          await checkV3(live);
          expect(equalityPaths(await liveEntries(live))).toEqual(equalityPaths(await liveEntries(table)));
        } finally {
          await own.cleanup();
        }
      }),
      { numRuns: 6, seed: 3613 },
    );
  });
});
