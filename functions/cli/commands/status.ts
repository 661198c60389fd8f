/**
 * `floe status`: how far behind its topics a table is, since when, and whether what it holds is exact
 * (functions/core/status/). Prints an aligned table, or with --json one object of a stable shape
 * (functions/core/status/README.md). Exit 0; 3 when a gap between committed ranges is older than
 * --gap-age (a batch that is not coming), so a cron job or a probe can alert on it.
 */
import { parseArgs } from 'node:util';
import { parseIdentifier } from '../../core/catalog/catalog.js';
import { createCheckedKafka } from '../../core/kafka/kafka-client.js';
import { type GapStatus, readTableStatus, type TableStatus } from '../../core/status/table-status.js';
import { dlqIdentifier } from '../../core/records/dead-letters.js';
import { stringifyJson } from '../../core/spec/json-codec.js';
import { CATALOG_USAGE, openCatalog } from '../catalog-options.js';
import { parseDuration } from '../flag-values.js';
import {
  connectionFromOptions,
  KAFKA_CONNECTION_FLAGS,
  type KafkaCommandOptions,
  splitList,
} from '../kafka-options.js';
import { helpFor } from '../help.js';
import { OPTIONS, UsageError } from '../options.js';
import { printTable } from '../print-table.js';

/** Exit code when a stale gap exists. */
export const STALE_GAP_EXIT = 3;
const DEFAULT_GAP_AGE = '15m';

const STATUS_FLAGS = {
  ...KAFKA_CONNECTION_FLAGS,
  'gap-age': { type: 'string' },
  'dlq-table': { type: 'string' },
} as const;

function statusOptions() {
  // Built on call, as run.ts's: the CLI's modules import each other, so OPTIONS may not be set at load time.
  return { ...OPTIONS, ...STATUS_FLAGS };
}

type StatusValues = ReturnType<typeof parseArgs<{ options: ReturnType<typeof statusOptions> }>>['values'];

/** @throws UsageError for unknown flags or stray arguments */
function parseStatusArgs(args: string[]): StatusValues {
  try {
    const parsed = parseArgs({ args, options: statusOptions(), allowPositionals: true, strict: true });
    if (parsed.positionals.length > 0)
      throw new UsageError(`status takes no arguments, got '${parsed.positionals[0]}'`);
    return parsed.values;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError((error as Error).message);
  }
}

/** A millisecond time as ISO-8601, or '' when unknown. Never throws. */
function iso(ms: number | null): string {
  return ms === null || !Number.isFinite(ms) ? '' : new Date(ms).toISOString();
}

/** `3d 4h`, `12m 5s`, `800ms`: the two largest units. Never throws. */
export function formatAge(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const units: [string, number][] = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ];
  const parts: string[] = [];
  let rest = Math.floor(ms);
  for (const [unit, size] of units) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0 || parts.length > 0) parts.push(`${n}${unit}`);
    if (parts.length === 2) break;
  }
  return parts.filter((p) => !p.startsWith('0')).join(' ') || '0s';
}

function ago(ms: number | null, now: number, atLeast = false): string {
  if (ms === null) return '';
  return `${atLeast ? '≥ ' : ''}${formatAge(now - ms)} ago`;
}

const rangesText = (ranges: readonly (readonly [bigint, bigint])[]) =>
  ranges.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(',');

/** The stable --json shape (functions/core/status/README.md). Never throws. */
export function statusJson(s: TableStatus, nowMs: number): Record<string, unknown> {
  const gap = (g: GapStatus) => ({
    topic: g.topic,
    partition: g.partition,
    first: g.first,
    last: g.last,
    size: g.size,
    openSinceMs: g.openSinceMs,
    ageMs: g.ageMs,
    atLeast: g.atLeast,
    records: g.records,
    stale: g.stale,
    expired: g.expired,
  });
  return {
    version: 1,
    table: s.table,
    nowMs,
    snapshotId: s.snapshotId,
    lastCommitMs: s.lastCommitMs,
    newestRecordMs: s.newestRecord.newestMs,
    newestRecordFiles: s.newestRecord.files,
    newestRecordFilesWithoutBound: s.newestRecord.filesWithoutBound,
    kafka: s.kafka,
    totalLag: s.totalLag,
    gapAgeMs: s.gapAgeMs,
    staleGaps: s.staleGaps,
    partitions: s.partitions.map((p) => ({
      topic: p.topic,
      partition: p.partition,
      committed: p.committed.map(([a, b]) => [a, b]),
      firstCommitted: p.firstCommitted,
      lastCommitted: p.lastCommitted,
      logStart: p.logStart,
      highWatermark: p.highWatermark,
      lag: p.lag,
      expired: p.expired,
      lastAdvancedMs: p.lastAdvancedMs,
      lastAdvancedAtLeast: p.lastAdvancedAtLeast,
      newestRecordMs: p.newestRecordMs,
      problem: p.problem ?? null,
    })),
    gaps: s.gaps.map(gap),
    topicProblems: s.topicProblems,
    warnings: s.warnings,
    deadLetters: s.deadLetters,
  };
}

function printHuman(s: TableStatus, now: number): void {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const newest = s.newestRecord;
  out(
    `${s.table}: snapshot ${s.snapshotId ?? 'none'}` +
      (s.lastCommitMs === null ? '' : `, last commit ${iso(s.lastCommitMs)} (${ago(s.lastCommitMs, now)})`),
  );
  out(
    newest.newestMs === null
      ? `newest record: unknown (${newest.reason ?? 'no bound'})`
      : `newest record: ${iso(newest.newestMs)} (${ago(newest.newestMs, now)}; _kafka.timestamp upper bound of ${newest.files} file(s)` +
          `${newest.filesWithoutBound > 0 ? `, ${newest.filesWithoutBound} without one` : ''})`,
  );
  out(
    s.kafka
      ? `lag: ${s.totalLag} record(s) behind the high watermarks`
      : 'lag: unknown (give --bootstrap-servers to compare with the broker)',
  );
  printTable(
    s.partitions.map((p) => ({
      topic: p.topic,
      partition: p.partition,
      committed: rangesText(p.committed),
      'log start': p.logStart ?? '',
      'high watermark': p.highWatermark ?? '',
      lag: p.lag ?? '',
      expired: p.expired ? p.expired : '',
      'last advanced': ago(p.lastAdvancedMs, now, p.lastAdvancedAtLeast),
      'newest record': iso(p.newestRecordMs),
    })),
    40,
  );
  if (s.partitions.length === 0) out('no committed offsets (and no --topics to ask the broker about)');
  for (const p of s.partitions) if (p.problem) out(`problem: ${p.topic}/${p.partition}: ${p.problem}`);
  for (const t of s.topicProblems) out(`problem: topic ${t.topic}: ${t.problem}`);
  for (const w of s.warnings) out(`warning: ${w}`);
  if (s.gaps.length > 0) {
    out(`gaps: ${s.gaps.length}, ${s.staleGaps} stale (open ≥ ${formatAge(s.gapAgeMs)})`);
    printTable(
      s.gaps.map((g) => ({
        topic: g.topic,
        partition: g.partition,
        offsets: g.first === g.last ? `${g.first}` : `${g.first}-${g.last}`,
        size: g.size,
        'open since': iso(g.openSinceMs),
        age: g.ageMs === null ? '' : `${g.atLeast ? '≥ ' : ''}${formatAge(g.ageMs)}`,
        records: g.records ?? '',
        stale: g.stale ? 'STALE' : '',
        expired: g.expired ? 'expired from broker' : '',
      })),
      40,
    );
  } else out('gaps: none');
  const d = s.deadLetters;
  if (!d.exists) out(`dead letters: none (${d.table} does not exist)`);
  else {
    out(`dead letters (${d.table}): ${d.total}, ${d.redriven} redriven`);
    printTable(
      d.byStage.map((st) => ({
        stage: st.stage,
        count: st.count,
        redriven: st.redriven,
        'most frequent reason': st.reasons[0]?.reason ?? '',
      })),
      60,
    );
  }
}

/** Runs `floe status`; returns the exit code (0, or 3 with a stale gap). @throws UsageError for bad flags */
export async function runStatus(args: string[]): Promise<number> {
  const values = parseStatusArgs(args);
  if (values.help) {
    process.stdout.write(`${helpFor('status')!}\n${CATALOG_USAGE}`);
    return 0;
  }
  if (!values.table) throw new UsageError('status needs --table NS.NAME');
  const gapAgeMs = parseDuration(values['gap-age'] ?? DEFAULT_GAP_AGE, '--gap-age');
  const id = parseIdentifier(values.table);
  const withKafka = values['bootstrap-servers'] !== undefined;
  const kafkaFlag = (Object.keys(KAFKA_CONNECTION_FLAGS) as (keyof typeof KAFKA_CONNECTION_FLAGS)[]).find(
    (f) => values[f] !== undefined,
  );
  if (!withKafka && kafkaFlag !== undefined)
    throw new UsageError(`--${kafkaFlag} goes with --bootstrap-servers`);
  const kafka = withKafka
    ? await createCheckedKafka(connectionFromOptions(values as KafkaCommandOptions))
    : undefined;
  const { catalog } = await openCatalog(values);
  const nowMs = Date.now();
  const status = await readTableStatus({
    catalog,
    table: id,
    kafka,
    topics: splitList(values.topics),
    dlqTable: values['dlq-table'] === undefined ? undefined : dlqIdentifier(id, values['dlq-table']),
    gapAgeMs,
    nowMs,
  });
  if (values.json) process.stdout.write(`${stringifyJson(statusJson(status, nowMs))}\n`);
  else printHuman(status, nowMs);
  return status.staleGaps > 0 ? STALE_GAP_EXIT : 0;
}
