/**
 * Converting equality deletes into position deletes (maintenance/convert-equality-deletes.ts) on tables
 * whose CDC batches wrote equality deletes (`floe.delete-mode=equality`, then switched to `position`):
 * afterwards floe, DuckDB (position deletes anti-joined on file and row number) and icebird read the rows
 * the table held before, the snapshot holds no equality delete, and the data files are the same objects.
 */
import fc from 'fast-check';
import { icebergRead } from 'icebird';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Catalog, LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { commitRewrite } from '../../../functions/core/maintenance/commit-rewrite.js';
import { compactGroup, type GroupOutcome } from '../../../functions/core/maintenance/compact-group.js';
import { convertEqualityDeletes } from '../../../functions/core/maintenance/convert-equality-deletes.js';
import { resolveSettings } from '../../../functions/core/maintenance/maintenance-settings.js';
import { planCompaction } from '../../../functions/core/maintenance/plan-compaction.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import type { ManifestEntry, TableIdentifier } from '../../../functions/core/spec/types.js';
import {
  buildStream,
  CDC_TOPIC,
  type CdcTestMode,
  deliveryPlanArb,
  esmEvent,
  ITEMS_SCHEMA,
  itemKey,
  KAFKA_PARTITIONS,
  modelKeys,
  planDeliveries,
  type StreamRecord,
  stepArb,
} from '../../support/cdc-stream.js';
import { type HttpWarehouse, startHttpWarehouse } from '../../support/http-warehouse.js';
import { duckdbLiveRows, duckdbQuery, liveEntries, sqlString } from '../../support/readers.js';
import { FaultyCatalog } from '../../support/tables.js';

const COLUMNS = ['id', 'region', 'amount', 'note'];

describe('converting equality deletes into position deletes', () => {
  let wh: HttpWarehouse;
  let n = 0;
  beforeAll(async () => {
    wh = await startHttpWarehouse();
  });
  afterAll(() => wh.close());

  const local = (uri: string) => uri.replace(wh.url, wh.dir);

  function routeOf(
    mode: CdcTestMode,
    partitionBy?: string,
    identifierColumns: string[] = ['id'],
  ): TableRoute {
    return {
      table: { namespace: ['conv'], name: `items_${n++}` },
      topics: [CDC_TOPIC],
      schema: ITEMS_SCHEMA,
      partitionBy,
      mode,
      identifierColumns,
      kafkaLineage: false,
      // icebird crashes on deflate Avro blocks under ~1 KB (a known shortcut of its reader)
      properties: { 'write.avro.compression-codec': 'uncompressed', 'floe.delete-mode': 'equality' },
    };
  }

  /** Sends records as one ESM batch each; offsets per Kafka partition continue across calls. */
  function sender(route: TableRoute) {
    const offsets = new Array<number>(KAFKA_PARTITIONS).fill(0);
    return async (...batch: [id: number, value: unknown][]) => {
      const records: StreamRecord[] = batch.map(([id, value]) => ({
        partition: id % KAFKA_PARTITIONS,
        offset: offsets[id % KAFKA_PARTITIONS]++,
        key: JSON.stringify({ id }),
        value: value === null ? null : JSON.stringify(value),
      }));
      await ingestEvent(
        { catalog: wh.catalog, routes: [route] },
        esmEvent(records, { from: 0, to: records.length }),
      );
    };
  }

  async function switchToPosition(id: TableIdentifier, catalog: Catalog = wh.catalog): Promise<void> {
    await catalog.commitTable(
      id,
      [],
      [{ action: 'set-properties', updates: { 'floe.delete-mode': 'position' } }],
    );
  }

  const floeRows = async (table: LoadedTable) =>
    (await readScanRows(table, await planScan(table))).map(itemKey).sort();
  const duckRows = async (table: LoadedTable) =>
    (await duckdbLiveRows(table, COLUMNS, ['id'], local)).map(itemKey).sort();
  const dataFiles = (entries: ManifestEntry[]) =>
    entries
      .filter((e) => e.data_file.content === 0)
      .map((e) => `${e.data_file.file_path}@${e.sequence_number}`)
      .sort();
  const ofContent = (entries: ManifestEntry[], content: number) =>
    entries.filter((e) => e.data_file.content === content);

  /** The (file, pos) pairs the table's position delete files name. */
  async function positionsNamed(table: LoadedTable): Promise<string[]> {
    const files = ofContent(await liveEntries(table), 1).map((e) => sqlString(local(e.data_file.file_path)));
    if (files.length === 0) return [];
    const rows = await duckdbQuery(`select file_path, pos from read_parquet([${files.join(', ')}])`);
    return rows.map((r) => `${r.file_path}#${r.pos}`).sort();
  }

  it('random CDC streams: every reader sees the rows of before, no equality delete is left, no data file changed', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<CdcTestMode>('debezium', 'upsert'),
        fc.constantFrom(undefined, 'bucket(2, id)', 'region'),
        fc.array(stepArb, { minLength: 4, maxLength: 25 }),
        deliveryPlanArb,
        async (mode, partitionBy, steps, plan) => {
          // Prepare
          const route = routeOf(mode, partitionBy);
          const stream = buildStream(steps, mode);
          for (const delivery of planDeliveries(stream.records.length, plan))
            await ingestEvent({ catalog: wh.catalog, routes: [route] }, esmEvent(stream.records, delivery));
          await switchToPosition(route.table);
          const before = await wh.catalog.loadTable(route.table);
          const entriesBefore = await liveEntries(before);
          const expected = modelKeys(stream.states.at(-1)!);
          expect(await floeRows(before)).toEqual(expected);

          // Act
          const result = await convertEqualityDeletes(wh.catalog, route.table);

          // Assess
          const after = await wh.catalog.loadTable(route.table);
          const entriesAfter = await liveEntries(after);
          expect(ofContent(entriesAfter, 2), 'no equality delete left').toEqual([]);
          expect(dataFiles(entriesAfter), 'the same data files').toEqual(dataFiles(entriesBefore));
          expect(result.equalityDeletesRemoved).toBe(ofContent(entriesBefore, 2).length);
          expect(result.groupsAbandoned).toEqual([]);
          expect(await floeRows(after), 'floe').toEqual(expected);
          expect(await duckRows(after), 'DuckDB').toEqual(expected);
          if (result.snapshotIds.length > 0)
            expect(currentSnapshot(after.metadata)!.summary.operation).toBe('replace');
          // icebird refuses a snapshot with no data manifest ("No data manifest files found")
          if (currentSnapshot(after.metadata)?.summary['total-data-files'] === '0') return;
          const ice = (await icebergRead({ tableUrl: `${wh.url}/conv/${route.table.name}` })) as Record<
            string,
            unknown
          >[];
          expect(ice.map(itemKey).sort(), 'icebird').toEqual(expected);
        },
      ),
      { numRuns: 6, seed: 20261205 },
    );
  });

  it('keeps a key inserted again after its delete: the delete applies only to rows older than itself', async () => {
    // Prepare: id 1 inserted, deleted, inserted again, each in its own batch
    const route = routeOf('upsert');
    const send = sender(route);
    await send(
      [1, { id: 1, region: 'EU', amount: 1, note: 'old' }],
      [2, { id: 2, region: 'US', amount: 2, note: 'x' }],
    );
    const firstFiles = ofContent(await liveEntries(await wh.catalog.loadTable(route.table)), 0).map(
      (e) => e.data_file.file_path,
    );
    await send([1, null]);
    await send([1, { id: 1, region: 'EU', amount: 3, note: 'new' }]);
    await switchToPosition(route.table);
    const expected = ['1|EU|3|new', '2|US|2|x'];
    expect(await floeRows(await wh.catalog.loadTable(route.table))).toEqual(expected);

    // Act
    const result = await convertEqualityDeletes(wh.catalog, route.table);

    // Assess: one position names the old row of id 1, in the first batch's file
    const after = await wh.catalog.loadTable(route.table);
    expect(result).toMatchObject({ status: 'converted', rowsDeleted: 1 });
    const named = await positionsNamed(after);
    expect(named).toHaveLength(1);
    expect(firstFiles).toContain(named[0].split('#')[0]);
    expect(await floeRows(after)).toEqual(expected);
    expect(await duckRows(after)).toEqual(expected);
    expect(ofContent(await liveEntries(after), 2)).toEqual([]);
  });

  it('names no row a position delete removes already', async () => {
    // Prepare: id 1 inserted; updated in position mode (a position delete names the first row); then
    // deleted in equality mode (the equality delete matches both rows, the first one deleted already)
    const route = routeOf('upsert');
    const send = sender(route);
    const mode = (m: string) =>
      wh.catalog.commitTable(
        route.table,
        [],
        [{ action: 'set-properties', updates: { 'floe.delete-mode': m } }],
      );
    await send(
      [1, { id: 1, region: 'EU', amount: 1, note: null }],
      [2, { id: 2, region: 'EU', amount: 2, note: null }],
    );
    await mode('position');
    await send([1, { id: 1, region: 'EU', amount: 10, note: null }]);
    await mode('equality');
    await send([1, null]);
    await switchToPosition(route.table);
    const before = await wh.catalog.loadTable(route.table);
    const named = await positionsNamed(before);
    expect(named).toHaveLength(1);

    // Act
    const result = await convertEqualityDeletes(wh.catalog, route.table);

    // Assess: only the second row of id 1 is named anew
    const after = await wh.catalog.loadTable(route.table);
    expect(result.rowsDeleted).toBe(1);
    const now = await positionsNamed(after);
    expect(now).toHaveLength(2);
    expect(now).toEqual(expect.arrayContaining(named));
    expect(await floeRows(after)).toEqual(['2|EU|2|null']);
    expect(await duckRows(after)).toEqual(['2|EU|2|null']);
  });

  it('converts deletes on a two-column key, deleting only the rows whose both columns match', async () => {
    // Prepare: (1, EU) and (1, US) share an id; only (1, EU) is deleted
    const route = routeOf('debezium', undefined, ['id', 'region']);
    const send = sender(route);
    const eu = { id: 1, region: 'EU', amount: 1, note: null };
    const us = { id: 1, region: 'US', amount: 2, note: null };
    await send([1, { op: 'c', before: null, after: eu }], [1, { op: 'c', before: null, after: us }]);
    await send([1, { op: 'd', before: eu, after: null }]);
    await switchToPosition(route.table);
    const before = await wh.catalog.loadTable(route.table);
    expect(ofContent(await liveEntries(before), 2).map((e) => e.data_file.equality_ids)).toContainEqual([
      1, 2,
    ]);

    // Act
    await convertEqualityDeletes(wh.catalog, route.table);

    // Assess
    const after = await wh.catalog.loadTable(route.table);
    expect(ofContent(await liveEntries(after), 2)).toEqual([]);
    expect(await floeRows(after)).toEqual(['1|US|2|null']);
    const duck = await duckdbLiveRows(after, COLUMNS, ['id', 'region'], local);
    expect(duck.map(itemKey)).toEqual(['1|US|2|null']);
  });

  it('a partitioned table with deletes in the unpartitioned spec gets position deletes in each data file’s partition', async () => {
    // Prepare: partitioned by region, keyed by id (the key does not decide the partition)
    const route = routeOf('upsert', 'region');
    const send = sender(route);
    await send(
      [1, { id: 1, region: 'EU', amount: 1, note: null }],
      [2, { id: 2, region: 'US', amount: 2, note: null }],
      [3, { id: 3, region: 'APAC', amount: 3, note: null }],
    );
    await send([1, null], [2, { id: 2, region: 'EU', amount: 20, note: null }]);
    await switchToPosition(route.table);
    const before = await wh.catalog.loadTable(route.table);
    const specs = before.metadata['partition-specs'];
    const unpartitioned = specs.find((s) => s.fields.length === 0)!;
    const deletes = ofContent(await liveEntries(before), 2);
    expect(deletes.length).toBeGreaterThan(0);
    expect(deletes.every((e) => e.data_file.spec_id === unpartitioned['spec-id'])).toBe(true);

    // Act
    await convertEqualityDeletes(wh.catalog, route.table);

    // Assess: the position deletes sit in the partitions of the rows they name (EU for 1, US for 2)
    const after = await wh.catalog.loadTable(route.table);
    const positions = ofContent(await liveEntries(after), 1);
    expect(positions.map((e) => e.data_file.partition.region).sort()).toEqual(['EU', 'US']);
    expect(positions.every((e) => e.data_file.spec_id === before.metadata['default-spec-id'])).toBe(true);
    const expected = ['2|EU|20|null', '3|APAC|3|null'];
    expect(await floeRows(after)).toEqual(expected);
    expect(await duckRows(after)).toEqual(expected);
  });

  it('drops an equality delete that matches no live row, adding no position delete', async () => {
    // Prepare: a tombstone for a key the table never held
    const route = routeOf('upsert');
    const send = sender(route);
    await send([1, { id: 1, region: 'EU', amount: 1, note: null }]);
    await send([99, null]);
    await switchToPosition(route.table);
    expect(ofContent(await liveEntries(await wh.catalog.loadTable(route.table)), 2)).toHaveLength(1);

    // Act
    const result = await convertEqualityDeletes(wh.catalog, route.table);

    // Assess
    const after = await wh.catalog.loadTable(route.table);
    expect(result).toMatchObject({
      equalityDeletesRemoved: 1,
      equalityDeletesDropped: 1,
      positionDeleteFilesAdded: 0,
    });
    expect((await liveEntries(after)).filter((e) => e.data_file.content !== 0)).toEqual([]);
    expect(await floeRows(after)).toEqual(['1|EU|1|null']);
  });

  it('plans again when a compaction rewrote the files it named between planning and commit', async () => {
    // Prepare: three small files in EU, one in US; compaction takes one partition per run (the one
    // with most files, EU), so the global delete of ids 1 (EU) and 4 (US) still applies to the US file
    // afterwards and stays live
    const route = routeOf('upsert', 'region');
    const send = sender(route);
    await send([4, { id: 4, region: 'US', amount: 4, note: null }]);
    for (let b = 0; b < 3; b++)
      await send([b * 10 + 1, { id: b * 10 + 1, region: 'EU', amount: b, note: null }]);
    await send([1, null], [4, null]);
    await switchToPosition(route.table);
    await wh.catalog.commitTable(
      route.table,
      [],
      [{ action: 'set-properties', updates: { 'floe.maintenance.max-groups-per-run': '1' } }],
    );
    const expected = await floeRows(await wh.catalog.loadTable(route.table));
    const racing = new FaultyCatalog(wh.catalog);
    let compacted = 0;
    racing.beforeCommit = async () => {
      const table = await wh.catalog.loadTable(route.table);
      const { plan } = await planCompaction(table, resolveSettings(table.metadata), 'race', 'conv.t');
      const outcomes: GroupOutcome[] = [];
      for (const g of plan!.groups) outcomes.push(await compactGroup(table, plan!, g.index));
      compacted = (await commitRewrite(wh.catalog, route.table, plan!, outcomes)).groupsCommitted.length;
    };

    // Act
    const result = await convertEqualityDeletes(racing, route.table);

    // Assess: the compaction landed first, the conversion planned again and committed
    expect(compacted).toBe(1);
    expect(result.replans).toBeGreaterThanOrEqual(1);
    expect(result.groupsAbandoned).toEqual([]);
    const after = await wh.catalog.loadTable(route.table);
    expect(ofContent(await liveEntries(after), 2)).toEqual([]);
    expect(await floeRows(after)).toEqual(expected);
    expect(await duckRows(after)).toEqual(expected);
  });

  it('keeps a delete that a compaction begun before it carried into new files: those rows are named where they moved', async () => {
    // Prepare: a compaction of two small files is planned and written, then id 1 is deleted (an
    // equality delete newer than the compaction's start, so it applies to the compacted file too)
    const route = routeOf('upsert');
    const send = sender(route);
    await send([1, { id: 1, region: 'EU', amount: 1, note: null }]);
    await send([2, { id: 2, region: 'EU', amount: 2, note: null }]);
    const start = await wh.catalog.loadTable(route.table);
    const { plan } = await planCompaction(start, resolveSettings(start.metadata), 'early', 'conv.t');
    const outcomes: GroupOutcome[] = [];
    for (const g of plan!.groups) outcomes.push(await compactGroup(start, plan!, g.index));
    await send([1, null]);
    await switchToPosition(route.table);
    const racing = new FaultyCatalog(wh.catalog);
    let compacted = 0;
    racing.beforeCommit = async () => {
      compacted = (await commitRewrite(wh.catalog, route.table, plan!, outcomes)).groupsCommitted.length;
    };

    // Act
    const result = await convertEqualityDeletes(racing, route.table);

    // Assess: the row of id 1 stays deleted, now by position in the compacted file
    expect(compacted).toBe(1);
    expect(result.replans).toBe(1);
    const after = await wh.catalog.loadTable(route.table);
    const entries = await liveEntries(after);
    expect(ofContent(entries, 2)).toEqual([]);
    const [compactedFile] = ofContent(entries, 0).map((e) => e.data_file.file_path);
    expect((await positionsNamed(after)).map((p) => p.split('#')[0])).toEqual([compactedFile]);
    expect(await floeRows(after)).toEqual(['2|EU|2|null']);
    expect(await duckRows(after)).toEqual(['2|EU|2|null']);
  });

  it('converts in groups of at most max-file-group-size-bytes, one snapshot per group', async () => {
    // Prepare: three batches each deleting one key (three equality delete files); groups of one file
    const route = routeOf('upsert');
    const send = sender(route);
    await send(
      [1, { id: 1, region: 'EU', amount: 1, note: null }],
      [2, { id: 2, region: 'EU', amount: 2, note: null }],
      [3, { id: 3, region: 'EU', amount: 3, note: null }],
      [4, { id: 4, region: 'EU', amount: 4, note: null }],
    );
    for (const id of [1, 2, 3]) await send([id, null]);
    await switchToPosition(route.table);
    await wh.catalog.commitTable(
      route.table,
      [],
      [
        {
          action: 'set-properties',
          updates: { 'floe.maintenance.convert-equality-deletes.max-file-group-size-bytes': '1' },
        },
      ],
    );
    const before = await wh.catalog.loadTable(route.table);

    // Act
    const result = await convertEqualityDeletes(wh.catalog, route.table);

    // Assess
    const after = await wh.catalog.loadTable(route.table);
    expect(result).toMatchObject({ groups: 3, equalityDeletesRemoved: 3, rowsDeleted: 3 });
    expect(result.snapshotIds).toHaveLength(3);
    expect(after.metadata.snapshots.length - before.metadata.snapshots.length).toBe(3);
    expect(await floeRows(after)).toEqual(['4|EU|4|null']);
    expect(await duckRows(after)).toEqual(['4|EU|4|null']);
  });

  it('leaves a table in floe.delete-mode=equality as it is', async () => {
    // Prepare
    const route = routeOf('upsert');
    const send = sender(route);
    await send([1, { id: 1, region: 'EU', amount: 1, note: null }]);
    await send([1, null]);
    const before = await wh.catalog.loadTable(route.table);

    // Act
    const result = await convertEqualityDeletes(wh.catalog, route.table);

    // Assess
    expect(result.status).toBe('skipped');
    expect(result.skipped).toMatch(/floe\.delete-mode=equality/);
    const after = await wh.catalog.loadTable(route.table);
    expect(currentSnapshot(after.metadata)!['snapshot-id']).toBe(
      currentSnapshot(before.metadata)!['snapshot-id'],
    );
  });
});
