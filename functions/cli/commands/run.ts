/**
 * `floe run`: the Kafka event source mapping, locally. A consumer group reads the topics, forms ESM
 * events and feeds them to the ingest code the Lambda runs; group offsets are committed only after the
 * table commit (functions/core/kafka/event-source.ts). The Kafka flags are in ../kafka-options.ts,
 * shared with `backfill`, `redrive-failed`, `replay` and the live commands.
 */
import { formatIdentifier } from '../../core/catalog/catalog.js';
import { describeError, LakeError } from '../../core/errors.js';
import {
  ESM_DEFAULT_BATCH_SIZE,
  ESM_DEFAULT_BATCHING_WINDOW_MS,
  ESM_MAX_BATCH_SIZE,
} from '../../core/kafka/esm-batch.js';
import {
  type EventSourceStatus,
  runEventSource,
  STARTING_POSITIONS,
  type StartingPosition,
} from '../../core/kafka/event-source.js';
import { createCheckedKafka, type KafkaConnectionOptions } from '../../core/kafka/kafka-client.js';
import { lagOf, type PartitionProgress } from '../../core/kafka/partition-progress.js';
import {
  connectionFromOptions,
  integerFlag,
  type KafkaCommandOptions,
  parseIsoTime,
  parseKafkaArgs,
  routesForTopics,
  splitList,
} from '../kafka-options.js';
import {
  describeReport,
  describeSpans,
  ingestFormed,
  openKafkaCatalog,
  StatusLine,
  stopOnSignals,
} from '../kafka-session.js';
import { helpFor } from '../help.js';
import { UsageError } from '../options.js';
import { runBackfillCommand } from './backfill.js';
import { runRedriveFailed } from './redrive-failed.js';

export interface RunConfig {
  connection: KafkaConnectionOptions;
  topics: string[];
  group?: string;
  batchSize: number;
  batchingWindowMs: number;
  startingPosition: StartingPosition;
  startingTimestampMs?: number;
  exitWhenIdleMs?: number;
  sessionTimeoutMs?: number;
}

/** Everything of `floe run` but the routes. @throws UsageError */
export function runConfigFromOptions(
  values: KafkaCommandOptions,
  env: NodeJS.ProcessEnv = process.env,
): RunConfig {
  const connection = connectionFromOptions(values, env);
  const topics = splitList(values.topics);
  if (topics.length === 0) throw new UsageError('--topics is required (one or more, comma-separated)');
  const position = (values['starting-position'] ?? 'latest') as StartingPosition;
  if (!STARTING_POSITIONS.includes(position)) {
    throw new UsageError(
      `--starting-position must be one of ${STARTING_POSITIONS.join(', ')}, got '${position}'`,
    );
  }
  let startingTimestampMs: number | undefined;
  if (position === 'at-timestamp') {
    const text = values['starting-timestamp'];
    if (text === undefined)
      throw new UsageError('--starting-position at-timestamp needs --starting-timestamp ISO');
    startingTimestampMs = parseIsoTime(text, '--starting-timestamp');
  } else if (values['starting-timestamp'] !== undefined) {
    throw new UsageError('--starting-timestamp goes with --starting-position at-timestamp');
  }
  return {
    connection,
    topics,
    group: values.group,
    batchSize: integerFlag(values, 'batch-size', ESM_DEFAULT_BATCH_SIZE, 1, ESM_MAX_BATCH_SIZE),
    // The ESM's MaximumBatchingWindowInSeconds is 0–300 s.
    batchingWindowMs: integerFlag(values, 'batching-window-ms', ESM_DEFAULT_BATCHING_WINDOW_MS, 0, 300_000),
    startingPosition: position,
    startingTimestampMs,
    exitWhenIdleMs: integerFlag(values, 'exit-when-idle', undefined, 0, 2 ** 31 - 1),
    sessionTimeoutMs: integerFlag(values, 'session-timeout-ms', undefined, 1_000, 3_600_000),
  };
}

function describeLag(partitions: PartitionProgress[], position: string): string {
  return partitions.map((p) => `${p.topic}-${p.partition}:${lagOf(p, position) ?? '?'}`).join(' ');
}

export async function runRun(args: string[]): Promise<number> {
  const values = parseKafkaArgs(args, 'run');
  if (values.help) {
    process.stdout.write(helpFor('run')!);
    return 0;
  }
  const config = runConfigFromOptions(values);
  const { catalog, lock } = await openKafkaCatalog(values);
  const routes = await routesForTopics(values, config.topics);
  const tables = [...new Set(routes.map((r) => formatIdentifier(r.table)))];
  const groupId = config.group ?? `floe-${tables.join('+')}`;
  const status = new StatusLine();
  const controller = new AbortController();
  const release = stopOnSignals(controller, (signal) =>
    status.log(`floe run: ${signal}: stopping after the batch in flight`, process.stderr),
  );
  let lastSnapshot = '';
  try {
    const kafka = await createCheckedKafka({
      ...config.connection,
      log: (line) => status.log(line, process.stderr),
    });
    status.log(
      `floe run: group ${groupId} reading ${config.topics.join(', ')} from ${config.connection.brokers.join(',')} into ${tables.join(', ')}`,
      process.stderr,
    );
    const summary = await runEventSource({
      kafka,
      bootstrapServers: config.connection.brokers.join(','),
      topics: config.topics,
      groupId,
      batchSize: config.batchSize,
      batchingWindowMs: config.batchingWindowMs,
      startingPosition: config.startingPosition,
      startingTimestampMs: config.startingTimestampMs,
      exitWhenIdleMs: config.exitWhenIdleMs,
      sessionTimeoutMs: config.sessionTimeoutMs,
      signal: controller.signal,
      deliver: ingestFormed({ catalog, routes, lock }, status),
      onDelivered: (formed, report) => {
        const committed = report.tables.filter((t) => t.snapshotId !== undefined);
        if (committed.length > 0)
          lastSnapshot = `${committed.at(-1)!.snapshotId} (${committed.at(-1)!.table})`;
        if (!status.live)
          status.log(`${describeSpans(formed)}: ${formed.records} records → ${describeReport(report)}`);
      },
      onRetry: (formed, error, attempt, delay) =>
        status.log(
          `floe run: ${describeSpans(formed)} failed (attempt ${attempt}; retrying in ${delay} ms): ${error instanceof LakeError ? error.message : describeError(error)}`,
          process.stderr,
        ),
      onStatus: (s: EventSourceStatus) =>
        status.show(
          `floe run: ${s.records} records (${Math.round(s.recordsPerSecond)}/s) · lag ${describeLag(s.partitions, config.startingPosition)} · last snapshot ${lastSnapshot || '-'}`,
        ),
      onWarning: (message) => status.log(`warning: ${message}`, process.stderr),
      onJoin: (partitions) =>
        status.log(
          `floe run: joined group ${groupId}, reading ${partitions.map((p) => `${p.topic}-${p.partition}`).join(', ') || 'no partitions (other members hold them)'}`,
          process.stderr,
        ),
    });
    status.clear();
    process.stderr.write(
      `floe run: stopped (${summary.stoppedBy === 'idle' ? 'idle: everything available is committed' : 'signal'}); ${summary.records} records in ${summary.batches} batches${lastSnapshot ? `, last snapshot ${lastSnapshot}` : ''}\n`,
    );
    return 0;
  } finally {
    status.clear();
    release();
  }
}

/** The commands that talk to Kafka, dispatched by main.ts before its own flag parsing. */
export const KAFKA_COMMANDS: Record<string, (args: string[]) => Promise<number>> = {
  run: runRun,
  backfill: (args) => runBackfillCommand(args),
  'redrive-failed': (args) => runRedriveFailed(args),
};
