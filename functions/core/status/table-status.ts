/**
 * `floe status`'s answer for one table: how far behind the broker it is, since when, and whether what it
 * holds is exact (no hole that is not closing). From the table's metadata (snapshot summaries and
 * manifests, never a data file), the broker's watermarks when a Kafka connection is given, and the
 * dead-letter table's small columns. Commits nothing; of Kafka, reads only the gaps' offsets (probe-gaps.ts).
 */
import type { Catalog, LoadedTable } from '../catalog/catalog.js';
import { formatIdentifier } from '../catalog/catalog.js';
import type { KafkaConnection } from '../kafka/kafka-client.js';
import { fetchWatermarks, type PartitionWatermarks } from '../kafka/read-range.js';
import { dlqIdentifier } from '../records/dead-letters.js';
import { currentSnapshot } from '../spec/metadata.js';
import type { TableIdentifier } from '../spec/types.js';
import { readCommittedState } from '../table/source-offsets.js';
import { heldSince } from './commit-times.js';
import { type DeadLetterCounts, readDeadLetterCounts, redrivenOffsets } from './dead-letter-counts.js';
import { type NewestRecord, readNewestRecord } from './newest-record.js';
import { computeLags, type OffsetGap, type PartitionLag } from './offset-lag.js';
import { probeGaps, readableParts } from './probe-gaps.js';

/** A partition's lag with the times the table's history gives it. */
export interface PartitionStatus extends PartitionLag {
  /** When the table first held its last committed offset (its last advance); null when nothing committed. */
  lastAdvancedMs: number | null;
  /** The last advance may be older: the snapshots before it expired. */
  lastAdvancedAtLeast: boolean;
  /** The highest record timestamp of the partition's committed ranges (their marks); null when unknown. */
  newestRecordMs: number | null;
}

/** A hole between committed ranges with its age. */
export interface GapStatus extends OffsetGap {
  size: bigint;
  /** When the range after the hole committed (the hole has been open since); null when unknown. */
  openSinceMs: number | null;
  ageMs: number | null;
  /** The age may be more: the snapshots before `openSinceMs` expired. */
  atLeast: boolean;
  /**
   * Records the broker delivers in the hole now (probe-gaps.ts); 0: an empty hole (transaction markers,
   * compacted records), neither lag nor stale; null: not read (no Kafka, past retention, over the budget).
   */
  records: number | null;
  /** Open at least as long as the gap age and not known empty: a batch that is not coming. */
  stale: boolean;
}

export interface TableStatus {
  table: string;
  snapshotId: bigint | null;
  /** `timestamp-ms` of the current snapshot. */
  lastCommitMs: number | null;
  newestRecord: NewestRecord;
  /** Whether the broker's watermarks were read. */
  kafka: boolean;
  gapAgeMs: number;
  /** The sum of the partitions' known lags; null without Kafka. */
  totalLag: bigint | null;
  partitions: PartitionStatus[];
  gaps: GapStatus[];
  staleGaps: number;
  /** Per topic the broker could not say anything of (deleted, not authorised). */
  topicProblems: { topic: string; problem: string }[];
  /** What status could not find out, and why (a gap read that failed). */
  warnings: string[];
  deadLetters: { table: string; exists: boolean } & DeadLetterCounts;
}

export interface TableStatusOptions {
  catalog: Catalog;
  table: TableIdentifier;
  /** Read the broker's watermarks through it; without it, status says what the table alone knows. */
  kafka?: KafkaConnection;
  /** Topics to ask the broker about besides those the table committed. @default none */
  topics?: readonly string[];
  /** The dead-letter table. @default `<table>__dlq` */
  dlqTable?: TableIdentifier;
  /** How long a gap stays open before it counts as stale. */
  gapAgeMs: number;
  /** The time ages are measured to. @default Date.now() */
  nowMs?: number;
  /** The table as already loaded. @default loaded from the catalog */
  loaded?: LoadedTable;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The watermarks of each topic, asked one topic at a time so that one topic the broker does not know
 * (deleted) is a problem of its own partitions, not of the whole status.
 * @throws the first topic's error when no topic answers (brokers unreachable: retrying may help)
 */
async function readWatermarks(
  kafka: KafkaConnection,
  topics: readonly string[],
): Promise<{ watermarks: PartitionWatermarks[]; problems: { topic: string; problem: string }[] }> {
  const watermarks: PartitionWatermarks[] = [];
  const problems: { topic: string; problem: string }[] = [];
  let firstError: unknown;
  for (const topic of topics) {
    try {
      watermarks.push(...(await fetchWatermarks(kafka, [topic])));
    } catch (error) {
      firstError ??= error;
      problems.push({ topic, problem: errorText(error) });
    }
  }
  if (topics.length > 0 && problems.length === topics.length) throw firstError;
  return { watermarks, problems };
}

function newestMark(marks: readonly { maxTimestamp: number }[] | undefined): number | null {
  let newest: number | null = null;
  for (const m of marks ?? [])
    if (m.maxTimestamp >= 0 && (newest === null || m.maxTimestamp > newest)) newest = m.maxTimestamp;
  return newest;
}

/** The lag less the offsets of the partition's gaps found empty (they hold no record to wait for). Never throws. */
export function withoutEmptyGaps(
  lag: PartitionLag,
  gaps: readonly Pick<GapStatus, 'topic' | 'partition' | 'first' | 'last' | 'records'>[],
): PartitionLag {
  if (lag.lag === null || lag.logStart === null) return lag;
  let empty = 0n;
  for (const g of gaps) {
    if (g.topic !== lag.topic || g.partition !== lag.partition || g.records !== 0) continue;
    // Only the part the lag counted: at or above the log start (the gaps lie above the first commit).
    const size = g.last - g.first + 1n;
    const dropped = lag.logStart > g.first ? lag.logStart - g.first : 0n;
    if (size > dropped) empty += size - dropped;
  }
  return empty === 0n ? lag : { ...lag, lag: lag.lag - empty };
}

/**
 * The status of one table (see the file comment).
 * @throws NoSuchTableError when the table does not exist
 * @throws ValidationError when its committed offsets or marks hold text floe did not write
 * @throws NotFoundError / TransientIOError from reading manifests; Error from the Kafka client when no
 *   topic's watermarks can be read (retrying may help)
 */
export async function readTableStatus(options: TableStatusOptions): Promise<TableStatus> {
  const nowMs = options.nowMs ?? Date.now();
  const table = options.loaded ?? (await options.catalog.loadTable(options.table));
  const md = table.metadata;
  const name = formatIdentifier(options.table);
  const state = readCommittedState(md);
  const topics = [...new Set([...state.offsets.keys(), ...(options.topics ?? [])])].sort();
  const read = options.kafka ? await readWatermarks(options.kafka, topics) : undefined;
  // Partitions of a topic the broker could not answer for keep their ranges, and its answer as problem.
  const topicProblem = new Map(read?.problems.map((p) => [p.topic, p.problem]));
  const { partitions: lags, gaps } = computeLags(state.offsets, read?.watermarks);
  const lagOf = (l: PartitionLag): PartitionLag => {
    const problem = topicProblem.get(l.topic);
    return problem === undefined
      ? l
      : { ...l, problem: `the broker did not answer for the topic: ${problem}` };
  };

  const probes = [
    ...lags.map((l) => ({ topic: l.topic, partition: l.partition, offset: l.lastCommitted ?? -1n })),
    ...gaps.map((g) => ({ topic: g.topic, partition: g.partition, offset: g.last + 1n })),
  ];
  const since = heldSince(md, probes);
  // Only gaps of partitions whose log is the table's: a recreated topic's offsets say nothing of them.
  const troubled = new Set(
    lags.filter((l) => lagOf(l).problem !== undefined).map((l) => `${l.topic}\u0000${l.partition}`),
  );
  const probeable = gaps.map((g) => g.expired !== null && !troubled.has(`${g.topic}\u0000${g.partition}`));
  const probed =
    options.kafka && probeable.some(Boolean)
      ? await probeGaps(
          options.kafka,
          readableParts(gaps, lags).map((g, j) => (probeable[j] ? g : { ...g, expired: true })),
        )
      : undefined;
  const records = gaps.map((_, j) => (probeable[j] ? (probed?.records[j] ?? null) : null));
  const gapStatus: GapStatus[] = gaps.map((g, j) => {
    const held = since[lags.length + j];
    const ageMs = held.sinceMs === null ? null : Math.max(0, nowMs - held.sinceMs);
    return {
      ...g,
      size: g.last - g.first + 1n,
      openSinceMs: held.sinceMs,
      ageMs,
      atLeast: held.atLeast,
      records: records[j],
      stale: ageMs !== null && ageMs >= options.gapAgeMs && records[j] !== 0,
    };
  });
  const partitions: PartitionStatus[] = lags.map((l, i) => ({
    ...lagOf(withoutEmptyGaps(l, gapStatus)),
    lastAdvancedMs: l.lastCommitted === null ? null : since[i].sinceMs,
    lastAdvancedAtLeast: since[i].atLeast,
    newestRecordMs: newestMark(state.marks.get(l.topic)?.get(l.partition)),
  }));

  const dlqId = options.dlqTable ?? dlqIdentifier(options.table);
  const dlqExists = await options.catalog.tableExists(dlqId);
  const counts: DeadLetterCounts = dlqExists
    ? await readDeadLetterCounts(await options.catalog.loadTable(dlqId), name, redrivenOffsets(md))
    : { total: 0, redriven: 0, byStage: [] };
  const snapshot = currentSnapshot(md);
  return {
    table: name,
    snapshotId: snapshot?.['snapshot-id'] ?? null,
    lastCommitMs: snapshot?.['timestamp-ms'] ?? null,
    newestRecord: await readNewestRecord(table),
    kafka: read !== undefined,
    gapAgeMs: options.gapAgeMs,
    totalLag: read ? partitions.reduce((sum, p) => sum + (p.lag ?? 0n), 0n) : null,
    partitions,
    gaps: gapStatus,
    staleGaps: gapStatus.filter((g) => g.stale).length,
    topicProblems: read?.problems ?? [],
    warnings: probed?.warning === undefined ? [] : [probed.warning],
    deadLetters: { table: formatIdentifier(dlqId), exists: dlqExists, ...counts },
  };
}
