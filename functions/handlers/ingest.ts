/**
 * Lambda handler for MSK and self-managed Kafka event source mappings: one ESM batch → one Iceberg
 * snapshot per table, exactly once. A thrown error fails the batch and the ESM redelivers it (the
 * committed tables skip it by their offsets); success lets the ESM commit the Kafka offsets.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import { ingestDecodedEvent } from '../core/ingest/ingest-event.js';
import { OffsetIdentityError } from '../core/ingest/offset-identity-error.js';
import { decodeEsmEvent } from '../core/records/esm-event.js';
import { RecordStorage } from '../core/records/record-columns.js';
import { tuneHeapGrowth } from './heap-growth.js';
import { newestTimestamps, observeBatch, recordIngestMetrics, recordTableMetrics } from './ingest-metrics.js';
import { type IngestSummary, offsetRanges, summarizeIngest } from './ingest-summary.js';
import { cacheConfig, deadlineOf, isRetryable, type JsonSafe, type RemainingTime } from './lambda-glue.js';

// Service name and namespace come from POWERTOOLS_SERVICE_NAME / POWERTOOLS_METRICS_NAMESPACE, which the
// construct sets: its alarms and dashboard read the metrics under exactly those dimensions.
const logger = new Logger();
const metrics = new Metrics();
const config = cacheConfig();
// A deployed function's heap grows as V8 lets a large heap grow (heap-growth.ts): ~25-45 % less CPU per 6 MB batch.
tuneHeapGrowth();
// Each batch decodes into the buffers of the one before (record-columns.ts RecordStorage). Lambda runs
// one invocation at a time; a caller that overlaps them (not Lambda) gets fresh buffers for the overlap.
const storage = new RecordStorage();
let inFlight = 0;

export async function ingestHandler(
  event: unknown,
  context: RemainingTime,
): Promise<JsonSafe<IngestSummary>> {
  // Every log line of this batch carries its topic-partition offset ranges (reset after it).
  logger.appendKeys({ offsets: offsetRanges(event) });
  const alone = inFlight++ === 0;
  try {
    const { catalog, lock, routes } = await config();
    const options = { catalog, lock, routes, deadlineMs: deadlineOf(context) };
    const decoded = decodeEsmEvent(event, alone ? { storage } : {});
    releaseRecords(event);
    const newest = newestTimestamps(decoded.records, routes);
    const report = await ingestDecodedEvent({ ...options, ...observeBatch(logger, metrics) }, decoded);
    const summary = summarizeIngest(report);
    recordIngestMetrics(metrics, summary);
    recordTableMetrics(metrics, summary, newest, Date.now());
    for (const t of summary.tables) logger.info('table ingested', { ...t });
    return summary;
  } catch (error) {
    const retryable = isRetryable(error);
    logger.error('batch failed; the event source mapping will redeliver it', {
      retryable,
      error: error as Error,
    });
    metrics.addMetric('FailedBatches', MetricUnit.Count, 1);
    // The topic's history changed under a table: the construct's OffsetIdentityMismatch alarm reads this.
    if (error instanceof OffsetIdentityError)
      metrics.addMetric('OffsetIdentityMismatches', MetricUnit.Count, 1);
    throw error;
  } finally {
    inFlight--;
  }
}

/**
 * Lambda's runtime (and middy) hold the event until the handler returns. Once decoded, its records (the
 * base64 text and header byte arrays: ~14 MiB of heap for a 6 MB batch) are no use to anyone: dropped
 * from the event, they are garbage while the batch is mapped, written and committed. A record that did
 * not decode keeps its original for the dead-letter table (`RawRecord.original`).
 */
function releaseRecords(event: unknown): void {
  if (typeof event === 'object' && event !== null) delete (event as { records?: unknown }).records;
}

export const handler = middy(ingestHandler)
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(logMetrics(metrics));
