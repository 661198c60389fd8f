/**
 * `floe replay`: a table's rows back into a Kafka topic, per source partition in `_kafka.offset`
 * order, exactly once across kills (replay-source.ts has the checkpoint the target topic keeps).
 *
 * Memory: rows are read file by file in the order of the files' offset lower bounds and released
 * per source partition in offset order as soon as no unread file can hold a smaller offset
 * (read-in-offset-order.ts has the bound); rows the target already holds are dropped as they are read.
 *
 * CDC tables hold current state: the scan applies their deletes, so replay emits one record per live
 * row, in the offset order of the change that produced it (not the change history).
 */
import type { LoadedTable } from '../catalog/catalog.js';
import { ValidationError } from '../errors.js';
import type { KafkaConnection } from '../kafka/kafka-client.js';
import { fetchWatermarks } from '../kafka/read-range.js';
import { type ReadRecord, readRanges } from '../kafka/read-ranges.js';
import { createReplayProducer, keyPartition, readTargetCheckpoints } from '../kafka/replay-producer.js';
import { planScan } from '../scan/plan-scan.js';
import type { Expression } from '../scan/expression.js';
import type { Row } from '../spec/types.js';
import { mixedEpochs } from '../table/offset-epochs.js';
import { readCommittedOffsets, readCommittedState } from '../table/source-offsets.js';
import {
  buildRecord,
  lineageOf,
  type Partitioning,
  type ReplayBounds,
  type ReplayRecord,
  type RowLineage,
  sourceKey,
  stampCheckpoints,
  targetPartition,
  withinBounds,
} from '../records/replay-records.js';
import { checkReplayBounds } from './check-bounds.js';
import { readInOffsetOrder } from './read-in-offset-order.js';
import { alreadyReplayed, type Checkpoint } from '../records/replay-source.js';

export interface ReplayOptions {
  kafka: KafkaConnection;
  table: LoadedTable;
  toTopic: string;
  /** @default 'same' */
  partitioning?: Partitioning;
  filter?: Expression;
  bounds?: ReplayBounds;
  /** After the rows, the source topics' records past the table's committed offsets, until aborted. */
  follow?: boolean;
  idempotent?: boolean;
  /** Records per send. @default 500 */
  batchSize?: number;
  signal: AbortSignal;
  /** The value of a row's record: the row without `_kafka` (the caller owns the JSON format). */
  formatValue: (row: Row) => Uint8Array;
  onStart?: (info: { partitions: number; rowsInFiles: number }) => void;
  onSent?: (sent: SentBatch, progress: ReplayProgress) => void;
}

export interface SentBatch {
  source: { topic: string; partition: number; first: bigint; last: bigint };
  targets: number[];
  records: number;
  live: boolean;
}

export interface ReplayProgress {
  sent: number;
  /** Rows of the selected files (before deletes, filter and skips): what the percentage is of. */
  toSend: number;
}

export interface SourceRange {
  topic: string;
  partition: number;
  first: bigint;
  last: bigint;
  records: number;
}

export interface ReplaySummary {
  /** Target partition → records produced by this run. */
  perTarget: Map<number, number>;
  /** Per source partition, the offsets this run produced (table rows and followed records). */
  sources: SourceRange[];
  /** Selected rows (and followed records) the target already held. */
  skipped: number;
  rows: number;
  followed: number;
  stoppedBy: 'done' | 'signal';
}

interface Pending {
  lineage: RowLineage;
  row: Row;
  target: number;
}

/**
 * Runs a replay to the end of the table's rows (and, with `follow`, until the signal aborts).
 * @throws ValidationError for a table without lineage, `same` partitioning into too few partitions, or
 *   offset bounds that select nothing or name what the table does not hold (check-bounds.ts)
 * @throws LakeError (retryable) when producing fails: rerun to continue
 */
export async function runReplay(options: ReplayOptions): Promise<ReplaySummary> {
  const partitioning = options.partitioning ?? 'same';
  const batchSize = options.batchSize ?? 500;
  const targetOffsets = await fetchWatermarks(options.kafka, [options.toTopic]);
  const partitionCount = targetOffsets.length;
  if (partitionCount === 0) throw new ValidationError(`topic ${options.toTopic} has no partitions`);
  const committed = readCommittedOffsets(options.table.metadata);
  if (options.bounds) checkReplayBounds(options.bounds, committed);
  refuseMixedEpochs(options);
  if (partitioning === 'same') {
    // Fail before anything is sent, not at the first row of a partition the target lacks.
    for (const partitions of committed.values()) {
      for (const p of partitions.keys())
        targetPartition('same', { partition: p, key: null }, partitionCount, keyPartition);
    }
  }
  const checkpoints: Map<number, Checkpoint> = await readTargetCheckpoints(
    options.kafka,
    options.toTopic,
    targetOffsets,
  );

  const summary: ReplaySummary = {
    perTarget: new Map(),
    sources: [],
    skipped: 0,
    rows: 0,
    followed: 0,
    stoppedBy: 'done',
  };
  const sources = new Map<string, SourceRange>();
  const plan = await planScan(options.table, { filter: options.filter });
  // An estimate for the progress line: the selected files' rows, before deletes and the row filter.
  const inFiles = plan.tasks.reduce((n, t) => n + Number(t.file.record_count), 0);
  const progress: ReplayProgress = { sent: 0, toSend: inFiles };
  options.onStart?.({ partitions: partitionCount, rowsInFiles: inFiles });
  // What the target held at the start (checkpoints advance as batches land; a copy of the map is
  // stable because advancing replaces its entries).
  const atStart = new Map(checkpoints);
  const select = (row: Row): Pending | undefined => {
    const lineage = lineageOf(row);
    if (options.bounds && !withinBounds(lineage, options.bounds)) return undefined;
    const target = targetPartition(partitioning, lineage, partitionCount, keyPartition);
    if (alreadyReplayed(atStart.get(target), lineage)) {
      summary.skipped++;
      return undefined;
    }
    return { lineage, row, target };
  };

  const producer = await createReplayProducer(options.kafka, options.toTopic, {
    idempotent: options.idempotent,
  });
  const sendBatch = async (batch: ReplayRecord[], live: boolean) => {
    const after = stampCheckpoints(batch, checkpoints);
    await producer.send(batch);
    // Only now does the target hold the batch: the in-memory checkpoints follow what landed.
    for (const [partition, checkpoint] of after) checkpoints.set(partition, checkpoint);
    for (const r of batch) {
      summary.perTarget.set(r.partition, (summary.perTarget.get(r.partition) ?? 0) + 1);
      const k = sourceKey(r.source.topic, r.source.partition);
      const range = sources.get(k);
      if (range) {
        range.last = r.source.offset;
        range.records++;
      } else {
        sources.set(k, { ...r.source, first: r.source.offset, last: r.source.offset, records: 1 });
      }
    }
    if (live) summary.followed += batch.length;
    else summary.rows += batch.length;
    progress.sent += live ? 0 : batch.length;
    const first = batch[0].source;
    options.onSent?.(
      {
        source: {
          topic: first.topic,
          partition: first.partition,
          first: first.offset,
          last: batch.at(-1)!.source.offset,
        },
        targets: [...new Set(batch.map((r) => r.partition))].sort((a, b) => a - b),
        records: batch.length,
        live,
      },
      progress,
    );
  };

  try {
    outer: for await (const groups of readInOffsetOrder(options.table, plan, options.filter, select)) {
      for (const group of groups) {
        for (let i = 0; i < group.rows.length; i += batchSize) {
          if (options.signal.aborted) break outer;
          const batch = group.rows
            .slice(i, i + batchSize)
            .map((r) => buildRecord(r.lineage, r.target, options.formatValue(r.row)));
          await sendBatch(batch, false);
        }
      }
    }
    if (options.follow && !options.signal.aborted) {
      await followSources(options, committed, partitioning, partitionCount, checkpoints, sendBatch, summary);
    }
    if (options.signal.aborted) summary.stoppedBy = 'signal';
  } finally {
    await producer.disconnect();
  }
  summary.sources = [...sources.values()];
  return summary;
}

/**
 * The source topics' records past the table: per partition from the first offset after the table's
 * last committed range (a partition the table never saw: from its low watermark), as they are, with a
 * `floe-source` header. Records the target already holds (a restarted follow) are skipped.
 */
async function followSources(
  options: ReplayOptions,
  committed: ReturnType<typeof readCommittedOffsets>,
  partitioning: Partitioning,
  partitionCount: number,
  checkpoints: Map<number, Checkpoint>,
  sendBatch: (batch: ReplayRecord[], live: boolean) => Promise<void>,
  summary: ReplaySummary,
): Promise<void> {
  const ranges = (await fetchWatermarks(options.kafka, [...committed.keys()])).map((w) => {
    const last = committed.get(w.topic)?.get(w.partition)?.at(-1)?.[1];
    return { topic: w.topic, partition: w.partition, start: last === undefined ? w.low : last + 1n };
  });
  if (ranges.length === 0) return;
  await readRanges({
    kafka: options.kafka,
    ranges,
    signal: options.signal,
    onRecords: async (records: ReadRecord[]) => {
      const batch: ReplayRecord[] = [];
      for (const r of records) {
        const lineage: RowLineage = {
          topic: r.topic,
          partition: r.partition,
          offset: r.offset,
          key: r.key,
          timestampMs: r.timestampMs,
          headers: r.headers,
        };
        const target = targetPartition(partitioning, lineage, partitionCount, keyPartition);
        if (alreadyReplayed(checkpoints.get(target), lineage)) {
          summary.skipped++;
          continue;
        }
        batch.push(buildRecord(lineage, target, r.value));
      }
      for (let i = 0; i < batch.length; i += options.batchSize ?? 500) {
        await sendBatch(batch.slice(i, i + (options.batchSize ?? 500)), true);
      }
    },
  });
}

/**
 * A replay orders and bounds rows by their source offsets; after `floe rebase-offsets` the same offsets
 * of a partition can name records of two epochs, so a span holding both is refused, not mixed.
 * @throws ValidationError naming the topic-partitions and epochs
 */
function refuseMixedEpochs(options: ReplayOptions): void {
  const state = readCommittedState(options.table.metadata);
  const mixed = mixedEpochs(
    state.offsets,
    state.epochs,
    options.bounds?.fromOffsets,
    options.bounds?.toOffsets,
  );
  if (mixed.length === 0) return;
  const where = mixed.map((m) => `${m.topic}/${m.partition} (epochs ${m.epochs.join(', ')})`).join(', ');
  throw new ValidationError(
    `the requested offsets hold rows of more than one offset epoch in ${where}: floe rebase-offsets started ` +
      'a new epoch there, so one offset can name two records. Bound the replay (--from-offsets/--to-offsets) ' +
      'to offsets that only one epoch holds; nothing was produced',
  );
}
