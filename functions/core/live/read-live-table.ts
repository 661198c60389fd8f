/**
 * The merged view of one table: the table at its current snapshot S (the coldset, read
 * by floe's own scan: deletes applied, the filter pruning files) plus the hotset — every record of the
 * route's topics outside S's committed offset ranges, up to the high watermarks at read time, mapped
 * through the table's own route. Append tables: union; CDC tables: the tail's collapsed changes over
 * the cold rows. Nothing is committed by reading.
 */
import type { KafkaConnection } from '../kafka/kafka-client.js';
import type { Catalog, LoadedTable } from '../catalog/catalog.js';
import type { TableRoute } from '../routing/routes.js';
import { bindExpression } from '../scan/bind-expression.js';
import { evaluateRow } from '../scan/evaluate-row.js';
import type { Expression } from '../scan/expression.js';
import { planScan } from '../scan/plan-scan.js';
import { readScanRows } from '../scan/read-scan.js';
import type { ScanPlan } from '../scan/scan-plan.js';
import type { Row, Schema, TableIdentifier } from '../spec/types.js';
import type { LiveFreshness } from './freshness.js';
import type { IdentityMismatch } from './identity-check.js';
import type { LeftOut } from './map-hotset.js';
import { overlayChanges, unionRows } from './overlay-changes.js';
import { type HotPartition, readHotset } from './read-hotset.js';

export interface ReadLiveTableOptions {
  catalog: Catalog;
  table: TableIdentifier;
  /** The table's own route (topics, format, mapping, `when`, mode). */
  route: TableRoute;
  kafka: KafkaConnection;
  where?: Expression;
  /** Passed to the Kafka read. @default 30,000 ms */
  timeoutMs?: number;
  /** The table as already loaded (its current snapshot is S). @default loaded from the catalog */
  loaded?: LoadedTable;
}

export interface LiveReport {
  snapshotId: bigint | null;
  mode: string;
  cold: { files: number; rows: number };
  hot: {
    records: number;
    /** Rows the hotset adds to the view (after the filter). */
    rows: number;
    /** CDC: cold rows a hot change replaced or deleted. */
    replaced: number;
    partitions: HotPartition[];
  };
  leftOut: LeftOut;
  /** Schema changes the tail brings to the view (the table is not changed); empty when none. */
  schemaChanges: string;
  /** The tail's newest record time and the offsets read up to. */
  freshness: LiveFreshness;
  warnings: string[];
}

export interface LiveTable {
  table: LoadedTable;
  /** The view's schema: the table's, evolved for the tail when it needs new columns. */
  schema: Schema;
  rows: Row[];
  plan: ScanPlan;
  report: LiveReport;
}

/** A warning per partition the table's committed ranges do not cover on this broker. */
export function identityWarnings(mismatches: readonly IdentityMismatch[]): string[] {
  return mismatches.map(
    (m) =>
      `${m.topic}/${m.partition}: the broker's records are not those the table committed (${m.reason}); ` +
      'shown as the tail. The topic was recreated or the cluster replaced: see `floe rebase-offsets`',
  );
}

/**
 * @throws NoSuchTableError for a table the catalog does not have
 * @throws ValidationError for a filter that does not bind, or a route that does not fit the table
 * @throws LakeError (retryable) when Kafka does not answer in time; Error from kafkajs (retrying may help)
 */
export async function readLiveTable(options: ReadLiveTableOptions): Promise<LiveTable> {
  const table = options.loaded ?? (await options.catalog.loadTable(options.table));
  // S is fixed before Kafka is read: whatever commits afterwards is outside S's ranges and comes from
  // Kafka, so every record shows exactly once (from the table or from the tail).
  const hot = await readHotset({
    table,
    route: options.route,
    kafka: options.kafka,
    timeoutMs: options.timeoutMs,
  });
  const filter = options.where;
  const plan = await planScan(table, { filter });
  const cold = await readScanRows(table, plan, { filter });
  const schema = hot.mapped.schema;
  const bound = filter ? bindExpression(filter, schema) : undefined;
  const keep = bound ? (row: Row) => evaluateRow(bound, row) : undefined;
  const merged =
    hot.mapped.mode === 'append'
      ? unionRows(cold, hot.mapped.rows, keep)
      : overlayChanges(cold, hot.mapped.finals, hot.mapped.key, keep);
  return {
    table,
    schema,
    rows: merged.rows,
    plan,
    report: {
      snapshotId: hot.snapshotId,
      mode: hot.mapped.mode,
      cold: { files: plan.tasks.length, rows: cold.length },
      hot: {
        records: hot.records,
        rows: merged.added,
        replaced: merged.replaced,
        partitions: hot.partitions,
      },
      leftOut: hot.mapped.leftOut,
      schemaChanges: hot.mapped.schemaChanges,
      freshness: hot.freshness,
      warnings: [...identityWarnings(hot.identityMismatches), ...hot.mapped.warnings],
    },
  };
}
