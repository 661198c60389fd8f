/**
 * `floe kafka-serve`: a Kafka endpoint in front of a real cluster that serves the offsets the tables
 * hold from the tables, with their original offsets, keys, headers and timestamps
 * (functions/core/kafka/serve/kafka-proxy.ts). Values are the original bytes where the table kept them
 * (`_kafka.value`), else the rows re-encoded: as the registry frame they were where the row kept its
 * schema id and `--routes` names the registry (value-encoding.ts), else as exact JSON; dead letters (a
 * route's `dlqTable`, else `<table>__dlq`) are served at their offsets too.
 *
 * TLS and SASL on both sides: kafka-serve-security.ts reads the flags and refuses a listener reachable
 * from other machines that neither encrypts nor authenticates without `--insecure`.
 */
import { parseArgs } from 'node:util';
import { parseIdentifier } from '../../core/catalog/catalog.js';
import { describeError } from '../../core/errors.js';
import { ColdBatches, DEFAULT_CACHE_MB } from '../../core/kafka/serve/cold-batches.js';
import type { ColdBoundary } from '../../core/kafka/serve/cold-view.js';
import { ColdView } from '../../core/kafka/serve/cold-view.js';
import { startKafkaProxy } from '../../core/kafka/serve/kafka-proxy.js';
import { TableRecords } from '../../core/kafka/serve/table-records.js';
import { firstAtOrAfter } from '../../core/kafka/serve/time-lookup.js';
import { DeadLetterRecords } from '../../core/kafka/serve/dead-letter-records.js';
import { RegistryValueEncoding } from '../../core/kafka/serve/value-encoding.js';
import { upstreamSecurityOf } from '../../core/kafka/serve/upstream-auth.js';
import { parsePartitionOffsets } from '../../core/records/replay-records.js';
import { currentSchema } from '../../core/spec/metadata.js';
import type { Row } from '../../core/spec/types.js';
import { openCatalog } from '../catalog-options.js';
import { helpFor } from '../help.js';
import { OPTIONS, UsageError } from '../options.js';
import { KAFKA_SERVE_SECURITY_FLAGS, kafkaServeSecurityFrom } from '../kafka-serve-security.js';
import { servedRoutesFrom } from '../kafka-serve-routes.js';
import { waitForStopSignal } from '../stop-signal.js';
import { formatReplayValue } from './replay.js';

const KAFKA_SERVE_FLAGS = {
  table: { type: 'string', multiple: true },
  port: { type: 'string' },
  host: { type: 'string' },
  'cold-below': { type: 'string' },
  ...KAFKA_SERVE_SECURITY_FLAGS,
  'cache-mb': { type: 'string' },
} as const;

function kafkaServeOptions() {
  // Built on call: the CLI's modules import each other, so OPTIONS may not be set at load time.
  return { ...OPTIONS, ...KAFKA_SERVE_FLAGS };
}

/** `host:port,host:port`. @throws UsageError */
export function parseBootstrap(text: string): { host: string; port: number }[] {
  return text.split(',').map((part) => {
    const m = /^(.+):(\d+)$/.exec(part.trim());
    const port = m ? Number(m[2]) : Number.NaN;
    if (!m || port < 1 || port > 65535)
      throw new UsageError(`--bootstrap-servers takes HOST:PORT[,HOST:PORT...], got '${part}'`);
    return { host: m[1].replace(/^\[|\]$/g, ''), port };
  });
}

/** `committed` or `P:O,...`. @throws UsageError */
export function parseColdBelow(text: string | undefined): ColdBoundary {
  if (text === undefined || text === 'committed') return { kind: 'committed' };
  try {
    return { kind: 'below', offsets: parsePartitionOffsets(text, '--cold-below') };
  } catch (error) {
    throw new UsageError(`${(error as Error).message} (or 'committed')`);
  }
}

/** `--cache-mb N` as bytes (default DEFAULT_CACHE_MB). @throws UsageError */
export function parseCacheMb(text: string | undefined): number {
  if (text === undefined) return DEFAULT_CACHE_MB * 1024 * 1024;
  const mb = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(mb) || mb < 1 || mb > 1024 * 1024)
    throw new UsageError(`--cache-mb takes a whole number of MiB from 1 to 1048576, got '${text}'`);
  return mb * 1024 * 1024;
}

/** Runs `floe kafka-serve` until SIGINT/SIGTERM; returns the exit code. @throws UsageError for bad flags */
export async function runKafkaServe(args: string[]): Promise<number> {
  let values: ReturnType<typeof parseArgs<{ options: ReturnType<typeof kafkaServeOptions> }>>['values'];
  try {
    const parsed = parseArgs({ args, options: kafkaServeOptions(), allowPositionals: true, strict: true });
    if (parsed.positionals.length > 0)
      throw new UsageError(`kafka-serve takes no arguments, got '${parsed.positionals[0]}'`);
    values = parsed.values;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError((error as Error).message);
  }
  if (values.help) {
    process.stdout.write(helpFor('kafka-serve')!);
    return 0;
  }
  const tables = values.table ?? [];
  if (tables.length === 0) throw new UsageError('kafka-serve needs --table NS.NAME (one or more)');
  if (!values['bootstrap-servers']) throw new UsageError('kafka-serve needs --bootstrap-servers HOST:PORT');
  const bootstrap = parseBootstrap(values['bootstrap-servers']);
  const port = Number(values.port);
  if (values.port === undefined || !Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError('--port P is required (0..65535; 0 picks a free port)');
  const host = values.host ?? '127.0.0.1';
  const security = await kafkaServeSecurityFrom(values, host);
  const boundary = parseColdBelow(values['cold-below']);
  const cacheBytes = parseCacheMb(values['cache-mb']);
  const ids = tables.map((t) => parseIdentifier(t));
  await (await import('../warehouse-check.js')).checkWarehouseArgs('kafka-serve', args);
  const served = await servedRoutesFrom(values.routes, ids);
  const { catalog } = await openCatalog(values);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  // The value schema is the table's current one at each read: formatReplayValue is cheap to build.
  const encoding = new RegistryValueEncoding({
    registryFor: served.registryFor,
    json: (table) => {
      const encode = formatReplayValue(currentSchema(table.metadata));
      return (row: Row) => Buffer.from(encode(row));
    },
    log,
  });
  const records = new TableRecords(
    (table) => encoding.forTable(table),
    new DeadLetterRecords((id) => catalog.loadTable(id), served.dlqOf),
  );
  const cold = new ColdView(
    ids.map((id) => () => catalog.loadTable(id)),
    boundary,
    async (table, topic, partition, below) =>
      (await records.read(table, topic, partition, 0n, below - 1n, 1))[0]?.offset,
    (table, topic, partition, below, timestampMs) =>
      firstAtOrAfter(records, table, topic, partition, below, timestampMs),
  );
  await Promise.all([cold.load(), records.prepare()]);
  const proxy = await startKafkaProxy({
    bootstrap,
    host,
    port,
    cold,
    batches: new ColdBatches(records, cacheBytes),
    log,
    listener: security.listener,
    upstream: await upstreamSecurityOf(security.upstream),
  });
  if (security.warning) process.stderr.write(`${security.warning}\n`);
  for (const line of served.describe()) log(`floe kafka-serve: ${line}`);
  process.stdout.write(
    `floe kafka-serve: Kafka endpoint ${proxy.endpoint.host}:${proxy.endpoint.port} open to ${security.listenerText}, in front of ${values['bootstrap-servers']} (${security.upstreamText}); topics ${cold.topicNames().join(', ') || '(none yet)'} served from ${tables.join(', ')} (${boundary.kind === 'committed' ? 'committed offsets' : `below ${values['cold-below']}`})\n`,
  );
  const signal = waitForStopSignal('floe kafka-serve');
  try {
    await signal.received;
    await proxy.close();
  } catch (error) {
    process.stderr.write(`floe kafka-serve: ${describeError(error)}\n`);
  } finally {
    signal.release();
  }
  return 0;
}
