/**
 * `floe replay`: a table back into a Kafka topic, per source partition in offset order, exactly once
 * across kills (functions/core/replay). The value is the row without `_kafka` as the CLI's exact JSON
 * (format-value.ts: longs and decimals exact, bytes base64, times ISO-8601).
 */
import { helpFor } from '../help.js';
import { parseArgs } from 'node:util';
import { parseIdentifier } from '../../core/catalog/catalog.js';
import { ValidationError } from '../../core/errors.js';
import { createCheckedKafka } from '../../core/kafka/kafka-client.js';
import {
  type Partitioning,
  type ReplayBounds,
  parsePartitionOffsets,
  valueSchema,
} from '../../core/records/replay-records.js';
import { KAFKA_FIELD, KAFKA_VALUE_FIELD } from '../../core/records/kafka-lineage.js';
import { checkReplayBounds } from '../../core/replay/check-bounds.js';
import { type ReplaySummary, runReplay } from '../../core/replay/run-replay.js';
import { parseExpression } from '../../core/scan/parse-expression.js';
import { currentSchema } from '../../core/spec/metadata.js';
import type { Row, StructType } from '../../core/spec/types.js';
import { readCommittedOffsets } from '../../core/table/source-offsets.js';
import { openCatalog } from '../catalog-options.js';
import { compileDisplayJson } from '../format-value.js';
import { parseInteger } from '../flag-values.js';
import { OPTIONS, type ParsedOptions, UsageError } from '../options.js';
import {
  connectionFromOptions,
  KAFKA_CONNECTION_FLAGS,
  type KafkaCommandOptions,
  parseIsoTime,
} from '../kafka-options.js';
import { StatusLine, stopOnSignals } from '../kafka-session.js';

const REPLAY_FLAGS = {
  'to-topic': { type: 'string' },
  'from-offsets': { type: 'string' },
  'to-offsets': { type: 'string' },
  'from-time': { type: 'string' },
  'to-time': { type: 'string' },
  partitioning: { type: 'string' },
  follow: { type: 'boolean' },
  idempotent: { type: 'boolean' },
  'batch-size': { type: 'string' },
  ...KAFKA_CONNECTION_FLAGS,
} as const;

function replayOptions() {
  // Built on call, as run.ts's: the CLI's modules import each other, so OPTIONS may not be set at load time.
  return { ...OPTIONS, ...REPLAY_FLAGS };
}

type ReplayValues = ReturnType<
  typeof parseArgs<{ options: ReturnType<typeof replayOptions>; allowPositionals: true }>
>['values'];

function parseReplayArgs(args: string[]): ReplayValues {
  try {
    const { values, positionals } = parseArgs({
      args,
      options: replayOptions(),
      allowPositionals: true,
      strict: true,
    });
    if (positionals.length > 0) throw new UsageError(`replay takes no arguments, got '${positionals[0]}'`);
    return values;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError((error as Error).message);
  }
}

function offsetsFlag(text: string | undefined, flag: string): Map<number, bigint> | undefined {
  if (text === undefined) return undefined;
  try {
    return parsePartitionOffsets(text, flag);
  } catch (error) {
    if (error instanceof ValidationError) throw new UsageError(error.message);
    throw error;
  }
}

/** @throws UsageError for conflicting or malformed bounds */
export function boundsFromOptions(values: ReplayValues): ReplayBounds {
  if (values['from-offsets'] !== undefined && values['from-time'] !== undefined)
    throw new UsageError('give --from-offsets or --from-time, not both');
  if (values['to-offsets'] !== undefined && values['to-time'] !== undefined)
    throw new UsageError('give --to-offsets or --to-time, not both');
  const bounds: ReplayBounds = {
    fromOffsets: offsetsFlag(values['from-offsets'], '--from-offsets'),
    toOffsets: offsetsFlag(values['to-offsets'], '--to-offsets'),
    fromTimeMs:
      values['from-time'] === undefined ? undefined : parseIsoTime(values['from-time'], '--from-time'),
    toTimeMs: values['to-time'] === undefined ? undefined : parseIsoTime(values['to-time'], '--to-time'),
  };
  if (bounds.fromTimeMs !== undefined && bounds.toTimeMs !== undefined && bounds.toTimeMs < bounds.fromTimeMs)
    throw new UsageError('--to-time is before --from-time');
  return bounds;
}

/**
 * A row's record value: the original bytes when the table kept them (`_kafka.value`, a route's
 * `kafkaValue`), else the row without `_kafka` as the CLI's exact JSON (format-value.ts), so longs
 * past 2^53 and decimals keep every digit.
 */
export function formatReplayValue(schema: StructType): (row: Row) => Uint8Array {
  const write = compileDisplayJson(valueSchema(schema));
  return (row) => {
    const kept = (row[KAFKA_FIELD] as Row | null | undefined)?.[KAFKA_VALUE_FIELD];
    return kept instanceof Uint8Array ? kept : Buffer.from(write(row));
  };
}

function describeSummary(s: ReplaySummary, topic: string): string {
  const targets =
    [...s.perTarget]
      .sort(([a], [b]) => a - b)
      .map(([p, n]) => `${p}:${n}`)
      .join(' ') || '-';
  const sources =
    s.sources.map((r) => `${r.topic}/${r.partition}@${r.first}..${r.last} (${r.records})`).join(', ') || '-';
  return (
    `floe replay: ${s.stoppedBy === 'signal' ? 'stopped by signal (rerun to continue)' : 'done'}: ` +
    `${s.rows} rows${s.followed > 0 ? ` + ${s.followed} live records` : ''} produced to ${topic}, ` +
    `${s.skipped} skipped as already replayed\n` +
    `  per target partition: ${targets}\n  source offsets covered: ${sources}\n`
  );
}

export async function runReplayCommand(args: string[]): Promise<number> {
  const values = parseReplayArgs(args);
  if (values.help) {
    process.stdout.write(helpFor('replay')!);
    return 0;
  }
  const connection = connectionFromOptions(values as KafkaCommandOptions);
  if (!values.table) throw new UsageError('--table is required');
  const toTopic = values['to-topic'];
  if (!toTopic) throw new UsageError('--to-topic is required');
  const partitioning = (values.partitioning ?? 'same') as Partitioning;
  if (partitioning !== 'same' && partitioning !== 'key')
    throw new UsageError(`--partitioning must be same or key, got '${values.partitioning}'`);
  const bounds = boundsFromOptions(values);
  if (values.follow && (values.where !== undefined || bounds.toOffsets || bounds.toTimeMs !== undefined)) {
    // Live records are passed on as they are, never decoded, so a row filter or an end cannot apply.
    throw new UsageError('--follow continues to the live end: leave out --where, --to-offsets and --to-time');
  }
  const filter = values.where ? parseExpression(values.where) : undefined;
  const batchSize =
    values['batch-size'] === undefined ? 500 : parseInteger(values['batch-size'], '--batch-size', 1, 10_000);

  const { catalog } = await openCatalog(values as ParsedOptions);
  const table = await catalog.loadTable(parseIdentifier(values.table));
  try {
    checkReplayBounds(bounds, readCommittedOffsets(table.metadata));
  } catch (error) {
    if (error instanceof ValidationError) throw new UsageError(`replay: ${error.message}`);
    throw error;
  }
  const status = new StatusLine();
  const controller = new AbortController();
  const release = stopOnSignals(controller, (signal) =>
    status.log(
      `floe replay: ${signal}: stopping after the batch in flight (rerun to continue)`,
      process.stderr,
    ),
  );
  try {
    const kafka = await createCheckedKafka({
      ...connection,
      log: (line) => status.log(line, process.stderr),
    });
    const summary = await runReplay({
      kafka,
      table,
      toTopic,
      partitioning,
      filter,
      bounds,
      follow: values.follow,
      idempotent: values.idempotent,
      batchSize,
      signal: controller.signal,
      formatValue: formatReplayValue(currentSchema(table.metadata)),
      onStart: (info) =>
        status.log(
          `floe replay: ${values.table} → ${toTopic} (${info.partitions} partitions, partitioning ${partitioning}): ${info.rowsInFiles} rows in the selected files`,
          process.stderr,
        ),
      onSent: (sent, progress) => {
        const line = `${sent.live ? 'live ' : ''}${sent.source.topic}/${sent.source.partition}@${sent.source.first}..${sent.source.last} → ${toTopic}/${sent.targets.join(',')}: ${sent.records} records`;
        if (!status.live) status.log(`floe replay: ${line}`, process.stderr);
        const percent =
          progress.toSend === 0 ? 100 : Math.min(100, Math.floor((progress.sent * 100) / progress.toSend));
        status.show(`floe replay: ≤${percent}% · ${progress.sent}/${progress.toSend} rows · last ${line}`);
      },
    });
    status.clear();
    process.stdout.write(describeSummary(summary, toTopic));
    return 0;
  } finally {
    status.clear();
    release();
  }
}
