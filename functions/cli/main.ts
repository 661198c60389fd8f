/**
 * The `floe` command line: the same core the Lambda handlers run, on any of their catalogs — a local
 * or s3:// warehouse (`--warehouse DIR`), S3 Tables, or a REST catalog (catalog-options.ts). Parses
 * the command and its flags (options.ts), runs the command, maps errors to exit codes.
 */
import { describeError, LakeError } from '../core/errors.js';
import { CATALOG_USAGE } from './catalog-options.js';
import { hintFor } from './error-hints.js';
import { exitWhenStuck } from './exit-guard.js';
import { asksForHelp, HELP_COMMANDS, helpFor, takesCatalog } from './help.js';
import { parseOptions, UsageError } from './options.js';

// Each command's module is imported when it runs, not up front: together they load most of floe and
// its dependencies (Arrow, kafkajs, the AWS SDK, the SQL parser), ~1 s of CPU before `floe --help`
// could print a line.
const KAFKA_COMMAND_NAMES = new Set(['run', 'backfill', 'redrive-failed']);

const USAGE = `usage: floe <command> <catalog> [options]
       floe <command> --help | floe help <command>: the command's flags, one line each, and an example

<catalog> is --warehouse DIR (the embedded catalog), --table-bucket-arn ARN (S3 Tables) or --uri URL
(a REST catalog), or the FLOE_* variables of a deployed function; see "catalog options" below.

commands:
  ingest <event.json...> <catalog> --table NS.NAME [--schema FILE] [--partition-by EXPR] [--topics T1,T2]
         [--mode append|debezium|upsert] [--identifier COL[,COL]] [--sort-by EXPR]
         [--schema-evolution evolve|dlq|block]
      feed Kafka ESM event files through the ingest handler's code; creates the table when missing.
      --mode: append (a row per record, the default), debezium (change events: the table keeps the
      current rows), upsert (the key's latest value; a null value deletes). --identifier: the key
      columns (stored with the table, like the mode, so later ingests need neither flag)
  ingest <event.json...> <catalog> --routes FILE
      the same with every route of FILE (the FLOE_TABLES JSON the Lambda takes: several tables,
      formats, mappings, \`when\`, CDC modes) instead of the route flags
  scan <catalog> --table NS.NAME [--where EXPR] [--json] [--limit N]
      print rows (deletes applied) and the pruning funnel; --json: NDJSON rows on stdout (64-bit
      integers as exact JSON numbers), funnel on stderr
  scan <catalog> --table NS.NAME --live --bootstrap-servers HOST:PORT [--topics T | --routes FILE] [...]
      the merged view: the table plus the Kafka records it does not hold yet (mapped by its route,
      nothing committed); the funnel gains a hot line (records read per partition, offsets read up to)
  serve <catalog> --port P [--host 127.0.0.1] [--live --bootstrap-servers HOST:PORT [--cache-ttl 10m]]
      a read-only Iceberg REST catalog over the catalog; with --live, each table carries one extra
      snapshot holding the Kafka tail, so any engine reads the merged view
  inspect <catalog> --table NS.NAME [--json]
      snapshots with their summaries, files and sizes
  maintain all|convert-equality-deletes|compact|expire-snapshots|remove-orphans|rewrite-manifests
           <catalog> --table NS.NAME [--dry-run] [--older-than DURATION] [--retain-last N]
      table maintenance as the scheduled state machine runs it (all: convert equality deletes, compact,
      expire, remove orphans, rewrite manifests); --older-than (30m, 6h, 3d) is the snapshot age and
      the orphan window
  alter <catalog> --table NS.NAME --partition-by EXPR
      partition evolution: new data uses the new spec, files already written keep theirs
  dlq redrive <catalog> --table NS.NAME [--where EXPR] [--routes FILE] [--schema-evolution P]
      re-ingest the table's dead letters after a fix, each exactly once (failing ones stay); with
      --routes (the FLOE_TABLES JSON), the table's route decides format, mapping and evolution policy
  status <catalog> --table NS.NAME [--bootstrap-servers ... [Kafka flags]] [--gap-age 15m] [--json]
      how far behind its topics the table is: lag, last advance, gaps and their age, dead letters
      (exit 3: a stale gap)
  verify <catalog> --table NS.NAME [--snapshot ID] [--deep] [--allow-holes] [--json]
      audit a snapshot: files registered once and present, totals true; --deep: offsets and keys once
  index <catalog> --table NS.NAME [build|rebuild|status|verify] [--json]
      the key index of a keyed table: build or catch it up, rebuild it, how far behind, verify it
  rebase-offsets <catalog> --table NS.NAME --topic T [--partitions 0,1] --help
      start a new offset epoch for a topic whose history changed (recreated, new cluster, failover)
  run | backfill | redrive-failed --help
      read Kafka yourself: a local event source mapping, a bounded backfill, redrive of failed batches
  replay <catalog> --table NS.NAME --bootstrap-servers ... --to-topic OUT [--where EXPR] [--follow] --help
      the table back into a Kafka topic, per source partition in offset order, exactly once
  demo [--warehouse DIR]
      ingest the sample events in events/ into ./warehouse and show the table (what \`npm start\` runs)

${CATALOG_USAGE}`;

/** Runs the CLI; returns the exit code (0 ok, 1 failure, 2 bad usage). */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (!command || command === '--help' || command === '-h' || (command === 'help' && rest.length === 0)) {
      process.stdout.write(USAGE);
      return command ? 0 : 2;
    }
    if (command === 'help' || asksForHelp(rest)) {
      const [asked, args] = command === 'help' ? [rest[0]!, rest.slice(1)] : [command, rest];
      const help = helpFor(asked, args);
      if (help !== undefined) {
        process.stdout.write(takesCatalog(asked) ? `${help}\n${CATALOG_USAGE}` : help);
        return 0;
      }
      // A command help.ts does not list answers its own --help; `floe help` names only known ones.
      if (command === 'help')
        throw new UsageError(`unknown command '${asked}' (commands: ${HELP_COMMANDS.join(', ')})`);
    }
    const warehouses = await import('./warehouse-check.js');
    if (warehouses.writesTables(command)) await warehouses.checkWarehouseArgs(command, rest);
    try {
      return await runCommand(command, rest);
    } catch (error) {
      // A read over a mistyped --warehouse fails as "no such table": name the folder instead.
      throw error instanceof UsageError ? error : await warehouses.explainFailure(command, rest, error);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      const more =
        command && helpFor(command)
          ? `floe ${command} --help lists its flags`
          : 'floe --help lists the commands';
      process.stderr.write(`floe: ${error.message}\n(${more})\n`);
      return 2;
    }
    const setup = hintFor(error);
    const hint = setup
      ? `\n  fix: ${setup}`
      : error instanceof LakeError && error.retryable
        ? ' (transient: retrying may help)'
        : '';
    process.stderr.write(
      `floe: ${error instanceof LakeError ? error.message : describeError(error)}${hint}\n`,
    );
    if (process.env.FLOE_DEBUG) console.error(error);
    return 1;
  }
}

/** Runs `command`. @throws UsageError for bad usage; whatever the command throws */
async function runCommand(command: string, rest: string[]): Promise<number> {
  // The Kafka commands (run, backfill, redrive-failed) parse their own flags.
  if (KAFKA_COMMAND_NAMES.has(command)) {
    const { KAFKA_COMMANDS } = await import('./commands/run.js');
    return await KAFKA_COMMANDS[command]!(rest);
  }
  // The live commands take the Kafka connection flags too, so they parse their own.
  if (command === 'scan' && rest.includes('--live'))
    return await (await import('./commands/scan-live.js')).runLiveScan(rest);
  if (command === 'serve') return await (await import('./commands/serve.js')).runServe(rest);
  if (command === 'replay') return await (await import('./commands/replay.js')).runReplayCommand(rest);
  if (command === 'status') return await (await import('./commands/status.js')).runStatus(rest);
  if (command === 'verify') return await (await import('./commands/verify.js')).runVerify(rest);
  if (command === 'index') return await (await import('./commands/index.js')).runIndex(rest);
  if (command === 'kafka-serve') return await (await import('./commands/kafka-serve.js')).runKafkaServe(rest);
  if (command === 'rebase-offsets')
    return await (await import('./commands/rebase-offsets.js')).runRebaseOffsets(rest);
  const { values, positionals } = parseOptions(rest);
  switch (command) {
    case 'ingest':
      return await (await import('./commands/ingest.js')).runIngest(values, positionals);
    case 'scan':
      return await (await import('./commands/scan.js')).runScan(values);
    case 'inspect':
      return await (await import('./commands/inspect.js')).runInspect(values);
    case 'alter':
      return await (await import('./commands/alter.js')).runAlter(values);
    case 'dlq':
      return await (await import('./commands/dlq.js')).runDlq(values, positionals);
    case 'demo':
      return await (await import('./commands/demo.js')).runDemo(values);
    case 'maintain':
      return await (await import('./commands/maintain.js')).runMaintain(values, positionals);
    default:
      throw new UsageError(`unknown command '${command}'`);
  }
}

/**
 * The process around `main`: the exit code, a reader closing the pipe early (`floe scan ... | head`:
 * its choice, not an error), the producer an aggregate route's emit keeps connected for the process,
 * let go so the CLI exits, and the guard against a process that stays alive anyway (exit-guard.ts).
 * The `floe` bin (bin.mjs) and `tsx functions/cli/main.ts` both run this.
 */
export async function runCli(argv: string[]): Promise<void> {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
  const code = await main(argv);
  process.exitCode = code;
  // Armed before the producers close: a disconnect that never returns is a hang too.
  exitWhenStuck(code);
  // help ran no command, so there is no producer (and no reason to load the aggregate code)
  const askedForHelp = argv.length === 0 || argv.some((arg) => ['help', '--help', '-h'].includes(arg));
  if (askedForHelp) return;
  const { closeWindowProducers } = await import('../core/aggregate/emit-windows.js');
  await closeWindowProducers();
}

if (import.meta.url === `file://${process.argv[1]}`) await runCli(process.argv.slice(2));
