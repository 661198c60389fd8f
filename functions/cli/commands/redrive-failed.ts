/**
 * `floe redrive-failed (--from s3://bucket/prefix | --from-file PATH | --from-topic T --bootstrap-servers …)
 *  --warehouse DIR (--table NS.NAME [route flags] | --routes FILE)`: the batches the ESM gave up on,
 * ingested again through the table's route. S3 on-failure destinations store the whole invocation
 * record (event included); a Kafka on-failure topic holds one such record per failed Kafka record.
 * Each takes effect once: the table skips offsets it has committed (functions/core/kafka/failure-record.ts).
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { describeError, LakeError } from '../../core/errors.js';
import { ingestEvent, type IngestEventReport } from '../../core/ingest/ingest-event.js';
import type { TableRoute } from '../../core/routing/routes.js';
import { resolveFileIO } from '../../core/io/resolve-file-io.js';
import { planBackfillFromBrokers, runBackfill } from '../../core/kafka/backfill.js';
import { deliverWithRetry } from '../../core/kafka/deliver-with-retry.js';
import { ESM_MAX_BATCH_SIZE } from '../../core/kafka/esm-batch.js';
import { type FailureRecord, parseFailureRecord } from '../../core/kafka/failure-record.js';
import { createCheckedKafka } from '../../core/kafka/kafka-client.js';
import { parseEventJson } from '../../core/records/event-json.js';
import { helpFor } from '../help.js';
import { UsageError } from '../options.js';
import { readJsonFile } from './ingest.js';
import {
  connectionFromOptions,
  type KafkaCommandOptions,
  parseKafkaArgs,
  refuseGroupFlags,
  routesForTopics,
} from '../kafka-options.js';
import { describeReport, openKafkaCatalog, stopOnSignals } from '../kafka-session.js';

interface Totals {
  records: number;
  failed: number;
  rows: number;
  replays: number;
  deadLetters: number;
  snapshots: number;
  problems: string[];
}

function topicsOf(event: unknown): string[] {
  const records = (event as { records: Record<string, { topic?: unknown }[]> }).records;
  const topics = new Set<string>();
  for (const [key, list] of Object.entries(records)) {
    for (const r of Array.isArray(list) ? list : []) {
      topics.add(typeof r?.topic === 'string' ? r.topic : key.replace(/-\d+$/, ''));
    }
  }
  return [...topics];
}

/** Routes per set of source topics: a `--table` route takes whichever topics the failed batch had. */
function routeResolver(values: KafkaCommandOptions): (topics: string[]) => Promise<TableRoute[]> {
  const cache = new Map<string, Promise<TableRoute[]>>();
  return (topics) => {
    const key = [...topics].sort().join('\u0000');
    let routes = cache.get(key);
    if (!routes) {
      routes = routesForTopics(values, topics);
      cache.set(key, routes);
    }
    return routes;
  };
}

/** A failed batch's location for messages: an object, a file, or `topic-partition@offset`. */
async function redriveOne(
  what: string,
  failure: FailureRecord,
  ingest: (event: unknown, routes: TableRoute[]) => Promise<IngestEventReport>,
  routesFor: (topics: string[]) => Promise<TableRoute[]>,
  totals: Totals,
  shouldStop: () => boolean,
): Promise<void> {
  let routes: TableRoute[];
  try {
    routes = await routesFor(topicsOf(failure.event));
  } catch (error) {
    totals.failed += 1;
    totals.problems.push(`${what}: ${error instanceof Error ? error.message : String(error)}`);
    return;
  }
  const outcome = await deliverWithRetry(() => ingest(failure.event, routes), {
    shouldStop,
    onRetry: (error, attempt, delay) =>
      process.stderr.write(
        `floe redrive-failed: ${what} failed (attempt ${attempt}; retrying in ${delay} ms): ${describeError(error)}\n`,
      ),
  });
  if (outcome.status !== 'delivered') {
    totals.failed += 1;
    const error = outcome.error;
    totals.problems.push(`${what}: ${error instanceof LakeError ? error.message : describeError(error)}`);
    return;
  }
  const report = outcome.result;
  totals.records += report.records;
  for (const t of report.tables) {
    totals.rows += t.rowsWritten;
    totals.replays += t.skippedAsReplayed;
    totals.deadLetters += t.deadLettered;
    if (t.status === 'committed') totals.snapshots += 1;
  }
  process.stdout.write(
    `${what}${failure.condition ? ` (${failure.condition})` : ''}: ${report.records} records → ${describeReport(report)}\n`,
  );
}

/** Every object under an S3 prefix, or every file under a folder (or the one file), in name order. */
async function listDocuments(location: string): Promise<string[]> {
  if (location.startsWith('s3://')) {
    return (await resolveFileIO(location).list(location)).map((o) => o.location).sort();
  }
  const path = resolve(location);
  const info = await stat(path).catch(() => undefined);
  if (info === undefined) throw new UsageError(`--from-file: ${path} does not exist`);
  if (info.isFile()) return [path];
  return (await resolveFileIO(path).list(path))
    .map((o) => o.location.replace(/^file:\/\//, ''))
    .filter((l) => l.endsWith('.json'))
    .sort();
}

export async function runRedriveFailed(args: string[]): Promise<number> {
  const values = parseKafkaArgs(args, 'redrive-failed');
  refuseGroupFlags(values, 'redrive-failed');
  if (values.help) {
    process.stdout.write(helpFor('redrive-failed')!);
    return 0;
  }
  const sources = [values.from, values['from-file'], values['from-topic']].filter((s) => s !== undefined);
  if (sources.length !== 1) {
    throw new UsageError(
      'redrive-failed takes one of --from s3://bucket/prefix, --from-file PATH, --from-topic T',
    );
  }
  if (values.from !== undefined && !values.from.startsWith('s3://')) {
    throw new UsageError(
      `--from takes an s3:// prefix (use --from-file for a local folder), got '${values.from}'`,
    );
  }
  const { catalog, lock } = await openKafkaCatalog(values);
  const routesFor = routeResolver(values);
  const ingest = (event: unknown, routes: TableRoute[]) => ingestEvent({ catalog, routes, lock }, event);
  const totals: Totals = {
    records: 0,
    failed: 0,
    rows: 0,
    replays: 0,
    deadLetters: 0,
    snapshots: 0,
    problems: [],
  };
  const controller = new AbortController();
  const release = stopOnSignals(controller, (signal) =>
    process.stderr.write(
      `floe redrive-failed: ${signal}: stopping after the batch in flight (rerun to continue)\n`,
    ),
  );
  const stop = () => controller.signal.aborted;
  let batches = 0;
  try {
    const location = values.from ?? values['from-file'];
    if (location !== undefined) {
      const documents = await listDocuments(location);
      if (documents.length === 0) process.stderr.write(`floe redrive-failed: nothing under ${location}\n`);
      for (const doc of documents) {
        if (stop()) break;
        batches += 1;
        let failure: FailureRecord;
        try {
          const json = doc.startsWith('s3://')
            ? parseEventJson(Buffer.from(await resolveFileIO(doc).read(doc)).toString('utf8'))
            : await readJsonFile(doc, 'on-failure record', parseEventJson);
          failure = parseFailureRecord(json, doc);
        } catch (error) {
          totals.failed += 1;
          totals.problems.push(error instanceof Error ? error.message : String(error));
          continue;
        }
        await redriveOne(doc, failure, ingest, routesFor, totals, stop);
      }
    } else {
      const topic = values['from-topic']!;
      const connection = connectionFromOptions(values);
      const kafka = await createCheckedKafka(connection);
      const ranges = await planBackfillFromBrokers(kafka, topic, 'earliest', 'latest');
      await runBackfill({
        kafka,
        bootstrapServers: connection.brokers.join(','),
        ranges,
        batchSize: ESM_MAX_BATCH_SIZE,
        signal: controller.signal,
        deliver: async (formed) => {
          // Each message of the on-failure topic is one on-failure record (JSON) with its event.
          for (const [key, list] of Object.entries(formed.event.records)) {
            for (const r of list) {
              const what = `${key}@${r.offset}`;
              batches += 1;
              let failure: FailureRecord;
              try {
                const text = Buffer.from(r.value ?? '', 'base64').toString('utf8');
                failure = parseFailureRecord(parseEventJson(text), what);
              } catch (error) {
                totals.failed += 1;
                totals.problems.push(error instanceof Error ? `${what}: ${error.message}` : String(error));
                continue;
              }
              await redriveOne(what, failure, ingest, routesFor, totals, stop);
            }
          }
        },
      });
    }
  } finally {
    release();
  }
  process.stdout.write(
    `floe redrive-failed: ${batches} failed batch(es): ${totals.records} records, ${totals.rows} rows written, ` +
      `${totals.replays} replays skipped (already in the table), ${totals.deadLetters} dead letters, ` +
      `${totals.snapshots} snapshots; ${totals.failed} could not be redriven\n`,
  );
  for (const p of totals.problems) process.stdout.write(`  ${p}\n`);
  return totals.failed > 0 ? 1 : 0;
}
