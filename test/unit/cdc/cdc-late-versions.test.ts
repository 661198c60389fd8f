/**
 * A late CDC batch (older than changes already committed for its partition) must not undo newer
 * changes: a key's change is applied only if the table holds nothing newer for the key from the same
 * topic-partition — a live row's `_kafka` or, for a deleted key, the `_kafka` columns floe's equality
 * delete rows (or, by position, its key-versions rows) carry. Every case runs in both delete modes.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { readDataFile } from '../../../functions/core/data/parquet/read/read-data-file.js';
import type { StructType } from '../../../functions/core/spec/types.js';
import { CDC_TOPIC, ITEMS_SCHEMA } from '../../support/cdc-stream.js';
import { jsonEvent } from '../../support/json-event.js';
import { liveEntries } from '../../support/readers.js';
import { FaultyCatalog, tempWarehouse } from '../../support/tables.js';

type Mode = 'upsert' | 'debezium';
interface Item {
  id: number;
  region: string;
}
/** A change of one key: its new row, or null for a delete. `was` is the row before (Debezium's `before`). */
interface Put {
  id: number;
  region: string | null;
  was?: string;
}

const row = (id: number, region: string): Item => ({ id, region });

/** One record's value in `mode`. */
function recordValue(mode: Mode, p: Put): unknown {
  if (mode === 'upsert') return p.region === null ? null : row(p.id, p.region);
  const before = p.was === undefined ? null : row(p.id, p.was);
  if (p.region === null) return { op: 'd', before, after: null, ts_ms: 1 };
  return { op: before ? 'u' : 'c', before, after: row(p.id, p.region), ts_ms: 1 };
}

/** A batch of `puts` at offsets first.., padded with inserts of fresh keys to `size` records. */
function batch(mode: Mode, first: number, puts: Put[], options: { size?: number; partition?: number } = {}) {
  const size = options.size ?? 10;
  const all = [...puts];
  const pad = 1000 + (options.partition ?? 0) * 100 + first;
  for (let i = puts.length; i < size; i++) all.push({ id: pad + i, region: 'pad' });
  return jsonEvent(
    CDC_TOPIC,
    all.map((p) => recordValue(mode, p)),
    { firstOffset: first, partition: options.partition, key: (_v, i) => JSON.stringify({ id: all[i].id }) },
  );
}

describe.each<[Mode, 'position' | 'equality']>([
  ['upsert', 'position'],
  ['debezium', 'position'],
  ['upsert', 'equality'],
  ['debezium', 'equality'],
])('late %s batches against newer changes, %s deletes', (mode, deleteMode) => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  const route: TableRoute = {
    table: { namespace: ['db'], name: 'items' },
    topics: [CDC_TOPIC],
    schema: ITEMS_SCHEMA,
    mode,
    identifierColumns: ['id'],
    kafkaLineage: true,
    properties: { 'floe.delete-mode': deleteMode },
  };
  const warnings: string[] = [];
  const ingest = (event: unknown) =>
    ingestEvent({ catalog: wh.catalog, routes: [route], onWarning: (_t, m) => warnings.push(m) }, event);
  const regions = async () => {
    const table = await wh.catalog.loadTable(route.table);
    const rows = await readScanRows(table, await planScan(table));
    return new Map(rows.filter((r) => Number(r.id) < 1000).map((r) => [Number(r.id), r.region]));
  };
  beforeEach(async () => {
    wh = await tempWarehouse();
    warnings.length = 0;
  });
  afterEach(() => wh.cleanup());

  it('keeps the newer value of a key a late batch also changed, and applies keys only it touched', async () => {
    // Prepare: B2 (offsets 10–19) sets key 1 = 'new' and commits
    await ingest(batch(mode, 10, [{ id: 1, region: 'new' }]));

    // Act: B1 (offsets 0–9) sets key 1 = 'old' and key 3 = 'only-late'
    const late = await ingest(
      batch(mode, 0, [
        { id: 1, region: 'old' },
        { id: 3, region: 'only-late' },
      ]),
    );

    // Assess
    expect(late.tables[0]).toMatchObject({ status: 'committed', skippedAsReplayed: 0 });
    expect(await regions()).toEqual(
      new Map([
        [1, 'new'],
        [3, 'only-late'],
      ]),
    );
    expect(late.tables[0].warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          `^changes of ${CDC_TOPIC}/0 older than offset 19, which the table already has, .*: 1 older change\\(s\\) dropped`,
        ),
      ),
    ]);
    // Every padding key of both batches is there (9 + 8)
    const table = await wh.catalog.loadTable(route.table);
    expect(await readScanRows(table, await planScan(table))).toHaveLength(2 + 17);
  });

  it('keeps a key deleted by a newer batch deleted when a late batch updates it', async () => {
    // Prepare: key 2 exists (offsets 0–4), then B2 (offsets 10–19) deletes it
    await ingest(batch(mode, 0, [{ id: 2, region: 'v0' }], { size: 5 }));
    await ingest(batch(mode, 10, [{ id: 2, region: null, was: 'v0' }]));
    expect((await regions()).has(2)).toBe(false);

    // Act: the late B1 (offsets 5–9) updates key 2
    const late = await ingest(batch(mode, 5, [{ id: 2, region: 'v1', was: 'v0' }], { size: 5 }));

    // Assess
    expect(late.tables[0].status).toBe('committed');
    expect(await regions()).toEqual(new Map());
    expect(late.tables[0].warnings?.[0]).toMatch(/1 older change\(s\) dropped/);
  });

  it('writes the deleting change’s _kafka partition and offset beside the key in its delete rows', async () => {
    // Act
    await ingest(batch(mode, 0, [{ id: 2, region: 'v0' }], { size: 5 }));
    await ingest(batch(mode, 10, [{ id: 2, region: null, was: 'v0' }]));

    // Assess: equality_ids stay the key's (by position: a key-versions file, naming no data file);
    // the extra columns hold the tombstone's place
    const table = await wh.catalog.loadTable(route.table);
    // (an upsert batch deletes every key it writes: its padding keys too)
    const content = deleteMode === 'equality' ? 2 : 1;
    const deletes = (await liveEntries(table))
      .filter(
        (e) =>
          e.data_file.content === content && (content === 2 || /key-versions/.test(e.data_file.file_path)),
      )
      .slice(-1);
    expect(deletes[0].data_file.equality_ids ?? undefined).toEqual(content === 2 ? [1] : undefined);
    const kafka = table.metadata.schemas.at(-1)!.fields.find((f) => f.name === '_kafka')!;
    const rows = await readDataFile(table.io, deletes[0].data_file.file_path, {
      type: 'struct',
      fields: [ITEMS_SCHEMA.fields[0], kafka],
    } as StructType);
    expect(rows.filter((r) => r.id === 2n)).toEqual([
      { id: 2n, _kafka: expect.objectContaining({ topic: CDC_TOPIC, partition: 0, offset: 10n }) },
    ]);
    // Only those three lineage columns (no timestamp, key or headers): the file's columns are
    const type = kafka.type as StructType;
    const ids = ['topic', 'partition', 'offset'].map((n) => type.fields.find((f) => f.name === n)!.id);
    const positionIds = content === 1 ? [2147483545, 2147483546] : [];
    expect([...deletes[0].data_file.value_counts!.keys()].sort((a, b) => a - b)).toEqual([
      1,
      ...ids,
      ...positionIds,
    ]);
  });

  it('applies a late change when the key’s version comes from another partition, and warns', async () => {
    // Prepare: key 4 written on partition 1 (offsets 0–9), then partition 0 moves on (offsets 10–19)
    await ingest(batch(mode, 0, [{ id: 4, region: 'p1' }], { partition: 1 }));
    await ingest(batch(mode, 10, [{ id: 5, region: 'x' }]));

    // Act: a late partition-0 batch changes key 4
    const late = await ingest(batch(mode, 0, [{ id: 4, region: 'p0-late', was: 'p1' }]));

    // Assess: as before this change (the order across partitions is undefined), with the warning
    expect((await regions()).get(4)).toBe('p0-late');
    expect(late.tables[0].warnings).toEqual([
      expect.stringMatching(/0 older change\(s\) dropped/),
      expect.stringMatching(/^1 key\(s\) of a late batch were last written from another Kafka partition/),
    ]);
  });

  it('drops every change of a late batch the table holds newer versions of, and still commits its offsets', async () => {
    // Prepare
    await ingest(batch(mode, 10, [{ id: 1, region: 'new' }], { size: 1 }));
    await ingest(batch(mode, 11, [{ id: 1, region: 'newer', was: 'new' }], { size: 1 }));

    // Act: offset 0 changed key 1 long ago; nothing of it applies
    const late = await ingest(batch(mode, 0, [{ id: 1, region: 'old' }], { size: 1 }));
    const replay = await ingest(batch(mode, 0, [{ id: 1, region: 'old' }], { size: 1 }));

    // Assess
    expect(late.tables[0]).toMatchObject({ status: 'committed', rowsWritten: 0 });
    expect(replay.tables[0]).toMatchObject({ skippedAsReplayed: 1 });
    expect(await regions()).toEqual(new Map([[1, 'newer']]));
  });
  it('keeps a key deleted by the first batch of an empty table deleted when a late batch writes it', async () => {
    // Prepare: the live tail (offsets 10–19) commits first, into an empty table, and deletes key 6
    const first = await ingest(batch(mode, 10, [{ id: 6, region: null, was: 'v0' }]));
    expect(first.tables[0].deleteFiles).toBeGreaterThan(0);

    // Act: the backfill (offsets 0–9) wrote key 6
    await ingest(batch(mode, 0, [{ id: 6, region: 'v0' }]));

    // Assess
    expect((await regions()).has(6)).toBe(false);
  });
  it('keeps one row of a key created again after a gap, when the delete in the gap arrives last', async () => {
    // Prepare: key 7 created (offset 0), deleted (offset 1), created again (offset 2)
    await ingest(batch(mode, 0, [{ id: 7, region: 'first' }], { size: 1 }));

    // Act: offset 2 arrives before offset 1
    await ingest(batch(mode, 2, [{ id: 7, region: 'again' }], { size: 1 }));
    await ingest(batch(mode, 1, [{ id: 7, region: null, was: 'first' }], { size: 1 }));

    // Assess
    const table = await wh.catalog.loadTable(route.table);
    const rows = await readScanRows(table, await planScan(table));
    expect(rows.map((r) => `${r.id} ${r.region}`)).toEqual(['7 again']);
  });

  it('reads the versions again when the late partition moves on while the late batch is written', async () => {
    // Prepare: offsets 10–19 commit (key 1 untouched); while the late batch (offsets 0–9, key 1 =
    // 'old') is written, another writer commits key 1 = 'new' at offset 20
    await ingest(batch(mode, 10, []));
    const faulty = new FaultyCatalog(wh.catalog);
    faulty.beforeCommit = async () => {
      await ingest(batch(mode, 20, [{ id: 1, region: 'new' }], { size: 1 }));
    };

    // Act
    const late = await ingestEvent(
      { catalog: faulty, routes: [route] },
      batch(mode, 0, [{ id: 1, region: 'old' }]),
    );

    // Assess
    expect(late.tables[0]).toMatchObject({ status: 'committed', skippedAsReplayed: 0 });
    expect((await regions()).get(1)).toBe('new');
  });

  it('finds the versions of a late batch with more keys than an `in` filter takes', async () => {
    // Prepare: key 1 = 'new' at offset 5000
    await ingest(batch(mode, 5000, [{ id: 1, region: 'new' }], { size: 1 }));

    // Act: 1,200 keys at offsets 0–1199 (filtered by their range), key 1 = 'old' among them
    const late = await ingest(batch(mode, 0, [{ id: 1, region: 'old' }], { size: 1200 }));

    // Assess
    expect(late.tables[0].warnings?.[0]).toMatch(/: 1 older change\(s\) dropped/);
    expect((await regions()).get(1)).toBe('new');
  });
});

describe('late batches on a table keyed by two columns', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(() => wh.cleanup());

  it('compares versions per composite key', async () => {
    // Prepare: (1, EU) = 5 and (1, US) = 6 at offsets 10–11
    const route: TableRoute = {
      table: { namespace: ['db'], name: 'pairs' },
      topics: [CDC_TOPIC],
      schema: ITEMS_SCHEMA,
      mode: 'upsert',
      identifierColumns: ['id', 'region'],
      kafkaLineage: true,
      properties: {},
    };
    const event = (first: number, rows: [number, string, number][]) =>
      jsonEvent(
        CDC_TOPIC,
        rows.map(([id, region, amount]) => ({ id, region, amount })),
        { firstOffset: first, key: (_v, i) => JSON.stringify({ id: rows[i][0], region: rows[i][1] }) },
      );
    const ingest = (e: unknown) => ingestEvent({ catalog: wh.catalog, routes: [route] }, e);
    await ingest(
      event(10, [
        [1, 'EU', 5],
        [1, 'US', 6],
      ]),
    );

    // Act: a late batch changes (1, EU) and adds (1, APAC)
    await ingest(
      event(0, [
        [1, 'EU', -1],
        [1, 'APAC', 7],
      ]),
    );

    // Assess
    const table = await wh.catalog.loadTable(route.table);
    const rows = await readScanRows(table, await planScan(table));
    expect(rows.map((r) => `${r.id} ${r.region} ${r.amount}`).sort()).toEqual([
      '1 APAC 7',
      '1 EU 5',
      '1 US 6',
    ]);
  });
});
