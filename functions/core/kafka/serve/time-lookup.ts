/**
 * ListOffsets by time over the cold part: Kafka answers a timestamp T with the earliest offset whose
 * record timestamp is ≥ T (and that record's timestamp). Timestamps need not rise with offsets, so this
 * is the smallest matching offset, not the first match of a binary search. The scan is filtered on
 * `_kafka.topic`/`partition`/`offset`/`timestamp`, so files and row groups whose statistics cannot hold
 * a match are never read, and only those four `_kafka` columns are decoded. Files are read in the order
 * of their `_kafka.offset` lower bounds and reading stops once no unread file can hold a smaller offset.
 * Dead letters (the DLQ table's records at their own offsets) count too: they are read through
 * TableRecords.letters, whose files are cached, and are few next to the table's rows.
 */
import type { LoadedTable } from '../../catalog/catalog.js';
import { KAFKA_FIELD } from '../../records/kafka-lineage.js';
import type { Expression } from '../../scan/expression.js';
import { pruneStruct } from '../../scan/read-columns.js';
import { readScan } from '../../scan/read-scan.js';
import { currentSchema } from '../../spec/metadata.js';
import { isRow, type StructType } from '../../spec/types.js';
import { placeInTimeline } from './dead-letter-records.js';
import { rangeFilter, type TableRecords } from './table-records.js';

/** An offset and its record's timestamp (ms since the epoch, -1 when it has none). */
export interface TimeAnswer {
  offset: bigint;
  timestampMs: bigint;
}

/** The largest ms timestamp whose µs still fit a long: above it no stored timestamp can be ≥ T. */
const MAX_MS = 9_223_372_036_854_775n;

/**
 * The smallest offset of `topic`/`partition` below `below` whose record timestamp is ≥ `timestampMs`,
 * among the table's rows at its current snapshot and its dead letters; undefined when none has one.
 * @throws ValidationError / TransientIOError / NotFoundError from planning and reading the scans
 */
export async function firstAtOrAfter(
  records: TableRecords,
  table: LoadedTable,
  topic: string,
  partition: number,
  below: bigint,
  timestampMs: bigint,
): Promise<TimeAnswer | undefined> {
  if (below <= 0n || timestampMs > MAX_MS) return undefined;
  const from = timestampMs < 0n ? 0n : timestampMs;
  let best = await fromRows(records, table, topic, partition, below, from);
  const letters = await records.letters(table, topic, partition, 0n, below - 1n);
  for (const l of letters)
    if (l.timestampMs >= from && (!best || l.offset < best.offset))
      best = { offset: l.offset, timestampMs: l.timestampMs };
  return best;
}

async function fromRows(
  records: TableRecords,
  table: LoadedTable,
  topic: string,
  partition: number,
  below: bigint,
  timestampMs: bigint,
): Promise<TimeAnswer | undefined> {
  const schema = currentSchema(table.metadata);
  const lineage = schema.fields.find((f) => f.name === KAFKA_FIELD);
  if (!lineage || typeof lineage.type === 'string' || lineage.type.type !== 'struct') return undefined;
  const ids = new Set(
    lineage.type.fields
      .filter((f) => ['topic', 'partition', 'offset', 'timestamp'].includes(f.name))
      .map((f) => f.id),
  );
  // Without a timestamp column no row can answer; the letters still may.
  if (!lineage.type.fields.some((f) => f.name === 'timestamp')) return undefined;
  const filter: Expression = {
    op: 'and',
    left: rangeFilter(topic, partition, 0n, below - 1n),
    right: { op: 'gt-eq', term: `${KAFKA_FIELD}.timestamp`, value: timestampMs * 1000n },
  };
  const planned = await records.plan(table, topic, partition, 0n, below - 1n, filter);
  if (!planned) return undefined;
  const projection: StructType = pruneStruct({ type: 'struct', fields: [lineage] }, ids);
  let best: TimeAnswer | undefined;
  for (const file of planned.files) {
    // Files are in lower-bound order: none from here on holds an offset below the best found.
    if (best && file.lower >= best.offset) break;
    const plan = { ...planned.plan, tasks: [file.task] };
    for await (const row of readScan(table, plan, { filter, schema: projection })) {
      const lineage = row[KAFKA_FIELD];
      const found = isRow(lineage) ? placeInTimeline(lineage) : undefined;
      if (found && (!best || found.offset < best.offset)) best = found;
    }
  }
  return best;
}
