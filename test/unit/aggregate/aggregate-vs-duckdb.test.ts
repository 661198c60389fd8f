/**
 * The aggregate path end to end on an embedded catalog: thousands of records over many batches from
 * four partitions, out-of-order event times, replayed batches and late records, through ingestEvent.
 * The result table (read with its equality deletes applied) must equal DuckDB's own GROUP BY
 * time_bucket over every record the test itself judges not late, window by window; the late ones
 * must be exactly the DLQ's `late` letters, and window_closed must follow the test's own watermark.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { parseRoutes, type TableRoute } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import type { Row } from '../../../functions/core/spec/types.js';
import { duckdbLiveRows, duckdbQuery, liveEntries, sqlString } from '../../support/readers.js';
import { seededRandom } from '../../support/seeded-random.js';
import { tempWarehouse } from '../../support/tables.js';

const MINUTE = 60_000_000n;
const LATENESS = 30n * 1_000_000n;
const T0 = 1_795_000_000_000_000n; // µs; not minute-aligned, so the first window is a partial one

interface Source {
  partition: number;
  offset: number;
  user_id: number;
  status: string;
  amount_cents: number;
  qty: number;
  note: string | null;
  ts: bigint;
}

const SQL =
  "SELECT user_id, TUMBLE_START(order_ts, INTERVAL '1' MINUTE) AS window_start, SUM(amount) AS paid, COUNT(*) AS orders, " +
  'MIN(qty) AS min_qty, MAX(qty) AS max_qty, AVG(qty) AS avg_qty, COUNT(note) AS notes ' +
  "FROM orders WHERE status = 'PAID' AND qty >= 1 GROUP BY user_id, TUMBLE(order_ts, INTERVAL '1' MINUTE)";

function makeRoutes(): TableRoute[] {
  return parseRoutes([
    {
      topics: ['orders'],
      table: 'rt.paid_per_user_minute',
      schema: {
        type: 'struct',
        'schema-id': 0,
        fields: [
          { id: 1, name: 'user_id', required: true, type: 'long' },
          { id: 2, name: 'status', required: false, type: 'string' },
          { id: 3, name: 'amount', required: true, type: 'decimal(10, 2)' },
          { id: 4, name: 'qty', required: true, type: 'int' },
          { id: 5, name: 'note', required: false, type: 'string' },
          { id: 6, name: 'order_ts', required: true, type: 'timestamptz' },
        ],
      },
      partitionBy: 'day(window_start)',
      aggregate: { sql: SQL, allowedLatenessSeconds: 30, partitions: 4 },
    },
  ]);
}

function s0(m: Map<number, bigint>): bigint {
  return m.values().next().value ?? 0n;
}

function iso(micros: bigint): string {
  return new Date(Number(micros / 1000n)).toISOString();
}

/** Four partitions, each with its own clock (different speeds), jitter ±20 s, 3% of records 3-4 minutes late. */
function makeSources(): Source[][] {
  const random = seededRandom(17);
  const statuses = ['PAID', 'PAID', 'PAID', 'NEW', 'CANCELLED'];
  return [0, 1, 2, 3].map((partition) => {
    const step = 1_200_000 + partition * 150_000; // µs/record: partitions advance at different rates
    return Array.from({ length: 800 }, (_, i): Source => {
      let ts = T0 + BigInt(i * step) + BigInt(Math.floor((random() - 0.5) * 40_000_000));
      if (random() < 0.03) ts -= BigInt(180_000_000 + Math.floor(random() * 60_000_000));
      return {
        partition,
        offset: 1000 + i,
        user_id: 1 + Math.floor(random() * 5),
        status: statuses[Math.floor(random() * statuses.length)],
        amount_cents: Math.floor(random() * 100_000) - 5_000,
        qty: Math.floor(random() * 6),
        note: random() < 0.3 ? null : 'n',
        ts,
      };
    });
  });
}

function eventOf(batch: Source[]): unknown {
  const records: Record<string, unknown[]> = {};
  for (const s of batch) {
    const value = {
      user_id: s.user_id,
      status: s.status,
      amount: (s.amount_cents / 100).toFixed(2),
      qty: s.qty,
      note: s.note,
      order_ts: iso(s.ts),
    };
    const list = records[`orders-${s.partition}`] ?? [];
    records[`orders-${s.partition}`] = list;
    list.push({
      topic: 'orders',
      partition: s.partition,
      offset: s.offset,
      timestamp: Number(s.ts / 1000n),
      timestampType: 'CREATE_TIME',
      value: Buffer.from(JSON.stringify(value)).toString('base64'),
      headers: [],
    });
  }
  return { eventSource: 'aws:kafka', records };
}

/** Batches: per partition in offset order, chunks of 40-160, partitions interleaved at random. */
function makeBatches(sources: Source[][]): Source[][] {
  const random = seededRandom(5);
  const cursors = sources.map(() => 0);
  const batches: Source[][] = [];
  while (cursors.some((c, p) => c < sources[p].length)) {
    const open = cursors.flatMap((c, p) => (c < sources[p].length ? [p] : []));
    const p = open[Math.floor(random() * open.length)];
    const size = 40 + Math.floor(random() * 120);
    batches.push(sources[p].slice(cursors[p], cursors[p] + size));
    cursors[p] += size;
  }
  return batches;
}

describe('aggregate route vs DuckDB', () => {
  let warehouse: { dir: string; catalog: EmbeddedCatalog; cleanup: () => Promise<void> };
  beforeAll(async () => {
    warehouse = await tempWarehouse();
  });
  afterAll(async () => warehouse.cleanup());

  it('matches time_bucket aggregation of the non-late records, window by window', {
    timeout: 240_000,
  }, async () => {
    // Prepare
    const routes = makeRoutes();
    const sources = makeSources();
    const batches = makeBatches(sources);
    const random = seededRandom(99);
    // The test's own watermark and lateness rule, applied in delivery order (replays add nothing).
    const maxSeen = new Map<number, bigint>();
    let watermark: bigint | undefined;
    const late = new Set<string>();
    const accepted: Source[] = [];
    let replays = 0;
    let windowsClosed = 0;
    let lateReported = 0;

    // Act
    const deliver = async (batch: Source[], replay: boolean) => {
      const report = await ingestEvent({ catalog: warehouse.catalog, routes }, eventOf(batch));
      const table = report.tables[0];
      if (replay) {
        expect(table.rowsWritten).toBe(0);
        expect(table.skippedAsReplayed).toBe(batch.length);
        return;
      }
      for (const s of batch) {
        const end = (s.ts / MINUTE) * MINUTE + MINUTE;
        if (s.status === 'PAID' && s.qty >= 1) {
          if (watermark !== undefined && end <= watermark) late.add(`${s.partition}/${s.offset}`);
          else accepted.push(s);
        }
      }
      for (const s of batch) if ((maxSeen.get(s.partition) ?? -1n) < s.ts) maxSeen.set(s.partition, s.ts);
      let min = s0(maxSeen);
      for (const t of maxSeen.values()) if (t < min) min = t;
      // No watermark until all four partitions have been seen (the route says the topic has four).
      if (maxSeen.size === 4 && (watermark === undefined || min - LATENESS > watermark))
        watermark = min - LATENESS;
      windowsClosed += table.windowsClosed ?? 0;
      lateReported += table.lateRecords ?? 0;
    };
    for (let i = 0; i < batches.length; i++) {
      await deliver(batches[i], false);
      if (random() < 0.2) {
        replays++;
        await deliver(batches[Math.floor(random() * (i + 1))], true);
      }
    }

    // Assess: the late records are the DLQ's `late` letters, one each, and the report counted them.
    const dlq = await warehouse.catalog.loadTable({ namespace: ['rt'], name: 'paid_per_user_minute__dlq' });
    const letters = await readScanRows(dlq, await planScan(dlq));
    const lateLetters = letters.filter((l) => l.stage === 'late').map((l) => `${l.partition}/${l.offset}`);
    expect(late.size).toBeGreaterThan(10);
    expect(replays).toBeGreaterThan(3);
    expect(new Set(lateLetters).size).toBe(lateLetters.length);
    expect(new Set(lateLetters)).toEqual(late);
    expect(lateReported).toBe(late.size);
    expect(letters.every((l) => l.stage === 'late')).toBe(true);

    // DuckDB's aggregation over the accepted records.
    const csv = join(warehouse.dir, 'accepted.csv');
    await writeFile(
      csv,
      `user_id,amount_cents,qty,note,ts_us\n${accepted.map((s) => `${s.user_id},${s.amount_cents},${s.qty},${s.note ?? ''},${s.ts}`).join('\n')}\n`,
    );
    const expected = await duckdbQuery(`
      SELECT user_id, epoch_us(time_bucket(INTERVAL '1 minute', make_timestamp(ts_us))) AS window_start,
             SUM(amount_cents)::BIGINT AS paid_cents, COUNT(*)::BIGINT AS orders, MIN(qty)::INT AS min_qty,
             MAX(qty)::INT AS max_qty, AVG(qty)::DOUBLE AS avg_qty, COUNT(note)::BIGINT AS notes,
             SUM(qty)::BIGINT AS qty_sum
      FROM read_csv(${sqlString(csv)}, header = true, nullstr = '',
                    columns = {'user_id': 'BIGINT', 'amount_cents': 'BIGINT', 'qty': 'INT', 'note': 'VARCHAR', 'ts_us': 'BIGINT'})
      GROUP BY ALL ORDER BY window_start, user_id`);

    const table = await warehouse.catalog.loadTable({ namespace: ['rt'], name: 'paid_per_user_minute' });
    const rows = await readScanRows(table, await planScan(table));
    const byKey = new Map<string, Row>(rows.map((r) => [`${r.user_id}/${r.window_start}`, r]));
    expect(rows.length).toBe(byKey.size); // one row per window: the deletes replaced every older one
    // DuckDB over the result table's files, the position deletes anti-joined by file and row number.
    const contents = new Set((await liveEntries(table)).map((e) => e.data_file.content));
    expect([...contents].sort()).toEqual([0, 1]);
    const show = (r: Record<string, unknown>) => `${r.user_id}/${r.ws ?? r.window_start}/${r.paid}`;
    const duck = await duckdbLiveRows(
      table,
      ['user_id', 'epoch_us(window_start) as ws', 'cast(paid * 100 as bigint) as paid'],
      ['user_id'],
    );
    expect(duck.map(show).sort()).toEqual(rows.map(show).sort());
    expect(rows.length).toBe(expected.length);
    expect(expected.length).toBeGreaterThan(80);
    let closed = 0;
    for (const e of expected) {
      const key = `${e.user_id}/${e.window_start}`;
      const r = byKey.get(key);
      expect(r, key).toBeDefined();
      const start = BigInt(e.window_start as bigint);
      expect({
        key,
        paid: r?.paid,
        orders: r?.orders,
        min: r?.min_qty,
        max: r?.max_qty,
        notes: r?.notes,
        sum: r?.avg_qty_sum,
        count: r?.avg_qty_count,
        end: r?.window_end,
        closed: r?.window_closed,
      }).toEqual({
        key,
        paid: BigInt(e.paid_cents as bigint),
        orders: BigInt(e.orders as bigint),
        min: e.min_qty,
        max: e.max_qty,
        notes: BigInt(e.notes as bigint),
        sum: BigInt(e.qty_sum as bigint),
        count: BigInt(e.orders as bigint),
        end: start + MINUTE,
        closed: watermark !== undefined && start + MINUTE <= watermark,
      });
      expect(r?.avg_qty as number).toBeCloseTo(e.avg_qty as number, 12);
      if (r?.window_closed) closed++;
    }
    expect(closed).toBeGreaterThan(50);
    expect(windowsClosed).toBe(closed);
    process.stdout.write(
      `aggregate vs DuckDB: ${sources.flat().length} records, ${batches.length} batches + ${replays} replays, ` +
        `${accepted.length} counted, ${late.size} late, ${expected.length} windows (${closed} closed)\n`,
    );
  });
});
