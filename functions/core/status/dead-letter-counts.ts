/**
 * The dead letters of a table counted by stage (records/dead-letters.ts: decode, map, schema, write,
 * duplicate, late), with the most frequent reasons of each, and how many `floe dlq redrive` already
 * took back into the table (`floe.redriven-offsets` of the table's summary). Reads six small columns of
 * the dead-letter table (topic, partition, offset, stage, error, target_table), never the record bytes.
 */
import type { LoadedTable } from '../catalog/catalog.js';
import { planScan } from '../scan/plan-scan.js';
import { readScan } from '../scan/read-scan.js';
import { currentSchema } from '../spec/metadata.js';
import type { Row, StructType, TableMetadata } from '../spec/types.js';
import { containsOffset, decodeOffsetRanges, type OffsetRanges } from '../table/offset-ranges.js';
import { findInAncestry, REDRIVEN_KEY } from '../table/source-offsets.js';

const COLUMNS = ['topic', 'partition', 'offset', 'stage', 'error', 'target_table'] as const;
/** Reasons kept per stage: enough to say what went wrong, few enough to print. */
const REASONS_PER_STAGE = 3;

export interface StageCount {
  stage: string;
  /** Dead letters of this stage for the table. */
  count: number;
  /** Of those, already redriven into the table. */
  redriven: number;
  /** The most frequent error texts, most frequent first (at most 3). */
  reasons: { reason: string; count: number }[];
}

export interface DeadLetterCounts {
  total: number;
  redriven: number;
  byStage: StageCount[];
}

/**
 * Folds dead-letter rows into counts as they stream by (rows of other target tables left out).
 * @throws whatever iterating `rows` throws
 */
export async function countDeadLetters(
  rows: AsyncIterable<Row> | Iterable<Row>,
  target: string,
  redriven: OffsetRanges,
): Promise<DeadLetterCounts> {
  const stages = new Map<string, { count: number; redriven: number; reasons: Map<string, number> }>();
  let total = 0;
  let done = 0;
  for await (const row of rows) {
    if (row.target_table !== undefined && row.target_table !== null && row.target_table !== target) continue;
    const stage = typeof row.stage === 'string' ? row.stage : 'unknown';
    const s = stages.get(stage) ?? { count: 0, redriven: 0, reasons: new Map<string, number>() };
    stages.set(stage, s);
    s.count++;
    total++;
    const reason = typeof row.error === 'string' ? row.error : '';
    s.reasons.set(reason, (s.reasons.get(reason) ?? 0) + 1);
    const { topic, partition, offset } = row;
    if (
      typeof topic === 'string' &&
      typeof partition === 'number' &&
      typeof offset === 'bigint' &&
      containsOffset(redriven, topic, partition, offset)
    ) {
      s.redriven++;
      done++;
    }
  }
  const byStage = [...stages]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([stage, s]) => ({
      stage,
      count: s.count,
      redriven: s.redriven,
      reasons: [...s.reasons]
        .sort(([ra, a], [rb, b]) => b - a || (ra < rb ? -1 : ra > rb ? 1 : 0))
        .slice(0, REASONS_PER_STAGE)
        .map(([reason, count]) => ({ reason, count })),
    }));
  return { total, redriven: done, byStage };
}

/** The table's redriven offsets; a summary that does not read counts as none redriven. Never throws. */
export function redrivenOffsets(metadata: TableMetadata): OffsetRanges {
  const text = findInAncestry(metadata, REDRIVEN_KEY);
  if (text === undefined) return new Map();
  try {
    return decodeOffsetRanges(text, REDRIVEN_KEY);
  } catch {
    return new Map();
  }
}

/**
 * Counts the dead letters `dlq` holds for `target` (the table's `NS.NAME`), reading only the columns
 * named in the file comment (those of them the dead-letter table has).
 * @throws NotFoundError / TransientIOError / ValidationError from reading the table's manifests and files
 */
export async function readDeadLetterCounts(
  dlq: LoadedTable,
  target: string,
  redriven: OffsetRanges,
): Promise<DeadLetterCounts> {
  const schema = currentSchema(dlq.metadata);
  const projection: StructType = {
    type: 'struct',
    fields: schema.fields.filter((f) => (COLUMNS as readonly string[]).includes(f.name)),
  };
  const plan = await planScan(dlq);
  return countDeadLetters(readScan(dlq, plan, { schema: projection }), target, redriven);
}
