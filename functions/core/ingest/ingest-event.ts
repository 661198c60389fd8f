/**
 * A whole ESM event: decode, route records to tables by topic, ingest each table's share.
 * Tables commit independently (each exactly once by its own offsets); the event succeeds only when
 * all of them did, so a failure anywhere makes the ESM redeliver and the committed tables skip it.
 */
import { createHash } from 'node:crypto';
import { ValidationError } from '../errors.js';
import type { CommitLock } from '../lock/commit-lock.js';
import type { Catalog } from '../catalog/catalog.js';
import type { CommitEvent } from '../table/commit-loop.js';
import { computeBatchId } from '../table/source-offsets.js';
import { type DecodedEvent, decodeEsmEvent, type RawRecord } from '../records/esm-event.js';
import { type IngestTableOptions, ingestTable, type TableIngestReport } from './ingest-table.js';
import { routesForTopic, type TableRoute } from '../routing/routes.js';
import { ingestAggregateTable } from './ingest-aggregate.js';
import { emitClosedWindows } from '../aggregate/emit-windows.js';
import { keepShapesAlive } from './keep-shapes.js';
import { OffsetSpan } from './batch-offsets.js';
import { offsetNumber } from '../records/record-columns.js';

export interface IngestEventOptions {
  catalog: Catalog;
  routes: TableRoute[];
  lock?: CommitLock;
  deadlineMs?: number;
  onCommitEvent?: (table: string, event: CommitEvent) => void;
  /** Told about configuration problems a table's batch revealed (also in the table reports). */
  onWarning?: IngestTableOptions['onWarning'];
  /** A Kafka consumer's fetch starts per partition (floe run, floe backfill); the Lambda has none. */
  spanStarts?: IngestTableOptions['spanStarts'];
}

export interface IngestEventReport {
  records: number;
  batchId: string;
  tables: TableIngestReport[];
}

/**
 * The batch id: deterministic from topic-partitions and their offset ranges, and from the records as
 * delivered of those that have no offset (a dead letter placed nowhere: two batches of such letters
 * alone are told apart by what they hold, a redelivery of one is recognised).
 */
export function batchIdOf(records: RawRecord[]): string {
  type Range = { topic: string; partition: number; span: OffsetSpan };
  const ranges = new Map<string, Range>();
  let unplaced: string[] | undefined;
  // The last record's range: a batch holds each topic-partition's records together.
  let range: Range | undefined;
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    const { topic, partition } = r;
    const n = offsetNumber(r);
    if (n < 0) {
      unplaced ??= [];
      unplaced.push(String(JSON.stringify(r.original)));
    }
    if (range === undefined || range.topic !== topic || range.partition !== partition) {
      const key = `${topic}\u0000${partition}`;
      range = ranges.get(key);
      if (!range) {
        range = { topic, partition, span: new OffsetSpan() };
        ranges.set(key, range);
      }
    }
    range.span.add(n, r);
  }
  const id = computeBatchId(
    [...ranges.values()].map(({ topic, partition, span }) => ({
      topic,
      partition,
      first: span.first,
      last: span.last,
    })),
  );
  if (unplaced === undefined) return id;
  return createHash('sha256').update(id).update(unplaced.sort().join('\n')).digest('hex').slice(0, 32);
}

/**
 * @throws ValidationError when the event is not an ESM event or a topic has no route (configuration)
 * @throws LakeError from the tables; `retryable` says whether redelivery can help
 */
export async function ingestEvent(options: IngestEventOptions, event: unknown): Promise<IngestEventReport> {
  return ingestDecodedEvent(options, decodeEsmEvent(event));
}

/**
 * `ingestEvent` of an event decoded already (the Lambda handler decodes first, so that it can let go
 * of the event's text before the batch is mapped).
 * @throws ValidationError when a topic has no route (configuration)
 * @throws LakeError from the tables; `retryable` says whether redelivery can help
 */
export async function ingestDecodedEvent(
  options: IngestEventOptions,
  decoded: DecodedEvent,
): Promise<IngestEventReport> {
  const byRoute = new Map<TableRoute, RawRecord[]>();
  const records = decoded.records;
  // A batch holds each topic's records together: a run of one topic goes to its routes as a slice
  // (a batch of one topic for one table is one copy of the records, not an array grown record by record).
  for (let start = 0; start < records.length; ) {
    const topic = records[start].topic;
    let end = start + 1;
    while (end < records.length && records[end].topic === topic) end++;
    const routes = routesForTopic(options.routes, topic);
    if (routes.length === 0) {
      throw new ValidationError(
        `no table route for topic '${topic}' (configure it in FLOE_TABLES / --table)`,
      );
    }
    for (const route of routes) {
      const list = byRoute.get(route);
      if (list === undefined) byRoute.set(route, records.slice(start, end));
      else for (let i = start; i < end; i++) list.push(records[i]);
    }
    start = end;
  }
  const batchId = batchIdOf(decoded.records);
  const tables = await Promise.all(
    [...byRoute].map(async ([route, records]) => {
      if (!route.aggregate) return ingestTable(options, route, batchId, records, options.routes);
      // An aggregate route: its windows, then (after the commit) the windows it closed to `emit`.
      const { closed, ...report } = await ingestAggregateTable(
        options,
        route,
        route.aggregate,
        batchId,
        records,
        options.routes,
      );
      await emitClosedWindows(options.catalog, route, route.aggregate, batchId, report.status, closed);
      return report;
    }),
  );
  // Once per process, after its first batch (nothing is added to a cold start): see keep-shapes.ts.
  keepShapesAlive();
  return { records: decoded.records.length, batchId, tables };
}
