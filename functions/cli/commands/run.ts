/**
 * `floe run`: the Kafka event source mapping, locally. A consumer group reads the topics, forms ESM
 * events and feeds them to the ingest code the Lambda runs; group offsets are committed only after the
 * table commit (functions/core/kafka/event-source.ts). The Kafka flags here are shared with `backfill`.
 */
import { parseArgs } from 'node:util';
import { formatIdentifier } from '../../core/catalog/catalog.js';
import { describeError, LakeError } from '../../core/errors.js';
import {
  ingestEvent,
  type IngestEventOptions,
  type IngestEventReport,
} from '../../core/ingest/ingest-event.js';
import { parseRoutes, routesForTopic, type TableRoute } from '../../core/routing/routes.js';
import {
  ESM_DEFAULT_BATCH_SIZE,
  ESM_DEFAULT_BATCHING_WINDOW_MS,
  type FormedEvent,
  spanStartsOf,
} from '../../core/kafka/esm-batch.js';
import {
  runEventSource,
  STARTING_POSITIONS,
  type EventSourceStatus,
  type StartingPosition,
} from '../../core/kafka/event-source.js';
import {
  createKafka,
  type KafkaConnectionOptions,
  parseBrokers,
  SASL_MECHANISMS,
  type SaslMechanism,
} from '../../core/kafka/kafka-client.js';
import { createProcessLock } from '../../core/kafka/process-lock.js';
import { openCatalog } from '../catalog-options.js';
import { lagOf, type PartitionProgress } from '../../core/kafka/partition-progress.js';
import { OPTIONS, type ParsedOptions, UsageError } from '../options.js';
import { runBackfillCommand } from './backfill.js';
import { readJsonFile, routeFromOptions } from './ingest.js';
import { runRedriveFailed } from './redrive-failed.js';

export const RUN_USAGE = `usage:
  floe run --bootstrap-servers HOST:PORT[,...] --topics T1[,T2] [--group ID]
           (--warehouse DIR --table NS.NAME [route flags as for ingest] | --warehouse DIR --routes FILE)
           [--batch-size N] [--batching-window-ms MS]
           [--starting-position latest|trim-horizon|at-timestamp [--starting-timestamp ISO]]
           [--exit-when-idle MS] [Kafka connection flags]
  floe backfill --bootstrap-servers HOST:PORT[,...] --topic T --warehouse DIR (--table NS.NAME [route flags] | --routes FILE)
           [--from earliest|ISO-TIME] [--to latest|ISO-TIME] [--batch-size N] [Kafka connection flags]
  floe redrive-failed (--from s3://BUCKET/PREFIX | --from-file PATH | --from-topic T --bootstrap-servers ...)
           --warehouse DIR (--table NS.NAME [route flags] | --routes FILE)
      re-ingest the batches the ESM gave up on (S3 on-failure records, or a Kafka on-failure topic)
  --session-timeout-ms MS: how long the group waits for a member that died before handing its
  partitions on (default 30000; a kill -9 and restart waits this long)
Kafka connection flags:
  --client-id ID  --sasl-mechanism plain|scram-sha-256|scram-sha-512 --sasl-username U
  (password from --sasl-password or, better, the FLOE_KAFKA_SASL_PASSWORD environment variable)
  --sasl-mechanism aws-msk-iam --tls [--aws-region R]: Amazon MSK IAM auth (port 9098) with the default
  AWS credential chain; the region defaults to AWS_REGION
  --tls  [--tls-ca FILE] [--tls-cert FILE --tls-key FILE] [--tls-insecure]
`;

/** How every command that talks to Kafka reaches the brokers (connectionFromOptions reads them). */
export const KAFKA_CONNECTION_FLAGS = {
  'bootstrap-servers': { type: 'string' },
  'client-id': { type: 'string' },
  'sasl-mechanism': { type: 'string' },
  'sasl-username': { type: 'string' },
  'sasl-password': { type: 'string' },
  'aws-region': { type: 'string' },
  tls: { type: 'boolean' },
  'tls-ca': { type: 'string' },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  'tls-insecure': { type: 'boolean' },
} as const;

/** Flags of the Kafka commands, on top of the CLI's route and warehouse flags. */
const KAFKA_OPTIONS = {
  topic: { type: 'string' },
  group: { type: 'string' },
  'batch-size': { type: 'string' },
  'batching-window-ms': { type: 'string' },
  'starting-position': { type: 'string' },
  'starting-timestamp': { type: 'string' },
  'exit-when-idle': { type: 'string' },
  'session-timeout-ms': { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  'from-file': { type: 'string' },
  'from-topic': { type: 'string' },
  ...KAFKA_CONNECTION_FLAGS,
} as const;

function kafkaOptions() {
  // Built on call: main.ts imports this module, so its OPTIONS are not initialised at load time.
  return { ...OPTIONS, ...KAFKA_OPTIONS };
}

type AllOptions = ReturnType<typeof kafkaOptions>;
export type KafkaCommandOptions = ReturnType<
  typeof parseArgs<{ options: AllOptions; allowPositionals: true }>
>['values'];

/** @throws UsageError for unknown flags or stray arguments */
export function parseKafkaArgs(args: string[], command: string): KafkaCommandOptions {
  try {
    const { values, positionals } = parseArgs({
      args,
      options: kafkaOptions(),
      allowPositionals: true,
      strict: true,
    });
    if (positionals.length > 0)
      throw new UsageError(`${command} takes no arguments, got '${positionals[0]}'`);
    return values;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError((error as Error).message);
  }
}

/** @throws UsageError unless the text is an integer in [min, max] */
export function integerFlag(
  values: KafkaCommandOptions,
  name: keyof typeof KAFKA_OPTIONS,
  fallback: number | undefined,
  min: number,
  max: number,
): number | undefined {
  const text = values[name];
  if (text === undefined) return fallback;
  const n = typeof text === 'string' && /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got '${text}'`);
  }
  return n;
}

/** @throws UsageError for a time that is not ISO-8601 */
export function parseIsoTime(text: string, flag: string): number {
  const ms = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(ms))
    throw new UsageError(`${flag} must be an ISO-8601 time (2026-11-30T12:00:00Z), got '${text}'`);
  return ms;
}

/** Brokers, client id, SASL and TLS from the flags (and FLOE_KAFKA_SASL_PASSWORD). @throws UsageError */
export function connectionFromOptions(
  values: KafkaCommandOptions,
  env: NodeJS.ProcessEnv = process.env,
): KafkaConnectionOptions {
  const servers = values['bootstrap-servers'];
  if (!servers) throw new UsageError('--bootstrap-servers is required');
  let brokers: string[];
  try {
    brokers = parseBrokers(servers);
  } catch (error) {
    throw new UsageError(`--bootstrap-servers: ${(error as Error).message}`);
  }
  const connection: KafkaConnectionOptions = { brokers, clientId: values['client-id'] ?? 'floe' };
  const mechanism = values['sasl-mechanism'];
  if (mechanism === 'aws-msk-iam') {
    if (values['sasl-username'] !== undefined || values['sasl-password'] !== undefined) {
      throw new UsageError(
        '--sasl-mechanism aws-msk-iam signs with AWS credentials: leave out --sasl-username/--sasl-password',
      );
    }
    // MSK's IAM listeners (port 9098) speak TLS only; turning it on silently would hide a wrong port.
    if (!values.tls) {
      throw new UsageError(
        '--sasl-mechanism aws-msk-iam needs --tls (MSK IAM listeners, port 9098, are TLS only)',
      );
    }
    const region = values['aws-region'] ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
    if (!region) {
      throw new UsageError(
        "--sasl-mechanism aws-msk-iam needs the cluster's region: --aws-region or AWS_REGION",
      );
    }
    connection.sasl = { mechanism: 'aws-msk-iam', region };
  } else if (mechanism !== undefined) {
    if (!SASL_MECHANISMS.includes(mechanism as SaslMechanism)) {
      throw new UsageError(
        `--sasl-mechanism must be one of ${SASL_MECHANISMS.join(', ')}, got '${mechanism}'`,
      );
    }
    const username = values['sasl-username'];
    const password = values['sasl-password'] ?? env.FLOE_KAFKA_SASL_PASSWORD;
    if (!username || password === undefined) {
      throw new UsageError(
        `--sasl-mechanism ${mechanism} needs --sasl-username and a password (FLOE_KAFKA_SASL_PASSWORD or --sasl-password)`,
      );
    }
    connection.sasl = { mechanism: mechanism as Exclude<SaslMechanism, 'aws-msk-iam'>, username, password };
  } else if (values['sasl-username'] !== undefined || values['sasl-password'] !== undefined) {
    throw new UsageError('--sasl-username/--sasl-password need --sasl-mechanism');
  }
  if (values['aws-region'] !== undefined && mechanism !== 'aws-msk-iam') {
    throw new UsageError('--aws-region goes with --sasl-mechanism aws-msk-iam');
  }
  const tlsFlags = values['tls-ca'] ?? values['tls-cert'] ?? values['tls-key'] ?? values['tls-insecure'];
  if (values.tls || tlsFlags !== undefined) {
    if ((values['tls-cert'] === undefined) !== (values['tls-key'] === undefined)) {
      throw new UsageError('mutual TLS needs both --tls-cert and --tls-key');
    }
    connection.tls = {
      caFile: values['tls-ca'],
      certFile: values['tls-cert'],
      keyFile: values['tls-key'],
      rejectUnauthorized: values['tls-insecure'] ? false : undefined,
    };
  }
  return connection;
}

/** The route flags `floe ingest` takes (a routes file describes the tables itself). */
const ROUTE_FLAGS = [
  'table',
  'schema',
  'partition-by',
  'sort-by',
  'mode',
  'identifier',
  'schema-evolution',
] as const;

/**
 * The routes for the consumed topics: the one `--table` and route flags describe (built by `floe
 * ingest`'s own code), or every route of `--routes`. Every topic must have a route before anything
 * is read, so a typo fails at start, not at the first batch.
 * @throws UsageError for conflicting flags or a topic without a route
 */
export async function routesForTopics(values: KafkaCommandOptions, topics: string[]): Promise<TableRoute[]> {
  let routes: TableRoute[];
  if (values.routes === undefined) {
    routes = [await routeFromOptions({ ...values, topics: topics.join(',') } as ParsedOptions, [])];
  } else {
    const flag = ROUTE_FLAGS.find((f) => values[f] !== undefined);
    if (flag) throw new UsageError(`--routes describes the tables itself; leave out --${flag}`);
    routes = parseRoutes(await readJsonFile(values.routes, 'routes file'));
  }
  const missing = topics.filter((t) => routesForTopic(routes, t).length === 0);
  if (missing.length > 0) {
    throw new UsageError(`no table route for topic${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`);
  }
  return routes;
}

export function splitList(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
}

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
    batchSize: integerFlag(values, 'batch-size', ESM_DEFAULT_BATCH_SIZE, 1, 10_000)!,
    // The ESM's MaximumBatchingWindowInSeconds is 0–300 s.
    batchingWindowMs: integerFlag(values, 'batching-window-ms', ESM_DEFAULT_BATCHING_WINDOW_MS, 0, 300_000)!,
    startingPosition: position,
    startingTimestampMs,
    exitWhenIdleMs: integerFlag(values, 'exit-when-idle', undefined, 0, 2 ** 31 - 1),
    sessionTimeoutMs: integerFlag(values, 'session-timeout-ms', undefined, 1_000, 3_600_000),
  };
}

/** Writes status: one line rewritten in place on a terminal, nothing between batches otherwise. */
export class StatusLine {
  private shown = false;
  constructor(private readonly stream: NodeJS.WriteStream = process.stderr) {}
  get live(): boolean {
    return this.stream.isTTY === true;
  }
  show(text: string): void {
    if (!this.live) return;
    const width = this.stream.columns ?? 120;
    this.stream.write(`\r\x1b[K${text.length >= width ? `${text.slice(0, width - 2)}…` : text}`);
    this.shown = true;
  }
  /** A log line; on a terminal it goes above the status line. */
  log(text: string, stream: NodeJS.WriteStream = process.stdout): void {
    if (this.shown) this.stream.write('\r\x1b[K');
    stream.write(`${text}\n`);
  }
  clear(): void {
    if (this.shown) this.stream.write('\r\x1b[K');
    this.shown = false;
  }
}

/**
 * How `floe run` and `floe backfill` hand a formed event to the Lambda's ingest code: with the
 * consumer's fetch starts (they close offset gaps, span-starts.ts) and warnings on the status line.
 */
export function ingestFormed(
  target: Pick<IngestEventOptions, 'catalog' | 'routes' | 'lock'>,
  status: StatusLine,
): (formed: FormedEvent) => Promise<IngestEventReport> {
  return (formed) =>
    ingestEvent(
      {
        ...target,
        spanStarts: spanStartsOf(formed),
        onWarning: (table, message) => status.log(`warning: ${table}: ${message}`, process.stderr),
      },
      formed.event,
    );
}

export function describeSpans(formed: FormedEvent): string {
  return formed.spans
    .map((s) => `${s.topic}-${s.partition}@${s.first}${s.last === s.first ? '' : `..${s.last}`}`)
    .join(', ');
}

/** One line per table of an ingested event (the log when no terminal shows the live status). */
export function describeReport(report: IngestEventReport): string {
  return report.tables
    .map((t) => {
      const outcome =
        t.status === 'committed'
          ? `snapshot ${t.snapshotId}`
          : t.status === 'already-committed'
            ? 'already committed'
            : 'nothing new';
      return `${t.table}: ${t.rowsWritten} rows, ${t.skippedAsReplayed} replayed, ${t.deadLettered} dead-lettered; ${outcome}`;
    })
    .join('; ');
}

function describeLag(partitions: PartitionProgress[], position: string): string {
  return partitions.map((p) => `${p.topic}-${p.partition}:${lagOf(p, position) ?? '?'}`).join(' ');
}

/**
 * Stops cleanly on the first SIGINT/SIGTERM (the signal aborts); a second one exits at once — still
 * safe: the group offsets never run ahead of the tables.
 */
export function stopOnSignals(controller: AbortController, onStop: (signal: string) => void): () => void {
  const handler = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) {
      process.stderr.write(
        `\nfloe: ${signal} again: exiting now (the table skips whatever is redelivered)\n`,
      );
      process.exit(130);
    }
    onStop(signal);
    controller.abort();
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}

/**
 * The catalog the flags select (as for every other command) and the lock the commits take: the
 * DynamoDB lock when one is configured, else an in-process one (partitions consumed concurrently
 * commit to one table one at a time instead of conflicting).
 */
export async function openKafkaCatalog(values: ParsedOptions) {
  const opened = await openCatalog(values, { withLock: true });
  return { catalog: opened.catalog, lock: opened.lock ?? createProcessLock() };
}

export async function runRun(args: string[]): Promise<number> {
  const values = parseKafkaArgs(args, 'run');
  if (values.help) {
    process.stdout.write(RUN_USAGE);
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
    const kafka = await createKafka({
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
