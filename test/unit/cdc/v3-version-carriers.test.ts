/**
 * On a format-version 3 keyed table a key a batch leaves deleted keeps its version in a version
 * carrier (cdc/version-carriers.ts): a data file named `key-versions-…` whose every row a deletion
 * vector of the same snapshot deletes — no equality delete, so PyIceberg reads the table. Proven
 * here: the metadata of that form; late older changes of the key refused after the deleting batch and
 * after a compaction (which keeps the carrier); the key index agreeing with a scan; and the rows of a
 * carrier in a schema with a required column of every type floe writes — placeholders when the file
 * is read alone, no row when the table is read (by floe and by DuckDB).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { placeholderValue, writeVersionCarriers } from '../../../functions/core/cdc/version-carriers.js';
import { readDataFile } from '../../../functions/core/data/parquet/read/read-data-file.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { verifyIndex } from '../../../functions/core/key-index/verify-index.js';
import { commitRewrite } from '../../../functions/core/maintenance/commit-rewrite.js';
import { compactGroup } from '../../../functions/core/maintenance/compact-group.js';
import { resolveSettings } from '../../../functions/core/maintenance/maintenance-settings.js';
import { planCompaction } from '../../../functions/core/maintenance/plan-compaction.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { isVersionCarrierDataFile } from '../../../functions/core/scan/delete-index.js';
import { readNewestRecord } from '../../../functions/core/status/newest-record.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { currentSchema, currentSnapshot } from '../../../functions/core/spec/metadata.js';
import { rowDelta } from '../../../functions/core/table/actions/row-delta.js';
import type { Schema } from '../../../functions/core/spec/types.js';
import { CDC_TOPIC, ITEMS_SCHEMA } from '../../support/cdc-stream.js';
import { commitEqualityCarrier } from '../../support/equality-carrier.js';
import { jsonEvent } from '../../support/json-event.js';
import { duckdbLiveRows, liveEntries } from '../../support/readers.js';
import { tempWarehouse } from '../../support/tables.js';

let wh: Awaited<ReturnType<typeof tempWarehouse>>;
beforeAll(async () => {
  wh = await tempWarehouse();
});
afterAll(() => wh.cleanup());

const route = (name: string, schema: Schema, partitionBy?: string): TableRoute => ({
  table: { namespace: ['v3'], name },
  topics: [CDC_TOPIC],
  schema,
  partitionBy,
  mode: 'upsert',
  identifierColumns: ['id'],
  kafkaLineage: true,
  properties: { 'format-version': '3' },
});

/** Upserts (a row, or null: a tombstone) of keys at offsets first.. of partition 0. */
const upserts = (first: number, changes: [id: number, region: string | null][]) =>
  jsonEvent(
    CDC_TOPIC,
    changes.map(([id, region]) => (region === null ? null : { id, region })),
    { firstOffset: first, key: (_v, i) => JSON.stringify({ id: changes[i][0] }) },
  );

async function compactAll(catalog: EmbeddedCatalog, r: TableRoute): Promise<number> {
  const table = await catalog.loadTable(r.table);
  const settings = { ...resolveSettings(table.metadata), minInputFiles: 2 };
  const { plan } = await planCompaction(table, settings, 'carriers', r.table.name);
  if (!plan || plan.groups.length === 0) return 0;
  const outcomes = [];
  for (const g of plan.groups) outcomes.push(await compactGroup(table, plan, g.index));
  expect((await commitRewrite(catalog, r.table, plan, outcomes)).status).toBe('committed');
  return plan.groups.length;
}

describe('version carriers on a format-version 3 keyed table', () => {
  it('keep a deleted key deleted against late older changes, after the deleting batch and after a compaction', async () => {
    // Prepare: keys 1–3 (offsets 0–2), then offsets 10–11 delete key 2 and update key 3
    const r = route('late', ITEMS_SCHEMA, 'bucket(2, id)');
    const ingest = (event: unknown) => ingestEvent({ catalog: wh.catalog, routes: [r] }, event);
    await ingest(
      upserts(0, [
        [1, 'a'],
        [2, 'b'],
        [3, 'c'],
      ]),
    );

    // Act
    await ingest(
      upserts(10, [
        [2, null],
        [3, 'c2'],
      ]),
    );

    // Assess: one carrier of key 2, deleted whole by a vector of the same snapshot; no equality delete
    const table = await wh.catalog.loadTable(r.table);
    const head = currentSnapshot(table.metadata)!['snapshot-id'];
    const live = await liveEntries(table);
    expect(live.filter((e) => e.data_file.content === 2)).toEqual([]);
    const carriers = live.filter((e) => isVersionCarrierDataFile(table.metadata, e.data_file));
    expect(carriers.map((e) => [e.data_file.record_count, e.snapshot_id])).toEqual([[1n, head]]);
    const carrier = carriers[0].data_file;
    expect(carrier.file_path).toMatch(/\/[0-9a-f]{12}-key-versions-[^/]*\.parquet$/);
    const vector = live.find((e) => e.data_file.referenced_data_file === carrier.file_path);
    expect(vector?.data_file.record_count).toBe(1n);
    expect(vector?.snapshot_id).toBe(head);
    const [version] = await readDataFile(table.io, carrier.file_path, currentSchema(table.metadata));
    expect(version).toMatchObject({
      id: 2n,
      _kafka: { topic: CDC_TOPIC, partition: 0, offset: 10n, timestamp: 1_795_000_000_000_000n },
    });
    // The delete's time is a bound of the carrier, as every data file's newest record time is
    expect((await readNewestRecord(table)).filesWithoutBound).toBe(0);
    const ids = async () => {
      const t = await wh.catalog.loadTable(r.table);
      return (await readScanRows(t, await planScan(t))).map((row) => `${row.id}=${row.region}`).sort();
    };
    expect(await ids()).toEqual(['1=a', '3=c2']);

    // Act: a late batch (offsets 3–5) updates keys 2 and 3
    const late = await ingest(
      upserts(3, [
        [2, 'late'],
        [3, 'late'],
        [4, 'd'],
      ]),
    );

    // Assess: both older changes dropped; key 4, only the late batch's, applied
    expect(late.tables[0].warnings?.[0]).toMatch(/2 older change\(s\) dropped/);
    expect(await ids()).toEqual(['1=a', '3=c2', '4=d']);

    // Act: compact (every data file but the carrier is small and in a group), then a late batch
    // (offsets 6–7) updates key 2 again
    expect(await compactAll(wh.catalog, r)).toBeGreaterThan(0);
    const compacted = await wh.catalog.loadTable(r.table);
    const afterCompaction = await liveEntries(compacted);
    await ingest(
      upserts(6, [
        [2, 'later'],
        [5, 'e'],
      ]),
    );

    // Assess: the carrier and its vector survived the compaction, and still refuse key 2
    expect(currentSnapshot(compacted.metadata)!.summary.operation).not.toBe('append');
    expect(afterCompaction.some((e) => e.data_file.file_path === carrier.file_path)).toBe(true);
    expect(afterCompaction.some((e) => e.data_file.referenced_data_file === carrier.file_path)).toBe(true);
    expect(await ids()).toEqual(['1=a', '3=c2', '4=d', '5=e']);
    const main = await wh.catalog.loadTable(r.table);
    expect(await verifyIndex(wh.catalog, main)).toEqual([]);
    const duck = await duckdbLiveRows(main, ['id', 'region'], ['id']);
    expect(duck.map((row) => `${row.id}=${row.region}`).sort()).toEqual(['1=a', '3=c2', '4=d', '5=e']);
  });

  it('leave the equality carriers floe wrote before in force against late older changes', async () => {
    // Prepare: keys 1 and 2 (offsets 0–1), key 1 updated (offset 10), then key 2's version carried as
    // floe wrote it before (an equality delete named key-versions-, offset 11)
    const r = route('before', ITEMS_SCHEMA);
    const ingest = (event: unknown) => ingestEvent({ catalog: wh.catalog, routes: [r] }, event);
    await ingest(
      upserts(0, [
        [1, 'a'],
        [2, 'b'],
      ]),
    );
    await ingest(upserts(10, [[1, 'a2']]));
    await commitEqualityCarrier(wh.catalog, r.table, CDC_TOPIC, 2n, 11n);

    // Act: a late batch (offsets 2–3) updates key 2 and writes key 3
    const late = await ingest(
      upserts(2, [
        [2, 'late'],
        [3, 'c'],
      ]),
    );

    // Assess
    expect(late.tables[0].warnings?.[0]).toMatch(/1 older change\(s\) dropped/);
    const table = await wh.catalog.loadTable(r.table);
    const rows = await readScanRows(table, await planScan(table));
    expect(rows.map((row) => `${row.id}=${row.region}`).sort()).toEqual(['1=a2', '3=c']);
  });

  it('are told by their vector: a file named like one whose rows no vector deletes holds live rows', async () => {
    // Prepare: key 1, then a data file named as a carrier (another writer's), key 7 live in it
    const r = route('named', ITEMS_SCHEMA);
    const ingest = (event: unknown) => ingestEvent({ catalog: wh.catalog, routes: [r] }, event);
    await ingest(upserts(0, [[1, 'a']]));
    const base = await wh.catalog.loadTable(r.table);
    const kafka = { topic: CDC_TOPIC, partition: 0, offset: 5n };
    const lookalike = await writeVersionCarriers(
      base,
      [{ id: 7n, region: 'x', _kafka: kafka }],
      currentSchema(base.metadata),
      '',
    );
    const { change } = await rowDelta(base, { dataFiles: lookalike, deleteFiles: [] });
    await wh.catalog.commitTable(r.table, change.requirements, change.updates);

    // Act: a batch (the key index catches up through that snapshot), then a compaction plan
    await ingest(upserts(10, [[2, 'b']]));
    const table = await wh.catalog.loadTable(r.table);
    const settings = { ...resolveSettings(table.metadata), minInputFiles: 2 };
    const { plan } = await planCompaction(table, settings, 'named', r.table.name);

    // Assess: key 7 is a row to every reader, the index holds it, compaction takes its file
    const rows = await readScanRows(table, await planScan(table));
    expect(rows.map((row) => `${row.id}=${row.region}`).sort()).toEqual(['1=a', '2=b', '7=x']);
    expect(await verifyIndex(wh.catalog, table)).toEqual([]);
    expect(plan!.groups.flatMap((g) => g.files)).toContain(lookalike[0].file_path);
  });

  it('hold a placeholder in every required column, which no reader of the table sees', async () => {
    // Prepare: a required column of every type floe writes, nested ones too
    const required = (id: number, name: string, type: Schema['fields'][number]['type']) => ({
      id,
      name,
      required: true,
      type,
    });
    const schema: Schema = {
      type: 'struct',
      'schema-id': 0,
      fields: [
        required(1, 'id', 'long'),
        required(2, 'b', 'boolean'),
        required(3, 'i', 'int'),
        required(4, 'f', 'float'),
        required(5, 'd', 'double'),
        required(6, 'dec', 'decimal(9, 2)'),
        required(7, 'day', 'date'),
        required(8, 't', 'time'),
        required(9, 'ts', 'timestamp'),
        required(10, 'tstz', 'timestamptz'),
        required(11, 's', 'string'),
        required(12, 'u', 'uuid'),
        required(13, 'fx', 'fixed[3]'),
        required(14, 'bin', 'binary'),
        required(15, 'st', {
          type: 'struct',
          fields: [required(16, 'n', 'int'), { id: 17, name: 'o', required: false, type: 'string' }],
        }),
        required(18, 'l', { type: 'list', 'element-id': 19, element: 'string', 'element-required': true }),
        required(20, 'm', {
          type: 'map',
          'key-id': 21,
          key: 'string',
          'value-id': 22,
          value: 'long',
          'value-required': false,
        }),
        { id: 23, name: 'opt', required: false, type: 'string' },
      ],
    };
    const r = route('placeholders', schema, 'day(tstz)');

    // Act: a tombstone of a key the empty table never held: its version is all the batch writes
    const report = await ingestEvent({ catalog: wh.catalog, routes: [r] }, upserts(7, [[9, null]]));

    // Assess
    expect(report.tables[0]).toMatchObject({ status: 'committed', deadLettered: 0 });
    const table = await wh.catalog.loadTable(r.table);
    const live = await liveEntries(table);
    const carrier = live.find((e) => isVersionCarrierDataFile(table.metadata, e.data_file))!.data_file;
    expect(carrier.partition).toEqual({ tstz_day: 0 });
    const rows = await readDataFile(table.io, carrier.file_path, currentSchema(table.metadata));
    expect(rows).toEqual([
      {
        id: 9n,
        b: false,
        i: 0,
        f: 0,
        d: 0,
        dec: 0n,
        day: 0,
        t: 0n,
        ts: 0n,
        tstz: 0n,
        s: '',
        u: '00000000-0000-0000-0000-000000000000',
        fx: new Uint8Array(3),
        bin: new Uint8Array(0),
        st: { n: 0, o: null },
        l: [],
        m: new Map(),
        opt: null,
        _kafka: expect.objectContaining({ topic: CDC_TOPIC, partition: 0, offset: 7n }),
      },
    ]);
    expect(await readScanRows(table, await planScan(table))).toEqual([]);
    expect(await duckdbLiveRows(table, ['id', 's'], ['id'])).toEqual([]);
  });

  it('refuse a required column of a type floe does not write, and give nanosecond timestamps the epoch', () => {
    // Act + Assess
    expect(placeholderValue('timestamp_ns')).toBe(0n);
    expect(placeholderValue('timestamptz_ns')).toBe(0n);
    expect(() => placeholderValue('variant')).toThrow(/variant.*version carrier/);
  });
});
