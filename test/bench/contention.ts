/**
 * Section 3: commit throughput under contention. 1, 4 and 16 writers (each its own catalog, FileIO and
 * lock instance, as separate Lambda invocations would be; each fed by its own Kafka partition) commit
 * batches to one table on moto S3 through the DynamoDB lock. A failed batch is redelivered, as the ESM
 * would. Afterwards the table is read back: every offset exactly once (0 lost, 0 duplicated).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import { EmbeddedCatalog } from '../../functions/core/catalog/embedded-catalog.js';
import { ingestEvent } from '../../functions/core/ingest/ingest-event.js';
import { loadOrCreateTable } from '../../functions/core/ingest/ingest-table.js';
import { parseRoutes, type TableRoute } from '../../functions/core/routing/routes.js';
import { S3FileIO } from '../../functions/core/io/s3-file-io.js';
import type { CommitLock } from '../../functions/core/lock/commit-lock.js';
import { createLockTable, DynamoDbLock } from '../../functions/core/lock/dynamodb-lock.js';
import { planScan } from '../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../functions/core/scan/read-scan.js';
import type { Row } from '../../functions/core/spec/types.js';
import { classifyLockRequest, CountingLock, countSdkRequests, Tally } from './counting.js';
import { type MotoServer, oneRequestAtATime } from './moto-process.js';
import { makeOrderMessages, makeOrdersEvent, ORDERS_TOPIC, readOrdersSchema } from './orders-batch.js';
import { median, perSecond } from './stats.js';

export interface ContentionSettings {
  writers: number[];
  commitsPerWriter: number;
  recordsPerCommit: number;
  /** Also run without the lock (optimistic concurrency only), for comparison. */
  withoutLock: boolean;
}

export interface ContentionRow {
  writers: number;
  lock: boolean;
  catalog: 'embedded';
  commits: number;
  records: number;
  wall_ms: number;
  commits_per_s: number;
  records_per_s: number;
  /** Commit attempts that lost the swap (CommitFailed → refresh, re-apply, retry). */
  conflicts: number;
  /** Batches that failed and were redelivered (e.g. retries exhausted). */
  redeliveries: number;
  /** Lock acquire requests refused because another writer held the lock. */
  lock_waits: number;
  /** Median time one commit waited for the lock. */
  lock_wait_median_ms: number;
  /** Median time from a batch's start to its commit. */
  batch_latency_median_ms: number;
  lost: number;
  duplicated: number;
}

interface Shared {
  warehouse: string;
  s3: S3Client;
  dynamodb: DynamoDBClient;
  lockTable: string;
  lockRequests: Tally;
}

async function runWriters(
  shared: Shared,
  route: TableRoute,
  writers: number,
  settings: ContentionSettings,
  useLock: boolean,
): Promise<ContentionRow> {
  const routes = [route];
  await loadOrCreateTable(
    new EmbeddedCatalog({ warehouse: shared.warehouse, io: new S3FileIO({ client: shared.s3 }) }),
    route,
  );
  shared.lockRequests.clear();
  const latencies: number[] = [];
  const waits: number[] = [];
  let conflicts = 0;
  let redeliveries = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      const options = { warehouse: shared.warehouse, io: new S3FileIO({ client: shared.s3 }) };
      const catalog = new EmbeddedCatalog(options);
      for (let k = 0; k < settings.commitsPerWriter; k++) {
        const messages = makeOrderMessages({
          records: settings.recordsPerCommit,
          partitions: 1,
          seed: 1000 * w + k,
          firstOrderId: 10_000_000 * (w + 1) + k * settings.recordsPerCommit,
        }).map((m) => ({ ...m, partition: w }));
        const event = makeOrdersEvent(messages, k * settings.recordsPerCommit);
        const started = performance.now();
        for (let delivery = 0; ; delivery++) {
          const tally = new Tally();
          const lock: CommitLock | undefined = useLock
            ? new CountingLock(
                new DynamoDbLock({ client: shared.dynamodb, tableName: shared.lockTable }),
                tally,
              )
            : undefined;
          try {
            const report = await ingestEvent({ catalog, routes, lock }, event);
            conflicts += report.tables.reduce((s, t) => s + t.conflicts, 0);
            if (lock instanceof CountingLock) waits.push(lock.acquireWaitMs);
            break;
          } catch (error) {
            redeliveries++;
            if (delivery >= 20) throw error;
          }
        }
        latencies.push(performance.now() - started);
      }
    }),
  );
  const wallMs = performance.now() - t0;
  const commits = writers * settings.commitsPerWriter;
  const records = commits * settings.recordsPerCommit;
  const { lost, duplicated } = await verify(shared, route, writers, settings);
  return {
    writers,
    lock: useLock,
    catalog: 'embedded',
    commits,
    records,
    wall_ms: wallMs,
    commits_per_s: perSecond(commits, wallMs),
    records_per_s: perSecond(records, wallMs),
    conflicts,
    redeliveries,
    lock_waits: shared.lockRequests.counts.get('dynamodb.UpdateItem(acquire) failed') ?? 0,
    lock_wait_median_ms: median(waits),
    batch_latency_median_ms: median(latencies),
    lost,
    duplicated,
  };
}

/** Reads the table back with floe's scan: each writer's offsets must appear exactly once. */
async function verify(
  shared: Shared,
  route: TableRoute,
  writers: number,
  settings: ContentionSettings,
): Promise<{ lost: number; duplicated: number }> {
  const catalog = new EmbeddedCatalog({
    warehouse: shared.warehouse,
    io: new S3FileIO({ client: shared.s3 }),
  });
  const table = await catalog.loadTable(route.table);
  const rows = await readScanRows(table, await planScan(table));
  const seen = new Set<string>();
  let duplicated = 0;
  for (const row of rows) {
    const kafka = row._kafka as Row;
    const key = `${kafka.partition}:${kafka.offset}`;
    if (seen.has(key)) duplicated++;
    seen.add(key);
  }
  let lost = 0;
  for (let w = 0; w < writers; w++) {
    for (let o = 0; o < settings.commitsPerWriter * settings.recordsPerCommit; o++) {
      if (!seen.has(`${w}:${o}`)) lost++;
    }
  }
  return { lost, duplicated };
}

export async function runContention(
  moto: MotoServer,
  settings: ContentionSettings,
  progress: (line: string) => void,
): Promise<ContentionRow[]> {
  const dynamodb = moto.dynamodb();
  const lockTable = `floe-locks-${Math.random().toString(36).slice(2, 8)}`;
  await createLockTable(dynamodb, lockTable);
  const lockRequests = new Tally();
  countSdkRequests(dynamodb, 'dynamodb.', lockRequests, classifyLockRequest);
  const shared: Shared = {
    warehouse: `s3://${await moto.createBucket('floe-bench-contention')}/wh`,
    s3: moto.s3(),
    dynamodb: oneRequestAtATime(dynamodb),
    lockTable,
    lockRequests,
  };
  const rows: ContentionRow[] = [];
  const modes: { lock: boolean }[] = [{ lock: true }];
  if (settings.withoutLock) modes.push({ lock: false });
  for (const mode of modes) {
    for (const writers of settings.writers) {
      const label = mode.lock ? 'lock' : 'nolock';
      progress(`contention: ${writers} writer(s), ${label}`);
      const [route] = parseRoutes([
        { table: `bench.contention_${writers}_${label}`, topics: [ORDERS_TOPIC], schema: readOrdersSchema() },
      ]);
      rows.push(await runWriters(shared, route, writers, settings, mode.lock));
    }
  }
  return rows;
}
