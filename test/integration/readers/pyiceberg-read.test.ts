/**
 * floe's keyed tables read by PyIceberg built from its source (apache/iceberg-python, with pyroaring
 * compiled from PyRoaringBitMap's source: test/interop/pyiceberg/setup.sh) after every batch, with no
 * maintenance run, against a model of the changes and against floe's own reader, field by field:
 * - a debezium and an upsert table (v2 position deletes, the key index on) over batches with updates,
 *   deletes, a late batch, replays and an overlapping redelivery; their key-versions files (position
 *   delete files that name no data file) must change nothing PyIceberg reads;
 * - an aggregate result table, its windows re-emitted by position deletes (decimal sums, exact);
 * - v3 upsert and debezium tables, their deletion vectors decoded by the real Roaring code, and a
 *   deleted key's version carrier (a data file `key-versions-…` whose rows a vector deletes) unseen.
 * - a v3 table as floe wrote it before carriers were data files (an equality delete carrying a deleted
 *   key's version), read once floe's equality-delete conversion rewrote the carrier.
 * What PyIceberg refuses is pinned too, word for word: equality deletes, in a table set to
 * `floe.delete-mode=equality`, and in that earlier v3 carrier.
 * Each table is read as it was after each batch (its metadata file then), all by one Python process
 * (its start-up overlaps the first table's batches). Skipped when no PyIceberg is set up (see the
 * describe's name; test/interop/pyiceberg/README.md).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { toFileUri } from '../../../functions/core/io/location.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { convertEqualityDeletes } from '../../../functions/core/maintenance/convert-equality-deletes.js';
import { parseRoutes, type TableRoute } from '../../../functions/core/routing/routes.js';
import {
  buildStream,
  CDC_TOPIC,
  type CdcTestMode,
  type Delivery,
  esmEvent,
  ITEMS_SCHEMA,
  itemKey,
  modelAfter,
  type Step,
  type Stream,
} from '../../support/cdc-stream.js';
import {
  decimalText,
  type Exact,
  expectEachAsFloe,
  PyIcebergReader,
  planned,
  pyicebergPython,
  rowsOf,
  type Seen,
  see,
} from '../../support/pyiceberg-reader.js';
import { commitEqualityCarrier } from '../../support/equality-carrier.js';
import { liveEntries } from '../../support/readers.js';
import { tempWarehouse } from '../../support/tables.js';

const PYTHON = pyicebergPython();
const EQUALITY_REFUSAL = {
  stage: 'plan',
  type: 'ValueError',
  message: 'PyIceberg does not yet support equality deletes: https://github.com/apache/iceberg/issues/6568',
};

/** One step of the source table: insert or update (`set`), `delete`; `noise` adds a non-change record. */
const step = (id: number, kind: 'snapshot' | 'set' | 'delete', amount: number, noise = false): Step => ({
  id,
  action: kind === 'snapshot' ? 0 : kind === 'set' ? 5 : 8,
  region: ['EU', 'US', 'APAC'][amount % 3],
  amount,
  note: amount % 2 === 0 ? null : `n${amount}`,
  noise,
});

/** Updates, deletes (some followed by a tombstone), a re-insert and heartbeats, over keys 1–6. */
const CHANGES: Step[] = [
  step(1, 'set', 10),
  step(2, 'set', 20),
  step(3, 'snapshot', 30),
  step(4, 'set', 40),
  step(1, 'set', 11),
  step(2, 'delete', 0, true),
  step(3, 'set', 31, true),
  step(5, 'set', 50),
  step(2, 'set', 21),
  step(4, 'delete', 0),
  step(1, 'set', 12),
  step(5, 'delete', 0, true),
  step(3, 'set', 32),
  step(6, 'set', 60),
  step(1, 'delete', 0),
  step(6, 'set', 61),
];

/** Batches of the stream, then the order they arrive in: one late, two replayed, one redelivered wider. */
function deliveries(stream: Stream): Delivery[] {
  const at = [0, 3, 6, 9, 12, 15, stream.records.length];
  const batch = (b: number): Delivery => ({ from: at[b], to: at[b + 1] });
  return [
    batch(0),
    batch(1),
    batch(3),
    batch(2),
    batch(2),
    batch(4),
    batch(3),
    batch(5),
    { from: 8, to: at[6] },
  ];
}

describe.skipIf(!PYTHON)(
  'PyIceberg (built from source) reads floe’s tables after every batch — skipped unless test/interop/pyiceberg/setup.sh has run or FLOE_PYICEBERG_PYTHON names a Python with pyiceberg and pyroaring',
  () => {
    const python = PYTHON!;
    let catalog: EmbeddedCatalog;
    let dir: string;
    let cleanup: () => Promise<void>;
    let reader: PyIcebergReader;
    beforeAll(async () => {
      ({ dir, catalog, cleanup } = await tempWarehouse());
      // Started now, so its imports overlap the first table's batches.
      reader = PyIcebergReader.start(python);
      reader.versions.then(
        (v) => process.stdout.write(`pyiceberg-read: ${JSON.stringify(v)} (${python})\n`),
        () => undefined, // a failed start shows on the first read
      );
    });
    afterAll(async () => {
      await reader?.close();
      await cleanup?.();
    });

    const cdcRoute = (
      mode: CdcTestMode,
      name: string,
      properties: Record<string, string> = {},
      partitionBy?: string,
    ): TableRoute => ({
      table: { namespace: ['cdc'], name },
      topics: [CDC_TOPIC],
      schema: ITEMS_SCHEMA,
      partitionBy,
      mode,
      identifierColumns: ['id'],
      kafkaLineage: true,
      properties,
    });

    /** Delivers each batch and sees the table after it. */
    async function ingestAll(
      route: TableRoute,
      mode: CdcTestMode,
      stream: Stream,
      plan: Delivery[],
    ): Promise<Seen[]> {
      const delivered = new Set<number>();
      const seen: Seen[] = [];
      for (const [i, d] of plan.entries()) {
        const report = await ingestEvent({ catalog, routes: [route] }, esmEvent(stream.records, d));
        expect(report.tables[0].deadLettered).toBe(0);
        for (let r = d.from; r < d.to; r++) delivered.add(r);
        const label = `${route.table.name} after delivery ${i} [${d.from}, ${d.to})`;
        seen.push(await see(catalog, route.table, label, modelAfter(stream, mode, delivered)));
      }
      return seen;
    }

    // The upsert table is partitioned by a column its updates change: rows move between partitions,
    // and each partition's deletes must reach only that partition's files.
    for (const [mode, partitionBy] of [
      ['debezium', undefined],
      ['upsert', 'region'],
    ] as const) {
      it(`${mode} table (v2 position deletes, key index, partitioned by ${partitionBy ?? 'nothing'}): every batch equals the model and floe`, async () => {
        // Prepare
        const route = cdcRoute(mode, mode, {}, partitionBy);
        const stream = buildStream(CHANGES, mode);
        const seen = await ingestAll(route, mode, stream, deliveries(stream));
        const table = await catalog.loadTable(route.table);
        const live = await liveEntries(table);
        const index = await see(catalog, { namespace: ['cdc'], name: `${mode}__keys` }, 'key index', []);

        // Act
        const answers = await reader.read(seen.map((s) => s.location));
        const [indexAnswer] = await reader.read([index.location]);

        // Assess: every batch as the model and floe; position deletes were applied, key-versions files
        // were there, and the key index (a plain v2 table) reads the same too
        expectEachAsFloe(seen, answers, itemKey);
        expect(live.some((e) => e.data_file.content === 2)).toBe(false);
        expect(
          live.some((e) => e.data_file.content === 1 && /key-versions-/.test(e.data_file.file_path)),
        ).toBe(true);
        expect(answers.some((a) => planned(a, 'POSITION_DELETES/PARQUET') > 0)).toBe(true);
        expect(rowsOf(indexAnswer, 'key index')).toEqual(index.floe);
        expect(index.floe.length).toBeGreaterThan(0);
      });
    }

    it('an aggregate result table (windows re-emitted by position deletes): exact decimal sums after every batch', async () => {
      // Prepare: two partitions, event times rising so no record is late; later batches add to
      // windows earlier batches wrote (re-emitted: position deletes replace the old rows). This
      // warehouse is a file:// URI, so its metadata names files by URI, not by path.
      const uris = new EmbeddedCatalog({ warehouse: toFileUri(join(dir, 'uris')) });
      const [route] = parseRoutes([
        {
          topics: ['orders'],
          table: 'rt.paid_per_user_minute',
          schema: {
            type: 'struct',
            'schema-id': 0,
            fields: [
              { id: 1, name: 'user_id', required: true, type: 'long' },
              { id: 2, name: 'amount', required: true, type: 'decimal(10, 2)' },
              { id: 3, name: 'order_ts', required: true, type: 'timestamptz' },
            ],
          },
          aggregate: {
            sql: "SELECT user_id, SUM(amount) AS paid, COUNT(*) AS orders FROM orders GROUP BY user_id, TUMBLE(order_ts, INTERVAL '1' MINUTE)",
            allowedLatenessSeconds: 30,
            partitions: 2,
          },
          partitionBy: 'day(window_start)',
        },
      ]);
      const t0 = Date.UTC(2026, 10, 21, 12, 0, 0);
      type Order = [user: number, cents: number, sec: number];
      const eventOf = (partition: number, firstOffset: number, orders: Order[]) => ({
        eventSource: 'SelfManagedKafka',
        records: {
          [`orders-${partition}`]: orders.map(([user, cents, sec], i) => ({
            topic: 'orders',
            partition,
            offset: firstOffset + i,
            timestamp: t0,
            timestampType: 'CREATE_TIME',
            value: Buffer.from(
              JSON.stringify({
                user_id: user,
                amount: decimalText(BigInt(cents), 2),
                order_ts: new Date(t0 + sec * 1000).toISOString(),
              }),
            ).toString('base64'),
            headers: [],
          })),
        },
      });
      // [partition, first offset, orders as [user, cents, second of the hour]]
      const batches: [number, number, Order[]][] = [
        [
          0,
          0,
          [
            [1, 1025, 5],
            [2, 710, 20],
            [1, -5, 70],
          ],
        ],
        [
          1,
          0,
          [
            [1, 300, 30],
            [2, 250, 95],
          ],
        ],
        [
          0,
          3,
          [
            [3, 400, 150],
            [1, 115, 160],
          ],
        ],
        [
          1,
          2,
          [
            [1, 999, 200],
            [1, 100, 165],
            [2, 101, 170],
          ],
        ],
        [
          0,
          5,
          [
            [2, 1, 210],
            [1, 2, 230],
          ],
        ],
      ];
      const plan = [0, 1, 1, 2, 3, 2, 4]; // two replays
      const counted = new Set<number>();
      const windows = new Map<string, { cents: bigint; orders: number }>();
      const seen: Seen[] = [];
      for (const [i, b] of plan.entries()) {
        const [partition, offset, orders] = batches[b];
        const report = await ingestEvent(
          { catalog: uris, routes: [route] },
          eventOf(partition, offset, orders),
        );
        expect(report.tables[0].lateRecords ?? 0).toBe(0);
        if (!counted.has(b)) {
          counted.add(b);
          for (const [user, cents, sec] of orders) {
            const start = (BigInt(t0) + BigInt(Math.floor(sec / 60) * 60_000)) * 1000n;
            const key = `${user}|${start}`;
            const w = windows.get(key) ?? { cents: 0n, orders: 0 };
            windows.set(key, { cents: w.cents + BigInt(cents), orders: w.orders + 1 });
          }
        }
        const model = [...windows].map(([k, w]) => `${k}|${decimalText(w.cents, 2)}|${w.orders}`).sort();
        seen.push(await see(uris, route.table, `aggregate after delivery ${i} (batch ${b})`, model));
      }
      const live = await liveEntries(await uris.loadTable(route.table));

      // Act
      const answers = await reader.read(seen.map((s) => s.location));

      // Assess
      expect(seen[0].location).toMatch(/^file:\/\//);
      const windowKey = (r: Record<string, Exact>) => `${r.user_id}|${r.window_start}|${r.paid}|${r.orders}`;
      expectEachAsFloe(seen, answers, windowKey);
      expect(new Set(live.map((e) => e.data_file.content))).toEqual(new Set([0, 1]));
      expect(planned(answers.at(-1)!, 'POSITION_DELETES/PARQUET')).toBeGreaterThan(0);
    });

    for (const mode of ['upsert', 'debezium'] as const)
      it(`v3 ${mode} table: deletion vectors decoded by pyroaring; a deleted key’s version carrier unseen`, async () => {
        // Prepare: updates (vectors, no key left deleted), a replay, then one delete
        const route = cdcRoute(mode, `v3_${mode}`, { 'format-version': '3' }, 'bucket(2, id)');
        const updates = [1, 2, 3, 4, 1, 3, 2, 4, 1].map((id, i) => step(id, 'set', 70 + i));
        const stream = buildStream([...updates, step(2, 'delete', 0)], mode);
        const plan: Delivery[] = [
          { from: 0, to: 4 },
          { from: 4, to: 6 },
          { from: 6, to: 9 },
          { from: 4, to: 6 }, // a replay
          { from: 9, to: 10 }, // the delete
        ];
        const seen = await ingestAll(route, mode, stream, plan);
        const live = await liveEntries(await catalog.loadTable(route.table));

        // Act
        const answers = await reader.read(seen.map((s) => s.location));

        // Assess: every batch equals the model and floe, Puffin vectors planned; after the delete the
        // key's version rides on a data file (content 0, named key-versions-) its vector deletes whole
        expectEachAsFloe(seen, answers, itemKey);
        expect(planned(answers.at(-1)!, 'POSITION_DELETES/PUFFIN')).toBeGreaterThan(0);
        expect(live.some((e) => e.data_file.content === 2)).toBe(false);
        const carriers = live.filter(
          (e) => e.data_file.content === 0 && /key-versions-/.test(e.data_file.file_path),
        );
        expect(carriers.map((e) => e.data_file.record_count)).toEqual([1n]);
        expect(
          live.filter((e) => e.data_file.referenced_data_file === carriers[0].data_file.file_path),
        ).toHaveLength(1);
      });

    it('a v3 table written before version carriers were data files: refused for its equality carrier, read once floe converted it', async () => {
      // Prepare: keys 1–3, then key 9's deletion (offset 2) carried as floe wrote it before
      const route = cdcRoute('upsert', 'v3_before', { 'format-version': '3' });
      const stream = buildStream(
        [1, 2, 3].map((id, i) => step(id, 'set', 90 + i)),
        'upsert',
      );
      const [written] = await ingestAll(route, 'upsert', stream, [{ from: 0, to: 3 }]);
      await commitEqualityCarrier(catalog, route.table, CDC_TOPIC, 9n, 2n);
      const carried = await see(catalog, route.table, 'v3_before with an equality carrier', written.model);

      // Act
      await convertEqualityDeletes(catalog, route.table);
      const converted = await see(catalog, route.table, 'v3_before converted', written.model);
      const answers = await reader.read([carried.location, converted.location]);

      // Assess: refused, then the model; the carrier is a data file now, deleted by its vector
      expect(answers[0]).toEqual({ error: EQUALITY_REFUSAL });
      expectEachAsFloe([converted], answers.slice(1), itemKey);
      const live = await liveEntries(await catalog.loadTable(route.table));
      expect(live.some((e) => e.data_file.content === 2)).toBe(false);
      expect(planned(answers[1], 'POSITION_DELETES/PUFFIN')).toBe(1);
    });

    it('a table in floe.delete-mode=equality: read until its first equality delete, then refused (why position mode is the default)', async () => {
      // Prepare: inserts, then updates (equality deletes of the replaced keys)
      const route = cdcRoute('upsert', 'equality', { 'floe.delete-mode': 'equality' });
      const stream = buildStream(
        [1, 2, 3, 1, 2].map((id, i) => step(id, 'set', 80 + i)),
        'upsert',
      );
      const seen = await ingestAll(route, 'upsert', stream, [
        { from: 0, to: 3 },
        { from: 3, to: 5 },
      ]);

      // Act
      const answers = await reader.read(seen.map((s) => s.location));

      // Assess
      const first = rowsOf(answers[0], seen[0].label);
      expect(first.map(itemKey).sort()).toEqual(seen[0].model);
      expect(first).toEqual(seen[0].floe);
      expect(seen[1].floe.map(itemKey).sort()).toEqual(seen[1].model);
      expect(answers[1]).toEqual({ error: EQUALITY_REFUSAL });
    });
  },
);
