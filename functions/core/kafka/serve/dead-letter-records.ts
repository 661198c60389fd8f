/**
 * A table's dead letters as the records they were: the DLQ table (records/dead-letters.ts) keeps each
 * failed record's topic, partition, offset, timestamp, key, value bytes and headers as they came, so
 * kafka-serve can serve them at their own offsets and a consumer reading the table's committed ranges
 * sees every record, not holes where mapping failed. Only letters whose `target_table` is the served
 * table count (a DLQ table may be shared by routes).
 *
 * The DLQ table is loaded again whenever the served table has moved: a batch commits its letters before
 * its rows (ingest/commit-dead-letters.ts), so a DLQ loaded after the main table holds every letter of
 * the main table's committed ranges.
 */
import type { LoadedTable } from '../../catalog/catalog.js';
import { formatIdentifier } from '../../catalog/catalog.js';
import { NoSuchTableError } from '../../errors.js';
import { dlqIdentifier } from '../../records/dead-letters.js';
import type { Expression } from '../../scan/expression.js';
import { planScan } from '../../scan/plan-scan.js';
import { readScan } from '../../scan/read-scan.js';
import type { FileScanTask, ScanPlan } from '../../scan/scan-plan.js';
import { currentSnapshot } from '../../spec/metadata.js';
import type { Row, TableIdentifier } from '../../spec/types.js';
import type { ColdRecord } from './record-batches.js';
import { rangeFilter } from './table-records.js';

/** Letters cached over all DLQ files (they are few next to a table's rows). */
export const CACHED_LETTERS = 50_000;

export class DeadLetterRecords {
  private readonly dlqs = new Map<string, { at: string; dlq: Promise<LoadedTable | undefined> }>();
  private readonly cache = new Map<string, ColdRecord[]>();
  private cached = 0;

  /**
   * @param loadTable the catalog's loadTable
   * @param dlqOf the DLQ table of a served table @default `<table>__dlq`
   */
  constructor(
    private readonly loadTable: (id: TableIdentifier) => Promise<LoadedTable>,
    private readonly dlqOf: (table: TableIdentifier) => TableIdentifier = (t) => dlqIdentifier(t),
    private readonly maxCached = CACHED_LETTERS,
  ) {}

  /** The DLQ table as of `table`'s version, or undefined when there is none. */
  private dlqFor(table: LoadedTable): Promise<LoadedTable | undefined> {
    const name = formatIdentifier(table.identifier);
    const had = this.dlqs.get(name);
    if (had && had.at === table.metadataLocation) return had.dlq;
    const dlq = this.loadTable(this.dlqOf(table.identifier)).catch((error: unknown) => {
      if (error instanceof NoSuchTableError) return undefined;
      this.dlqs.delete(name);
      throw error;
    });
    this.dlqs.set(name, { at: table.metadataLocation, dlq });
    return dlq;
  }

  /**
   * The dead letters of `table` from `topic`/`partition` with offsets in [from, to], in offset order
   * (each offset once).
   * @throws ValidationError / TransientIOError from loading, planning and reading the DLQ table
   */
  async read(
    table: LoadedTable,
    topic: string,
    partition: number,
    from: bigint,
    to: bigint,
  ): Promise<ColdRecord[]> {
    const dlq = await this.dlqFor(table);
    const snapshot = dlq && currentSnapshot(dlq.metadata);
    if (!dlq || !snapshot || to < from) return [];
    const target = formatIdentifier(table.identifier);
    const filter = rangeFilter(topic, partition, from, to, '');
    const plan = await planScan(dlq, { filter, snapshotId: snapshot['snapshot-id'] });
    const out: ColdRecord[] = [];
    for (const task of plan.tasks) {
      const letters = await this.fileLetters(dlq, plan, task, target, topic, partition);
      for (const r of letters) if (r.offset >= from && r.offset <= to) out.push(r);
    }
    out.sort((a, b) => (a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0));
    return out.filter((r, i) => i === 0 || r.offset !== out[i - 1].offset);
  }

  private async fileLetters(
    dlq: LoadedTable,
    plan: ScanPlan,
    task: FileScanTask,
    target: string,
    topic: string,
    partition: number,
  ): Promise<ColdRecord[]> {
    const key = [plan.snapshotId, task.file.file_path, target, topic, partition].join('\u0000');
    const hit = this.cache.get(key);
    if (hit) {
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit;
    }
    const filter: Expression = {
      op: 'and',
      left: { op: 'eq', term: 'target_table', value: target },
      right: {
        op: 'and',
        left: { op: 'eq', term: 'topic', value: topic },
        right: { op: 'eq', term: 'partition', value: partition },
      },
    };
    const letters: ColdRecord[] = [];
    for await (const row of readScan(dlq, { ...plan, tasks: [task] }, { filter })) {
      const letter = letterRecord(row);
      if (letter) letters.push(letter);
    }
    this.cache.set(key, letters);
    this.cached += letters.length;
    for (const [k, v] of this.cache) {
      if (this.cached <= this.maxCached || k === key) break;
      this.cache.delete(k);
      this.cached -= v.length;
    }
    return letters;
  }
}

/**
 * A DLQ row as the record it was: its own bytes, µs timestamp back to ms. A row without an integer
 * offset (a DLQ table someone else altered) has no place in the timeline: undefined.
 */
function letterRecord(row: Row): ColdRecord | undefined {
  const place = placeInTimeline(row);
  if (!place) return undefined;
  const bytes = (v: unknown) => (v instanceof Uint8Array ? Buffer.from(v) : null);
  return {
    ...place,
    key: bytes(row.key),
    value: bytes(row.value),
    headers: (Array.isArray(row.headers) ? (row.headers as (Row | null)[]) : [])
      .filter((h): h is Row => h !== null && typeof h === 'object' && typeof h.key === 'string')
      .map((h) => ({ key: h.key as string, value: bytes(h.value) })),
  };
}

/**
 * A row's `offset` and its µs `timestamp` as ms (-1 when it has none), the fields a DLQ row and a
 * `_kafka` struct share; undefined without an integer offset. Never throws.
 */
export function placeInTimeline(row: Row): { offset: bigint; timestampMs: bigint } | undefined {
  const { offset, timestamp: micros } = row;
  if (typeof offset !== 'bigint' && !Number.isSafeInteger(offset)) return undefined;
  return {
    offset: BigInt(offset as bigint | number),
    timestampMs:
      typeof micros === 'bigint' || Number.isSafeInteger(micros)
        ? BigInt(micros as bigint | number) / 1000n
        : -1n,
  };
}
