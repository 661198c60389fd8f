/**
 * Section 6: freshness — from the handler receiving a batch (its event text) to the batch's snapshot
 * being visible to a fresh reader (a new EmbeddedCatalog loading the table and finding the batch id).
 * Embedded on local disk through the real handler, and embedded on moto S3 (S3FileIO) through the same
 * core (`ingestEvent`: the handler reads its warehouse once per process) with the DynamoDB lock.
 * The reader polls from the moment the handler returns; the commit point itself is a few requests
 * earlier, so these are upper bounds by the version-hint write and the handler's return.
 */
import { EmbeddedCatalog } from '../../functions/core/catalog/embedded-catalog.js';
import { ingestEvent } from '../../functions/core/ingest/ingest-event.js';
import { parseRoutes } from '../../functions/core/routing/routes.js';
import type { FileIO } from '../../functions/core/io/file-io.js';
import { S3FileIO } from '../../functions/core/io/s3-file-io.js';
import { createLockTable, DynamoDbLock } from '../../functions/core/lock/dynamodb-lock.js';
import type { TableIdentifier } from '../../functions/core/spec/types.js';
import { findBatch } from '../../functions/core/table/source-offsets.js';
import { BENCH_TABLE, getHandlerHarness } from './floe-handler.js';
import { type MotoServer, oneRequestAtATime } from './moto-process.js';
import { makeOrderMessages, makeOrdersEvent, ORDERS_TOPIC, readOrdersSchema } from './orders-batch.js';
import { median } from './stats.js';

export interface FreshnessSettings {
  /** Batch sizes (records); the largest is the 6 MB batch. */
  sizes: number[];
  repeats: number;
}

export interface FreshnessRow {
  target: 'embedded, local' | 'embedded on S3 (moto)';
  records: number;
  /** Median: handler start → visible to a fresh reader. */
  ms: number;
  /** Median time the fresh reader needed to load the table and see the snapshot. */
  reader_ms: number;
}

/** Loads the table with a brand-new catalog until the batch is there. */
async function waitVisible(
  warehouse: string,
  io: FileIO | undefined,
  id: TableIdentifier,
  batchId: string,
): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const table = await new EmbeddedCatalog({ warehouse, io }).loadTable(id);
    if (findBatch(table.metadata, batchId) !== undefined) return performance.now() - t0;
  }
}

export async function runFreshness(
  moto: MotoServer | undefined,
  settings: FreshnessSettings,
  progress: (line: string) => void,
): Promise<FreshnessRow[]> {
  const rows: FreshnessRow[] = [];
  const harness = await getHandlerHarness();
  for (const records of settings.sizes) {
    progress(`freshness: embedded, local, ${records} records`);
    const messages = makeOrderMessages({ records, partitions: 6, seed: 21 });
    const totals: number[] = [];
    const readers: number[] = [];
    for (let r = 0; r <= settings.repeats; r++) {
      const eventJson = harness.nextEventJson(messages);
      const t0 = performance.now();
      const report = await harness.invoke(eventJson);
      const readerMs = await waitVisible(harness.warehouse, undefined, BENCH_TABLE, report.batchId);
      if (r === 0) continue; // warm-up
      totals.push(performance.now() - t0);
      readers.push(readerMs);
    }
    rows.push({ target: 'embedded, local', records, ms: median(totals), reader_ms: median(readers) });
  }
  if (!moto) return rows;

  const dynamodb = moto.dynamodb();
  const lockTable = `floe-locks-${Math.random().toString(36).slice(2, 8)}`;
  await createLockTable(dynamodb, lockTable);
  const warehouse = `s3://${await moto.createBucket('floe-bench-freshness')}/wh`;
  const s3 = moto.s3();
  const routes = parseRoutes([{ table: 'bench.fresh', topics: [ORDERS_TOPIC], schema: readOrdersSchema() }]);
  let firstOffset = 0;
  for (const records of settings.sizes) {
    progress(`freshness: embedded on S3 (moto), ${records} records`);
    const messages = makeOrderMessages({ records, partitions: 6, seed: 22 });
    const perPartition = Math.max(...messages.map((m) => m.index)) + 1;
    const totals: number[] = [];
    const readers: number[] = [];
    for (let r = 0; r <= settings.repeats; r++) {
      const eventJson = JSON.stringify(makeOrdersEvent(messages, firstOffset));
      firstOffset += perPartition;
      const t0 = performance.now();
      // What the handler does, with this process's own catalog and lock (one per invocation, as a cold
      // start would build them; clients are shared, as a warm Lambda's are).
      const catalog = new EmbeddedCatalog({ warehouse, io: new S3FileIO({ client: s3 }) });
      const lock = new DynamoDbLock({ client: oneRequestAtATime(dynamodb), tableName: lockTable });
      const report = await ingestEvent({ catalog, routes, lock }, JSON.parse(eventJson));
      const readerMs = await waitVisible(
        warehouse,
        new S3FileIO({ client: s3 }),
        routes[0].table,
        report.batchId,
      );
      if (r === 0) continue;
      totals.push(performance.now() - t0);
      readers.push(readerMs);
    }
    rows.push({ target: 'embedded on S3 (moto)', records, ms: median(totals), reader_ms: median(readers) });
  }
  return rows;
}
