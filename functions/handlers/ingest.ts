/**
 * Lambda handler for MSK and self-managed Kafka event source mappings: one ESM batch → one Iceberg
 * snapshot per table, exactly once. A thrown error fails the batch and the ESM redelivers it (the
 * committed tables skip it by their offsets); success lets the ESM commit the Kafka offsets.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { LakeError } from '../core/errors.js';
import { ingestEvent, type IngestEventReport } from '../core/ingest/ingest-event.js';
import { type HandlerConfig, loadHandlerConfig } from './config.js';
import { recordIngestMetrics } from './ingest-metrics.js';

// Service name and namespace come from POWERTOOLS_SERVICE_NAME / POWERTOOLS_METRICS_NAMESPACE, which the
// construct sets: its alarms and dashboard read the metrics under exactly those dimensions.
const logger = new Logger();
const metrics = new Metrics();
/** Time kept back to fail cleanly (and let the ESM retry) instead of being killed mid-commit. */
const SAFETY_MARGIN_MS = 10_000;
let config: Promise<HandlerConfig> | undefined;

export async function ingestHandler(
  event: unknown,
  context: Pick<Context, 'getRemainingTimeInMillis'>,
): Promise<IngestEventReport> {
  // Loaded once per cold start; a failed load (a secret not reachable yet) is retried next time.
  config ??= loadHandlerConfig().catch((error: unknown) => {
    config = undefined;
    throw error;
  });
  const { catalog, lock, routes } = await config;
  const deadlineMs = Date.now() + context.getRemainingTimeInMillis() - SAFETY_MARGIN_MS;
  // Every log line of this batch carries its topic-partition offset ranges.
  logger.appendKeys({ offsets: offsetRanges(event) });
  try {
    const report = await ingestEvent(
      {
        catalog,
        lock,
        routes,
        deadlineMs,
        onCommitEvent: (table, e) => {
          if (e.type !== 'attempt') logger.info('commit', { table, ...e });
          if (e.type === 'committed') metrics.addMetric('CommitLatency', MetricUnit.Milliseconds, e.ms);
        },
        // Schema changes, keys seen on two partitions, ...: worth a log line and a metric each.
        onWarning: (table, message) => {
          logger.warn(message, { table });
          metrics.addMetric(
            message.startsWith('schema evolves') ? 'SchemaChanges' : 'IngestWarnings',
            MetricUnit.Count,
            1,
          );
        },
      },
      event,
    );
    recordIngestMetrics(metrics, report);
    for (const t of report.tables) logger.info('table ingested', { ...t });
    return report;
  } catch (error) {
    const retryable = error instanceof LakeError ? error.retryable : true;
    logger.error('batch failed; the event source mapping will redeliver it', {
      retryable,
      error: error as Error,
    });
    metrics.addMetric('FailedBatches', MetricUnit.Count, 1);
    throw error;
  }
}

/** `{ "topic-partition": "first..last" }` from the raw event, for logs (no decoding). */
function offsetRanges(event: unknown): Record<string, string> {
  const records = (event as { records?: Record<string, { offset?: unknown }[]> } | null)?.records;
  const out: Record<string, string> = {};
  if (!records || typeof records !== 'object') return out;
  for (const [key, list] of Object.entries(records)) {
    if (!Array.isArray(list) || list.length === 0) continue;
    out[key] = `${list[0]?.offset}..${list[list.length - 1]?.offset}`;
  }
  return out;
}

export const handler = middy(ingestHandler).use(logMetrics(metrics));
