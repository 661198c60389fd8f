/**
 * Concurrency on one table: 16 writers (Lambda invocations, each with its own catalog and lock objects)
 * commit 12 small batches each to one S3 Tables table on moto through the DynamoDB lock; then a run where
 * every batch is delivered twice, by two writers at once (the ESM's at-least-once replays). After each
 * run: no record lost, none duplicated (floe's reader and DuckDB agree), a linear snapshot history, every
 * batch id at most once, and the committed offsets at the end of every partition.
 */
import { beforeAll, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { describeError } from '../../../functions/core/errors.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import type { TableIdentifier } from '../../../functions/core/spec/types.js';
import { BATCH_ID_KEY, readCommittedOffsets } from '../../../functions/core/table/source-offsets.js';
import { EO_TOPIC, esmEvent, expectedKeys, type OffsetRange } from '../../support/esm-batches.js';
import { expectExactlyOnce } from '../../support/exactly-once-checks.js';
import { createMotoLake, type MotoLake, uniqueSuffix } from '../../support/moto-lakes.js';
import { describeWithMoto, resetMoto } from '../moto.js';
import { deliver } from './deliver.js';

const WRITERS = 16;
/**
 * Batches per writer. Every writer has the same count, so the sixteen race for the lock until near the
 * end whatever the count: 192 contended commits (and 96 batches each delivered twice at once in the
 * second run) already meet each way a commit can lose or double a batch many times over. More batches
 * only lengthen the run (16 × 50 took 224 s in CI, 16 × 25 about 90 s: serialised commits on moto).
 * FLOE_EO_BATCHES raises it for a longer soak or lowers it for a quick local run.
 */
const BATCHES = Number(process.env.FLOE_EO_BATCHES ?? 12);
/** Each run is minutes long: well above the project's 180 s default. */
const RUN_TIMEOUT_MS = 900_000;
const RECORDS_PER_BATCH = 3;
/** How often the ESM redelivers a failed batch before the test calls it stuck. */
const MAX_DELIVERIES = 10;

/** A partition no writer uses: its one record creates the table before the writers start. */
const SEED: OffsetRange[] = [{ partition: 99, first: 0, count: 1 }];

/** Batch `b` of a partition: offsets [b × size, (b + 1) × size). */
function batchOf(partition: number, b: number): OffsetRange[] {
  return [{ partition, first: b * RECORDS_PER_BATCH, count: RECORDS_PER_BATCH }];
}

interface RunStats {
  ms: number;
  deliveries: number;
  statuses: Record<string, number>;
  /** Failed deliveries (redelivered), by error. */
  failures: Record<string, number>;
}

/**
 * Runs writers at once; each delivers its batches in order (as the ESM does per partition), redelivering a
 * batch whose invocation failed.
 * @throws Error when a batch still fails after MAX_DELIVERIES deliveries
 */
async function runWriters(
  lake: MotoLake,
  id: TableIdentifier,
  writers: OffsetRange[][][],
): Promise<RunStats> {
  const stats: RunStats = { ms: 0, deliveries: 0, statuses: {}, failures: {} };
  const started = Date.now();
  await Promise.all(
    writers.map(async (batches) => {
      for (const batch of batches) {
        for (let delivery = 1; ; delivery++) {
          stats.deliveries++;
          try {
            const report = await deliver(lake, id, esmEvent(batch, { oneDay: true }));
            const status = report.tables[0].status;
            stats.statuses[status] = (stats.statuses[status] ?? 0) + 1;
            break;
          } catch (error) {
            const reason = describeError(error)
              .replace(/t_[a-z0-9]+/g, 't')
              .slice(0, 120);
            stats.failures[reason] = (stats.failures[reason] ?? 0) + 1;
            if (delivery >= MAX_DELIVERIES) throw error;
          }
        }
      }
    }),
  );
  stats.ms = Date.now() - started;
  return stats;
}

async function timed(what: string, f: () => Promise<void>): Promise<void> {
  const started = Date.now();
  await f();
  console.info(`[exactly-once] ${what}: ${Date.now() - started} ms`);
}

function expectOffsetsAtEnd(table: LoadedTable, partitions: number[]): void {
  const committed = readCommittedOffsets(table.metadata).get(EO_TOPIC);
  for (const p of partitions)
    expect(committed?.get(p), `partition ${p}`).toEqual([[0n, BigInt(BATCHES * RECORDS_PER_BATCH - 1)]]);
}

describeWithMoto('exactly once under concurrent writers (S3 Tables + DynamoDB lock)', () => {
  let lake: MotoLake;

  beforeAll(async () => {
    await resetMoto();
    lake = await createMotoLake('s3tables', { leaseMs: 10_000 });
  });

  it(`${WRITERS} writers × ${BATCHES} batches on distinct partitions: nothing lost, nothing twice`, {
    timeout: RUN_TIMEOUT_MS,
  }, async () => {
    // Prepare: the table exists (creation races are not under test here); writer w owns partition w
    const id: TableIdentifier = { namespace: ['concurrent'], name: `distinct_${uniqueSuffix()}` };
    await deliver(lake, id, esmEvent(SEED));
    const partitions = Array.from({ length: WRITERS }, (_, w) => w);
    const writers = partitions.map((p) => Array.from({ length: BATCHES }, (_, b) => batchOf(p, b)));

    // Act
    const stats = await runWriters(lake, id, writers);
    console.info(
      `[exactly-once] ${WRITERS} writers × ${BATCHES} batches (distinct): ${JSON.stringify(stats)}`,
    );

    // Assess
    const table = await lake.catalog().loadTable(id);
    const expected = [
      ...expectedKeys(SEED),
      ...partitions.flatMap((p) =>
        expectedKeys([{ partition: p, first: 0, count: BATCHES * RECORDS_PER_BATCH }]),
      ),
    ];
    await timed('checks (distinct)', () => expectExactlyOnce(table, expected));
    expect(stats.statuses).toEqual({ committed: WRITERS * BATCHES });
    expect(table.metadata.snapshots).toHaveLength(1 + WRITERS * BATCHES);
    expect(new Set(table.metadata.snapshots.map((s) => s.summary[BATCH_ID_KEY])).size).toBe(
      1 + WRITERS * BATCHES,
    );
    expectOffsetsAtEnd(table, partitions);
  });

  it(`${WRITERS} writers delivering every batch twice (replays overlap): nothing lost, nothing twice`, {
    timeout: RUN_TIMEOUT_MS,
  }, async () => {
    // Prepare: writers 2k and 2k+1 both deliver partition k's batches, in order, at the same time
    const id: TableIdentifier = { namespace: ['concurrent'], name: `replayed_${uniqueSuffix()}` };
    await deliver(lake, id, esmEvent(SEED));
    const partitions = Array.from({ length: WRITERS / 2 }, (_, k) => k);
    const writers = Array.from({ length: WRITERS }, (_, w) =>
      Array.from({ length: BATCHES }, (_, b) => batchOf(partitions[Math.floor(w / 2)], b)),
    );

    // Act
    const stats = await runWriters(lake, id, writers);
    console.info(
      `[exactly-once] ${WRITERS} writers × ${BATCHES} batches (each twice): ${JSON.stringify(stats)}`,
    );

    // Assess: each batch committed once; its second delivery found it committed
    const table = await lake.catalog().loadTable(id);
    const expected = [
      ...expectedKeys(SEED),
      ...partitions.flatMap((p) =>
        expectedKeys([{ partition: p, first: 0, count: BATCHES * RECORDS_PER_BATCH }]),
      ),
    ];
    await timed('checks (each twice)', () => expectExactlyOnce(table, expected));
    const batches = partitions.length * BATCHES;
    expect(stats.statuses.committed).toBe(batches);
    expect((stats.statuses['already-committed'] ?? 0) + (stats.statuses['nothing-to-commit'] ?? 0)).toBe(
      batches,
    );
    expect(table.metadata.snapshots).toHaveLength(1 + batches);
    expect(currentSnapshot(table.metadata)?.summary['total-records']).toBe(
      String(1 + batches * RECORDS_PER_BATCH),
    );
    expectOffsetsAtEnd(table, partitions);
  });
});
