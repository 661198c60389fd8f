/**
 * The flags every command that talks to Kafka shares (`floe run`, `backfill`, `redrive-failed`,
 * `replay`, the live commands): connection (brokers, SASL, TLS, MSK IAM), the consumer's flags, and
 * the routes for the topics consumed.
 */
import { parseArgs } from 'node:util';
import {
  type KafkaConnectionOptions,
  parseBrokers,
  SASL_MECHANISMS,
  type SaslMechanism,
} from '../core/kafka/kafka-client.js';
import { parseRoutes, routesForTopic, type TableRoute } from '../core/routing/routes.js';
import { readJsonFile, routeFromOptions } from './commands/ingest.js';
import { parseInteger } from './flag-values.js';
import { OPTIONS, type ParsedOptions, UsageError } from './options.js';

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

/** @throws UsageError for the consumer group's flags on a command that reads without a group */
export function refuseGroupFlags(values: KafkaCommandOptions, command: string): void {
  for (const flag of ['group', 'session-timeout-ms'] as const) {
    if (values[flag] !== undefined) {
      throw new UsageError(
        `--${flag} is floe run's (its consumer group's): ${command} reads without a consumer group`,
      );
    }
  }
}

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

/**
 * The integer value of flag `name` (see parseInteger), or `fallback` when it is not given.
 * @throws UsageError unless the text is an integer in [min, max]
 */
export function integerFlag<Fallback extends number | undefined>(
  values: KafkaCommandOptions,
  name: keyof typeof KAFKA_OPTIONS,
  fallback: Fallback,
  min: number,
  max: number,
): number | Fallback {
  const text = values[name];
  if (text === undefined) return fallback;
  return parseInteger(String(text), `--${name}`, min, max);
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
  'delete-mode',
  'format-version',
  'schema-evolution',
  'kafka-value',
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
