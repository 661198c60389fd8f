/** A batch's dead letters, committed to the route's DLQ table exactly once (through commit-batch.ts). */
import { createHash } from 'node:crypto';
import { formatIdentifier } from '../catalog/catalog.js';
import { encodeOffsets, mergeOffsets, type SourceOffsets } from '../table/source-offsets.js';
import { offsetSetOf } from '../table/offset-ranges.js';
import { writeRows } from '../table/write-rows.js';
import { commitBatch } from './commit-batch.js';
import { DLQ_SCHEMA, type DeadLetter, deadLetterRow, dlqIdentifier } from '../records/dead-letters.js';
import { loadOrCreateTable } from './load-or-create-table.js';
import type { RawRecord } from '../records/esm-event.js';
import type { TableRoute } from '../routing/routes.js';
import type { IngestTableOptions } from './table-batch.js';

/**
 * Commits dead letters to the route's DLQ table (created on first use), exactly once per record.
 * The DLQ table's ranges get the letters' own offsets — not the batch's spans: a batch whose main
 * commit failed after its letters landed (a schema change during the batch) can find more letters in
 * those spans on redelivery, and they must not be taken for replays — and `mainCommitted`, the main
 * table's committed ranges as the letters were decided against them. Those are sound to record: letters
 * are only ever sought outside them (they only grow), and they keep the DLQ's ranges as compact as the
 * main table's instead of gaining a range per batch with letters.
 * The DLQ snapshot's `floe.batch-id` names the batch and the letters it holds: a redelivery of the same
 * batch that finds more letters (after the main commit failed) commits those as a change of its own —
 * under the batch's id alone it would be taken for the first delivery's commit and its letters lost.
 * @throws as commitBatch
 */
export async function commitDeadLetters(
  options: IngestTableOptions,
  route: TableRoute,
  batchId: string,
  letters: DeadLetter[],
  mainCommitted: SourceOffsets,
): Promise<number> {
  if (letters.length === 0) return 0;
  const dlqRoute: TableRoute = {
    table: dlqIdentifier(route.table, route.dlqTable),
    topics: route.topics,
    schema: DLQ_SCHEMA,
    kafkaLineage: false,
    properties: {},
  };
  const dlq = await loadOrCreateTable(options.catalog, dlqRoute);
  const target = formatIdentifier(route.table);
  const now = Date.now();
  const byRecord = new Map(letters.map((l) => [l.record, l]));
  const out = await commitBatch(
    options,
    dlqRoute.table,
    (files) => lettersBatchId(batchId, files.used),
    [...byRecord.keys()],
    async (table, fresh) => {
      const rows = fresh.map((r) => deadLetterRow(byRecord.get(r)!, target, now));
      const dataFiles = await writeRows(table, rows, { filePrefix: batchId });
      return { dataFiles, deleteFiles: [], used: fresh, rows: rows.length };
    },
    dlq,
    mergeOffsets(offsetSetOf([...byRecord.keys()]), mainCommitted),
  );
  return out.written?.rows ?? 0;
}

/** Deterministic from the batch and the offsets of the letters committed: the same letters, the same id. */
function lettersBatchId(batchId: string, letters: RawRecord[]): string {
  const offsets = encodeOffsets(offsetSetOf(letters));
  return `${batchId}-${createHash('sha256').update(offsets).digest('hex').slice(0, 16)}`;
}
