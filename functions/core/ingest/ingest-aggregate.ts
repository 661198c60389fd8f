/**
 * One aggregate table's share of a Kafka batch, exactly once (ingest/commit-batch.ts):
 *   records → decoded, taken by `when` and mapped like any route's (the rows an append would write,
 *   against the route's record schema) → WHERE (scan/evaluate-row.ts) → records for windows the
 *   watermark already closed are dead letters (stage `late`) → partial windows → merged with the
 *   committed rows of the windows they touch and of the windows the new watermark closes (a pruned
 *   scan: window_start / window_end / window_closed) → the changed rows, with position deletes for
 *   the rows they replace (equality deletes under `floe.delete-mode=equality`; cdc/write-changes.ts), in ONE snapshot holding the batch's offset ranges,
 *   the per-partition event times and the watermark.
 * The merge reads the base it commits on: when another writer (another partition's batch) commits
 * first, the files are dropped and the batch is merged again on the new base (a stale base), so two
 * partitions feeding one window add up; a replayed batch finds its offsets committed and changes nothing.
 */
import type { LoadedTable } from '../catalog/catalog.js';
import { formatIdentifier } from '../catalog/catalog.js';
import { planDeleteScope, sameScope } from '../cdc/delete-scope.js';
import { resolveCdcSettings } from '../routing/table-mode.js';
import { writeChanges } from '../cdc/write-changes.js';
import { readIngestProperties } from '../spec/table-properties.js';
import { LakeError, ValidationError } from '../errors.js';
import { splitDuplicates } from '../ingest/batch-offsets.js';
import { type BaseCheck, commitBatch } from '../ingest/commit-batch.js';
import { commitDeadLetters } from '../ingest/commit-dead-letters.js';
import type { IngestTableOptions, TableBatch } from '../ingest/table-batch.js';
import { baseReport, type TableIngestReport } from '../ingest/table-report.js';
import type { DeadLetter } from '../records/dead-letters.js';
import { decodeFor } from '../routing/decode-for-route.js';
import type { RawRecord } from '../records/esm-event.js';
import { loadOrCreateTable } from '../ingest/load-or-create-table.js';
import { mapBatch } from '../mapping/map-batch.js';
import { DEFAULT_MAPPING } from '../mapping/mapping-config.js';
import type { TableRoute } from '../routing/routes.js';
import { selectForRoute } from '../routing/select-for-route.js';
import { evaluateRow } from '../scan/evaluate-row.js';
import { tupleKey } from '../scan/value-key.js';
import { currentSchema, currentSnapshot, newTableMetadata } from '../spec/metadata.js';
import type { Row, TableMetadata } from '../spec/types.js';
import type { CommittedState } from '../table/source-offsets.js';
import type { AggregateConfig } from '../sql/aggregate-config.js';
import { readTouchedWindows } from '../aggregate/read-windows.js';
import {
  advanceEventTimes,
  computeWatermark,
  encodeEventTimes,
  EVENT_TIMES_KEY,
  type EventTimes,
  isClosed,
  readEventTimes,
  WATERMARK_KEY,
} from '../aggregate/watermark.js';
import { mergeWindows, partialWindows, windowKey, windowStartOf } from '../aggregate/window-state.js';

export interface AggregateIngestReport extends TableIngestReport {
  windowsUpdated: number;
  windowsClosed: number;
  lateRecords: number;
  /** Rows of the windows this batch's snapshot closed (for emit), in window order. */
  closed: Row[];
}

/** The route floe creates the result table with: an upsert table keyed by GROUP BY + window_start. */
export function resultRoute(route: TableRoute, aggregate: AggregateConfig): TableRoute {
  return {
    table: route.table,
    topics: route.topics,
    schema: aggregate.plan.resultSchema,
    partitionBy: route.partitionBy,
    kafkaLineage: false,
    mode: 'upsert',
    identifierColumns: [...aggregate.plan.query.groupBy, 'window_start'],
    properties: { ...route.properties, 'floe.aggregate.sql': aggregate.sql },
  };
}

/** @throws ValidationError when the table was made for another query (its columns differ) */
function checkTableFits(table: LoadedTable, aggregate: AggregateConfig, name: string): void {
  const have = currentSchema(table.metadata).fields.map((f) => `${f.name}:${JSON.stringify(f.type)}`);
  const want = aggregate.plan.resultSchema.fields.map((f) => `${f.name}:${JSON.stringify(f.type)}`);
  if (have.join() !== want.join()) {
    throw new ValidationError(
      `${name}: the table's columns (${have.join(', ')}) are not the ones this query produces (${want.join(', ')}); a changed query needs a new table`,
    );
  }
}

const sourceMetadata = new WeakMap<AggregateConfig, TableMetadata>();

/** Metadata holding only the record schema: what the mapping maps against (nothing is written to it). */
function sourceMetadataOf(aggregate: AggregateConfig): TableMetadata {
  let md = sourceMetadata.get(aggregate);
  if (!md) {
    md = newTableMetadata({
      location: 'memory://aggregate-source',
      schema: aggregate.plan.sourceSchema,
      uuid: '00000000-0000-0000-0000-000000000000',
      nowMs: 0,
    });
    sourceMetadata.set(aggregate, md);
  }
  return md;
}

interface Accepted {
  record: RawRecord;
  row: Row;
  eventTime: bigint;
}

/** The newest event time per partition of the rows. */
function batchEventTimes(rows: readonly Accepted[]): EventTimes {
  const out: EventTimes = new Map();
  for (const { record, eventTime } of rows) {
    const parts = out.get(record.topic) ?? new Map<number, bigint>();
    const seen = parts.get(record.partition);
    if (seen === undefined || eventTime > seen) parts.set(record.partition, eventTime);
    out.set(record.topic, parts);
  }
  return out;
}

/**
 * Mapped rows → rows the aggregate takes (WHERE held, event time and group columns set) and dead
 * letters for the rest that cannot count: no event time, a null group column.
 */
function acceptRows(aggregate: AggregateConfig, rows: readonly Row[], used: readonly RawRecord[]) {
  const { plan, where } = aggregate;
  const accepted: Accepted[] = [];
  const timed: Accepted[] = [];
  const letters: DeadLetter[] = [];
  rows.forEach((row, i) => {
    const record = used[i];
    const time = row[plan.query.window.column];
    if (typeof time !== 'bigint') {
      letters.push({
        record,
        stage: 'map',
        error: `the event-time column ${plan.query.window.column} is null`,
      });
      return;
    }
    // Every record with an event time moves its partition's clock, whether the query counts it or not.
    timed.push({ record, row, eventTime: time });
    // Rows WHERE does not take are not part of the aggregate; their offsets still commit.
    if (where && !evaluateRow(where, row)) return;
    const nullGroup = plan.query.groupBy.find((c) => row[c] === null || row[c] === undefined);
    if (nullGroup !== undefined) {
      letters.push({
        record,
        stage: 'map',
        error: `the group column ${nullGroup} is null (it is part of the result key)`,
      });
      return;
    }
    accepted.push({ record, row, eventTime: time });
  });
  return { accepted, timed, letters };
}

function lateLetter(a: Accepted, end: bigint, watermark: bigint): DeadLetter {
  return {
    record: a.record,
    stage: 'late',
    error: `its window [${end}µs) ended at or before the watermark ${watermark}µs: the window is closed`,
  };
}

/** An aggregate batch planned on the first round's base (its dead letters committed). */
interface AggregatePlan {
  fresh: RawRecord[];
  /** Rows of windows still open at the watermark the batch was planned on. */
  accepted: Accepted[];
  timed: ReturnType<typeof acceptRows>['timed'];
  late: DeadLetter[];
  deadLettered: number;
}

/** What the round that committed merged, for the report and the emit. */
interface MergedWindows {
  windowsUpdated: number;
  closed: Row[];
}

/**
 * Ingests an aggregate route's records of a batch into its result table.
 * @throws ValidationError for a table made for another query
 * @throws LakeError subclasses from decoding, writing and committing; retryable ones mean "redeliver"
 */
export async function ingestAggregateTable(
  options: IngestTableOptions,
  route: TableRoute,
  aggregate: AggregateConfig,
  batchId: string,
  records: RawRecord[],
  allRoutes: readonly TableRoute[] = [route],
): Promise<AggregateIngestReport> {
  const name = formatIdentifier(route.table);
  const target = resultRoute(route, aggregate);
  const table = await loadOrCreateTable(options.catalog, target);
  checkTableFits(table, aggregate, name);
  let plan: AggregatePlan | undefined;
  const merged: MergedWindows = { windowsUpdated: 0, closed: [] };

  const outcome = await commitBatch(
    options,
    route.table,
    batchId,
    records,
    async (current, fresh, committed) => {
      if (plan === undefined) {
        const batch = { options, route, table: current, batchId, records: fresh, allRoutes };
        plan = await planAggregate(batch, aggregate, committed);
      } else if (fresh.length !== plan.fresh.length || fresh.some((r, i) => r !== plan!.fresh[i])) {
        throw new LakeError(`${name}: another writer committed some of this batch's offsets meanwhile`, {
          retryable: true,
        });
      }
      return mergeRound(name, target, aggregate, batchId, plan, merged, current);
    },
    table,
  );
  const committed = outcome.result?.status === 'committed';
  merged.closed.sort((a, b) => compareWindows(aggregate.plan.query.groupBy, a, b));
  return {
    ...baseReport(route, batchId, records, plan?.deadLettered ?? 0, outcome),
    mode: 'upsert',
    deleteFiles: committed ? (outcome.written?.deleteFiles.length ?? 0) : 0,
    equalityDeletes: committed ? (outcome.written?.equalityDeletes ?? 0) : 0,
    positionDeletes: committed ? (outcome.written?.positionDeletes ?? 0) : 0,
    windowsUpdated: committed ? merged.windowsUpdated : 0,
    windowsClosed: committed ? merged.closed.length : 0,
    lateRecords: plan?.late.length ?? 0,
    closed: committed ? merged.closed : [],
  };
}

/**
 * Decodes, maps and filters the first round's fresh records (`batch.records`, on `batch.table`), and
 * commits their dead letters (decided against the offsets the main table had not committed).
 */
async function planAggregate(
  batch: TableBatch,
  aggregate: AggregateConfig,
  committed: CommittedState,
): Promise<AggregatePlan> {
  const { options, route, table, batchId, records: fresh, allRoutes } = batch;
  const size = aggregate.plan.query.window.sizeMicros;
  const { unique, duplicates } = splitDuplicates(fresh);
  const { decoded, deadLetters: decodeLetters } = await decodeFor(route, unique);
  const selected = selectForRoute(route, allRoutes, decoded);
  // The record schema is fixed (policy dlq): a record that does not fit it is a dead letter.
  const mapped = mapBatch(selected.mine, {
    mapping: route.mapping ?? DEFAULT_MAPPING,
    metadata: sourceMetadataOf(aggregate),
    policy: 'dlq',
  });
  const {
    accepted: candidates,
    timed,
    letters: rowLetters,
  } = acceptRows(aggregate, mapped.rows, mapped.used);
  const planned = readEventTimes(table.metadata).watermark;
  const late: DeadLetter[] = [];
  const accepted = candidates.filter((a) => {
    const end = windowStartOf(a.eventTime, size) + size;
    if (!isClosed(end, planned)) return true;
    late.push(lateLetter(a, end, planned!));
    return false;
  });
  const letters = [
    ...duplicates,
    ...decodeLetters,
    ...selected.unrouted,
    ...mapped.deadLetters,
    ...rowLetters,
    ...late,
  ];
  const deadLettered = await commitDeadLetters(options, route, batchId, letters, committed.offsets);
  return { fresh, accepted, timed, late, deadLettered };
}

/**
 * One round on `current`: the batch's partial windows merged with the committed rows of the windows
 * they touch and of the windows the new watermark closes; the changed rows and their deletes written.
 */
async function mergeRound(
  name: string,
  target: TableRoute,
  aggregate: AggregateConfig,
  batchId: string,
  batch: AggregatePlan,
  merged: MergedWindows,
  current: LoadedTable,
) {
  const { plan } = aggregate;
  const size = plan.query.window.sizeMicros;
  const latenessMicros = BigInt(aggregate.allowedLatenessSeconds) * 1_000_000n;
  const { accepted, timed } = batch;
  const { times, watermark } = readEventTimes(current.metadata);
  // Late was decided against the watermark the batch was planned on; a newer one may close more.
  if (accepted.some((a) => isClosed(windowStartOf(a.eventTime, size) + size, watermark))) {
    throw new LakeError(
      `${name}: the watermark moved past some of this batch's windows while it was written`,
      {
        retryable: true,
      },
    );
  }
  const nextTimes = advanceEventTimes(times, batchEventTimes(timed));
  const nextWatermark = computeWatermark(nextTimes, latenessMicros, watermark, aggregate.partitions);
  const partials = partialWindows(
    plan,
    accepted.map((a) => a.row),
    (row) => row[plan.query.window.column] as bigint,
  );
  const starts = [...new Set([...partials.values()].map((w) => w.window_start as bigint))];
  const located = await readTouchedWindows(current, starts, nextWatermark);
  const committed = located.map((l) => l.row);
  const byKey = new Map(committed.map((row) => [windowKey(plan, row), row]));
  const changed = new Map<string, Row>();
  for (const [key, partial] of partials) {
    const existing = byKey.get(key);
    changed.set(key, existing ? mergeWindows(plan, existing, partial) : partial);
  }
  merged.closed = [];
  for (const row of [...changed.values(), ...committed]) {
    const key = windowKey(plan, row);
    const latest = changed.get(key) ?? row;
    if (latest.window_closed !== true && isClosed(latest.window_end as bigint, nextWatermark)) {
      const closing = { ...latest, window_closed: true };
      changed.set(key, closing);
      merged.closed.push(closing);
    }
  }
  merged.windowsUpdated = partials.size;
  const settings = resolveCdcSettings(
    'upsert',
    currentSchema(current.metadata),
    target,
    current.metadata.properties ?? {},
  );
  const columns = settings.key;
  const finals = [...changed].map(([key, row]) => ({
    key: { values: columns.map((c) => row[c.name] ?? null), text: key },
    row,
    deleteExisting: byKey.has(key),
  }));
  const keyIds = columns.map((c) => c.id);
  // Position deletes need no scope: the base the rows were located in is the one committed on (below).
  const byPosition = readIngestProperties(current.metadata.properties).deleteMode === 'position';
  const positions = byPosition
    ? located.map((l) => ({ file: l.file, specId: l.specId, pos: l.pos, key: windowKey(plan, l.row) }))
    : undefined;
  const deletes = !byPosition && finals.some((f) => f.deleteExisting);
  const scope = deletes ? await planDeleteScope(current, keyIds) : undefined;
  const written = await writeChanges(current, finals, columns, scope, { filePrefix: batchId, positions });
  const plannedOn = currentSnapshot(current.metadata)?.['snapshot-id'];
  return {
    ...written,
    used: batch.fresh,
    summary: {
      [EVENT_TIMES_KEY]: encodeEventTimes(nextTimes),
      ...(nextWatermark === undefined ? {} : { [WATERMARK_KEY]: String(nextWatermark) }),
    },
    checkBase: async (base: LoadedTable): Promise<BaseCheck> => {
      // The rows were merged with the base's rows: on any other base they would lose its changes.
      if (currentSnapshot(base.metadata)?.['snapshot-id'] !== plannedOn) {
        return {
          kind: 'stale',
          reason: `${name}: another batch committed windows while this one was merged`,
        };
      }
      if (!scope) return { kind: 'fits' };
      const now = await planDeleteScope(base, keyIds);
      if (!sameScope(scope, now))
        return { kind: 'stale', reason: `${name}: the partition specs changed meanwhile` };
      return { kind: 'fits', preUpdates: now.preUpdates, preRequirements: now.preRequirements };
    },
  };
}

/** Window order (start, then group values), so emits come out in a stable order. */
function compareWindows(groupBy: readonly string[], a: Row, b: Row): number {
  const sa = a.window_start as bigint;
  const sb = b.window_start as bigint;
  if (sa !== sb) return sa < sb ? -1 : 1;
  const ka = tupleKey(groupBy.map((c) => a[c] ?? null));
  const kb = tupleKey(groupBy.map((c) => b[c] ?? null));
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}
