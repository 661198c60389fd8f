/**
 * The `floe` command line: the same core the Lambda handlers run, on a local (or s3://) warehouse.
 *   floe ingest <event.json...> --warehouse DIR --table NS.NAME [--schema FILE] [--partition-by EXPR]
 *               [--mode append|debezium|upsert] [--identifier COL[,COL]]
 *   floe ingest <event.json...> --warehouse DIR --routes FILE
 *   floe scan --warehouse DIR --table NS.NAME [--where EXPR] [--json] [--limit N]
 *   floe inspect --warehouse DIR --table NS.NAME [--json]
 *   floe maintain all|compact|expire-snapshots|remove-orphans|rewrite-manifests --warehouse DIR --table NS.NAME
 *     [--dry-run] [--older-than DURATION] [--retain-last N]
 *   floe demo [--warehouse DIR]
 */
import { parseArgs } from 'node:util';
import { describeError, LakeError } from '../core/errors.js';
import { runAlter } from './commands/alter.js';
import { runDemo } from './commands/demo.js';
import { runDlq } from './commands/dlq.js';
import { runIngest } from './commands/ingest.js';
import { runInspect } from './commands/inspect.js';
import { runMaintain } from './commands/maintain.js';
import { KAFKA_COMMANDS } from './commands/run.js';
import { runScan } from './commands/scan.js';

const USAGE = `usage: floe <command> [options]

commands:
  ingest <event.json...> --warehouse DIR --table NS.NAME [--schema FILE] [--partition-by EXPR] [--topics T1,T2]
         [--mode append|debezium|upsert] [--identifier COL[,COL]] [--sort-by EXPR]
         [--schema-evolution evolve|dlq|block]
      feed Kafka ESM event files through the ingest handler's code; creates the table when missing.
      --mode: append (a row per record, the default), debezium (change events: the table keeps the
      current rows), upsert (the key's latest value; a null value deletes). --identifier: the key
      columns (stored with the table, like the mode, so later ingests need neither flag)
  ingest <event.json...> --warehouse DIR --routes FILE
      the same with every route of FILE (the FLOE_TABLES JSON the Lambda takes: several tables,
      formats, mappings, \`when\`, CDC modes) instead of the route flags
  scan --warehouse DIR --table NS.NAME [--where EXPR] [--json] [--limit N]
      print rows (deletes applied) and the pruning funnel; --json: NDJSON rows on stdout, funnel on stderr
  inspect --warehouse DIR --table NS.NAME [--json]
      snapshots with their summaries, files and sizes
  maintain all|compact|expire-snapshots|remove-orphans|rewrite-manifests --warehouse DIR --table NS.NAME
           [--dry-run] [--older-than DURATION] [--retain-last N]
      table maintenance as the scheduled state machine runs it (all: compact, expire, remove orphans,
      rewrite manifests); --older-than (30m, 6h, 3d) is the snapshot age and the orphan window
  alter --warehouse DIR --table NS.NAME --partition-by EXPR
      partition evolution: new data uses the new spec, files already written keep theirs
  dlq redrive --warehouse DIR --table NS.NAME [--where EXPR] [--routes FILE] [--schema-evolution P]
      re-ingest the table's dead letters after a fix, each exactly once (failing ones stay); with
      --routes (the FLOE_TABLES JSON), the table's route decides format, mapping and evolution policy
  run | backfill | redrive-failed --help
      read Kafka yourself: a local event source mapping, a bounded backfill, redrive of failed batches
  demo [--warehouse DIR]
      ingest the sample events in events/ into ./warehouse and show the table (what \`npm start\` runs)
`;

export class UsageError extends Error {}

export const OPTIONS = {
  warehouse: { type: 'string' },
  table: { type: 'string' },
  schema: { type: 'string' },
  'partition-by': { type: 'string' },
  topics: { type: 'string' },
  mode: { type: 'string' },
  'sort-by': { type: 'string' },
  'schema-evolution': { type: 'string' },
  identifier: { type: 'string' },
  where: { type: 'string' },
  routes: { type: 'string' },
  json: { type: 'boolean' },
  limit: { type: 'string' },
  'dry-run': { type: 'boolean' },
  'older-than': { type: 'string' },
  'retain-last': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export type ParsedOptions = ReturnType<
  typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>
>['values'];

export function requireOption(values: ParsedOptions, name: 'warehouse' | 'table'): string {
  const v = values[name];
  if (!v) throw new UsageError(`--${name} is required`);
  return v;
}

/** Runs the CLI; returns the exit code (0 ok, 1 failure, 2 bad usage). */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (!command || command === '--help' || command === '-h' || command === 'help') {
      process.stdout.write(USAGE);
      return command ? 0 : 2;
    }
    // The Kafka commands (run, backfill, redrive-failed) parse their own flags.
    if (Object.hasOwn(KAFKA_COMMANDS, command)) return await KAFKA_COMMANDS[command](rest);
    let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
    try {
      parsed = parseArgs({ args: rest, options: OPTIONS, allowPositionals: true, strict: true });
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    const { values, positionals } = parsed;
    switch (command) {
      case 'ingest':
        return await runIngest(values, positionals);
      case 'scan':
        return await runScan(values);
      case 'inspect':
        return await runInspect(values);
      case 'alter':
        return await runAlter(values);
      case 'dlq':
        return await runDlq(values, positionals);
      case 'demo':
        return await runDemo(values);
      case 'maintain':
        return await runMaintain(values, positionals);
      default:
        throw new UsageError(`unknown command '${command}'`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`floe: ${error.message}\n${USAGE}`);
      return 2;
    }
    const hint = error instanceof LakeError && error.retryable ? ' (transient: retrying may help)' : '';
    process.stderr.write(
      `floe: ${error instanceof LakeError ? error.message : describeError(error)}${hint}\n`,
    );
    if (process.env.FLOE_DEBUG) console.error(error);
    return 1;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0); // `floe scan ... | head` closed the pipe: not an error
    throw error;
  });
  process.exitCode = await main(process.argv.slice(2));
}
