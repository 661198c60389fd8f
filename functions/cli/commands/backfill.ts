/**
 * `floe backfill --bootstrap-servers … --topic T --warehouse … (--table NS.NAME [route flags] | --routes FILE)
 *  [--from earliest|ISO-TIME] [--to latest|ISO-TIME] [--batch-size N]`: an existing topic's history into
 * a new or existing table, exactly once by the table's committed offsets (functions/core/kafka/backfill.ts).
 */
import { formatIdentifier } from '../../core/catalog/catalog.js';
import { describeError, LakeError } from '../../core/errors.js';
import {
  type BackfillBound,
  type BackfillProgress,
  planBackfillFromBrokers,
  runBackfill,
} from '../../core/kafka/backfill.js';
import { ESM_MAX_BATCH_SIZE } from '../../core/kafka/esm-batch.js';
import { createCheckedKafka } from '../../core/kafka/kafka-client.js';
import { helpFor } from '../help.js';
import { UsageError } from '../options.js';
import {
  connectionFromOptions,
  integerFlag,
  type KafkaCommandOptions,
  parseIsoTime,
  parseKafkaArgs,
  refuseGroupFlags,
  routesForTopics,
} from '../kafka-options.js';
import {
  describeReport,
  describeSpans,
  ingestFormed,
  openKafkaCatalog,
  StatusLine,
  stopOnSignals,
} from '../kafka-session.js';

/** @throws UsageError for a bound that is neither the keyword nor an ISO time */
export function parseBound(
  text: string | undefined,
  keyword: 'earliest' | 'latest',
  flag: string,
): BackfillBound {
  if (text === undefined || text === keyword) return keyword;
  return parseIsoTime(text, flag);
}

export interface BackfillConfig {
  topic: string;
  from: BackfillBound;
  to: BackfillBound;
  batchSize: number;
}

/** @throws UsageError */
export function backfillConfigFromOptions(values: KafkaCommandOptions): BackfillConfig {
  const topic = values.topic;
  if (!topic) throw new UsageError('--topic is required');
  if (values.topics !== undefined)
    throw new UsageError('backfill reads one topic: use --topic, not --topics');
  refuseGroupFlags(values, 'backfill');
  const from = parseBound(values.from, 'earliest', '--from');
  const to = parseBound(values.to, 'latest', '--to');
  if (typeof from === 'number' && typeof to === 'number' && to < from) {
    throw new UsageError('--to is before --from');
  }
  return {
    topic,
    from,
    to,
    // Backfills are throughput: full ESM batches unless told otherwise.
    batchSize: integerFlag(values, 'batch-size', ESM_MAX_BATCH_SIZE, 1, ESM_MAX_BATCH_SIZE),
  };
}

function formatEta(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return '?';
  const s = Math.round(seconds);
  return s >= 3600
    ? `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`
    : s >= 60
      ? `${Math.floor(s / 60)}m${s % 60}s`
      : `${s}s`;
}

function describeProgress(p: BackfillProgress): string {
  const percent = p.total === 0n ? 100 : Number((p.done * 1000n) / p.total) / 10;
  const offsets = p.ranges.map((r) => `${r.partition}:${p.next.get(r.partition)}/${r.end}`).join(' ');
  return `floe backfill: ${percent}% · ${p.records} records (${Math.round(p.recordsPerSecond)}/s) · ETA ${formatEta(p.etaSeconds)} · offsets ${offsets}`;
}

export async function runBackfillCommand(args: string[]): Promise<number> {
  const values = parseKafkaArgs(args, 'backfill');
  if (values.help) {
    process.stdout.write(helpFor('backfill')!);
    return 0;
  }
  const connection = connectionFromOptions(values);
  const config = backfillConfigFromOptions(values);
  const { catalog, lock } = await openKafkaCatalog(values);
  const routes = await routesForTopics(values, [config.topic]);
  const status = new StatusLine();
  const controller = new AbortController();
  const release = stopOnSignals(controller, (signal) =>
    status.log(
      `floe backfill: ${signal}: stopping after the batch in flight (rerun to continue)`,
      process.stderr,
    ),
  );
  const totals = { rows: 0, deadLetters: 0, replays: 0, snapshots: 0 };
  try {
    const kafka = await createCheckedKafka({
      ...connection,
      log: (line) => status.log(line, process.stderr),
    });
    const ranges = await planBackfillFromBrokers(kafka, config.topic, config.from, config.to);
    const tables = [...new Set(routes.map((r) => formatIdentifier(r.table)))].join(', ');
    status.log(
      `floe backfill: ${config.topic} into ${tables}, offsets ${ranges.map((r) => `${r.partition}:[${r.start},${r.end})`).join(' ')}`,
      process.stderr,
    );
    const summary = await runBackfill({
      kafka,
      bootstrapServers: connection.brokers.join(','),
      ranges,
      batchSize: config.batchSize,
      signal: controller.signal,
      deliver: ingestFormed({ catalog, routes, lock }, status),
      onDelivered: (formed, report) => {
        for (const t of report.tables) {
          totals.rows += t.rowsWritten;
          totals.deadLetters += t.deadLettered;
          totals.replays += t.skippedAsReplayed;
          if (t.status === 'committed') totals.snapshots += 1;
        }
        if (!status.live)
          status.log(`${describeSpans(formed)}: ${formed.records} records → ${describeReport(report)}`);
      },
      onRetry: (formed, error, attempt, delay) =>
        status.log(
          `floe backfill: ${describeSpans(formed)} failed (attempt ${attempt}; retrying in ${delay} ms): ${error instanceof LakeError ? error.message : describeError(error)}`,
          process.stderr,
        ),
      onProgress: (p) => status.show(describeProgress(p)),
      onWarning: (message) => status.log(`warning: ${message}`, process.stderr),
    });
    status.clear();
    process.stdout.write(
      `floe backfill: ${summary.completed ? 'done' : 'stopped before the end (rerun to continue)'}: ` +
        `${summary.records} records read, ${totals.rows} rows written, ${totals.deadLetters} dead letters, ` +
        `${totals.replays} replays skipped, ${totals.snapshots} snapshots\n`,
    );
    return 0;
  } finally {
    status.clear();
    release();
  }
}
