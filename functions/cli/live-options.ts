/**
 * The flags of the live commands (`scan --live`, `serve`): the CLI's own flags, the Kafka connection
 * flags `floe run` takes (its connectionFromOptions reads them), and the server's. Also the route a
 * live read maps the tail with: `--routes FILE` (the table's entry), or the route flags, with the
 * topics defaulting to those the table's committed offsets name.
 */
import { parseArgs } from 'node:util';
import type { LoadedTable } from '../core/catalog/catalog.js';
import { formatIdentifier } from '../core/catalog/catalog.js';
import { parseRoutes, type TableRoute } from '../core/routing/routes.js';
import { createCheckedKafka } from '../core/kafka/kafka-client.js';
import { readCommittedOffsets } from '../core/table/source-offsets.js';
import { readJsonFile, routeFromOptions } from './commands/ingest.js';
import { connectionFromOptions, KAFKA_CONNECTION_FLAGS, type KafkaCommandOptions } from './kafka-options.js';
import { parseDuration } from './flag-values.js';
import { OPTIONS, type ParsedOptions, UsageError } from './options.js';
import { SERVE_SECURITY_FLAGS } from './serve-security.js';

const LIVE_FLAGS = {
  live: { type: 'boolean' },
  ...KAFKA_CONNECTION_FLAGS,
  port: { type: 'string' },
  host: { type: 'string' },
  'cache-dir': { type: 'string' },
  'cache-ttl': { type: 'string' },
  'kafka-timeout': { type: 'string' },
  ...SERVE_SECURITY_FLAGS,
} as const;

function liveOptions() {
  // Built on call: main.ts imports the commands, so OPTIONS may not be initialised at load time.
  return { ...OPTIONS, ...LIVE_FLAGS };
}

export type LiveOptions = ReturnType<
  typeof parseArgs<{ options: ReturnType<typeof liveOptions>; allowPositionals: true }>
>['values'];

/** @throws UsageError for unknown flags or stray arguments */
export function parseLiveArgs(args: string[], command: string): LiveOptions {
  let parsed: { values: LiveOptions; positionals: string[] };
  try {
    parsed = parseArgs({ args, options: liveOptions(), allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (parsed.positionals.length > 0) {
    throw new UsageError(`${command} takes no arguments, got '${parsed.positionals[0]}'`);
  }
  return parsed.values;
}

/** `--kafka-timeout`: how long a live read may wait on Kafka (undefined: the reader's default). @throws UsageError */
export function kafkaTimeoutOf(values: LiveOptions): number | undefined {
  const text = values['kafka-timeout'];
  if (text === undefined) return undefined;
  const ms = parseDuration(text, '--kafka-timeout');
  if (ms <= 0) throw new UsageError(`--kafka-timeout must be longer than 0, got '${text}'`);
  return ms;
}

/** The Kafka client the connection flags describe, its brokers checked. @throws UsageError, ValidationError, KafkaUnreachableError, KafkaTlsError */
export async function kafkaFromOptions(values: LiveOptions) {
  return createCheckedKafka(connectionFromOptions(values as KafkaCommandOptions));
}

/**
 * The route of `table` for a live read.
 * @throws UsageError when no route names the table or the table has no topics to read
 */
export async function liveRouteFor(values: LiveOptions, table: LoadedTable): Promise<TableRoute> {
  const name = formatIdentifier(table.identifier);
  if (values.routes !== undefined) {
    const routes = parseRoutes(await readJsonFile(values.routes, 'routes file'));
    const route = routes.find((r) => formatIdentifier(r.table) === name);
    if (!route) throw new UsageError(`the routes file has no route for table ${name}`);
    return route;
  }
  const flags = { ...values, table: name } as ParsedOptions;
  const route = await routeFromOptions(flags, []);
  if (route.topics.length === 0) route.topics = [...readCommittedOffsets(table.metadata).keys()].sort();
  if (route.topics.length === 0) {
    throw new UsageError(`table ${name} has committed no Kafka offsets yet: name its topics with --topics`);
  }
  return route;
}
