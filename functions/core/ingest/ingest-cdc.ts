/**
 * One CDC table's share of a Kafka batch (mode `debezium` or `upsert`), exactly once like appends
 * (commit-batch.ts): records → decoded by the route's format (decode-for-route.ts) → taken by the
 * route's `when` → row images reconciled with the schema (evolution, as appends) and changes
 * extracted (cdc/plan-changes.ts; dead letters first, to the DLQ table) → collapsed per key in offset
 * order → data files for the final rows + deletes for every key the batch replaces or deletes
 * (position deletes naming the keys' live rows in the base, or equality deletes under
 * `floe.delete-mode=equality`) → one snapshot, with the schema change if any. Reading applies the deletes (merge-on-read),
 * so the table shows the source table's current state.
 */
import { formatIdentifier, type LoadedTable } from '../catalog/catalog.js';
import { collapseChanges, type KeyState } from '../cdc/collapse-changes.js';
import { lineageFields } from '../cdc/change-version.js';
import { planDeleteScope, sameScope } from '../cdc/delete-scope.js';
import { readKeyVersions } from '../cdc/key-versions.js';
import { locateReplaced, type RowLocation, type RowLocator, scanRowLocator } from '../cdc/locate-rows.js';
import { indexAfterCommit } from '../key-index/after-commit.js';
import { keyIndexEnabled } from '../key-index/index-table.js';
import { keyIndexLocator } from '../key-index/index-locator.js';
import type { KeyColumn } from '../routing/table-mode.js';
import { positionsMoved } from '../cdc/positions-hold.js';
import { readIngestProperties } from '../spec/table-properties.js';
import {
  applyLate,
  type LateOutcome,
  lateKeys,
  latePartitions,
  lateWarnings,
  partitionsAfterGap,
  replaceRowsOn,
  sameLateOffsets,
} from '../cdc/late-changes.js';
import { type ExtractedChanges, isDebeziumControl } from '../cdc/extract-changes.js';
import { type ChangePlan, planChanges } from '../cdc/plan-changes.js';
import { type CdcMode, resolveCdcSettings } from '../routing/table-mode.js';
import { writeChanges } from '../cdc/write-changes.js';
import { LakeError } from '../errors.js';
import { currentSchema, hasDataFiles } from '../spec/metadata.js';
import { type CommittedState, readCommittedOffsets } from '../table/source-offsets.js';
import { sameMappingBase, splitDuplicates } from './batch-offsets.js';
import { type BaseCheck, type BatchFiles, commitBatch } from './commit-batch.js';
import { commitDeadLetters } from './commit-dead-letters.js';
import type { DeadLetter } from '../records/dead-letters.js';
import { decodeFor } from '../routing/decode-for-route.js';
import { type EvolutionPolicy, evolutionPolicyOf } from '../mapping/evolution/evolution-policy.js';
import { describeChanges, reconciliationStillApplies } from '../mapping/evolution/reconcile-schema.js';
import type { RawRecord } from '../records/esm-event.js';
import type { DecodedRecord } from '../mapping/decoded-record.js';
import { selectForRoute } from '../routing/select-for-route.js';
import type { TableBatch } from './table-batch.js';
import { baseReport, type TableIngestReport } from './table-report.js';

interface CdcFiles extends BatchFiles {
  equalityDeletes: number;
  positionDeletes: number;
}

/** Dead letters in their records' batch order, as one pass over the records would have met them. */
function inRecordOrder(records: RawRecord[], letters: DeadLetter[]): DeadLetter[] {
  const position = new Map(records.map((r, i) => [r, i]));
  return [...letters].sort((a, b) => (position.get(a.record) ?? 0) - (position.get(b.record) ?? 0));
}

/** A CDC batch planned on the first round's base, its dead letters committed. */
interface CdcPlan {
  table: LoadedTable;
  fresh: RawRecord[];
  first: ChangePlan;
  byRecord: Map<RawRecord, DecodedRecord>;
  letters: Set<RawRecord>;
  deadLettered: number;
}

/** What the last round found, for the report once the batch committed. */
interface CdcRoundState {
  ignored: ExtractedChanges['ignored'];
  warnings: string[];
  late: Map<string, bigint>;
  lateOutcome: LateOutcome | undefined;
  /** How the batch finds the rows it deletes by position: the key index, or a scan. */
  locator: RowLocator;
  /** The key and the rows the last round located (the index step after the commit reads them). */
  columns?: KeyColumn[];
  located: readonly RowLocation[];
}

/**
 * Ingests a CDC table's records of a batch (the table is loaded; `mode` is its resolved mode).
 * @throws ValidationError when the table has no usable key (see resolveCdcSettings)
 * @throws LakeError subclasses from decoding (a registry outage), writing and committing; retryable
 *   ones mean "redeliver the batch"
 */
export async function ingestCdcTable(batch: TableBatch, mode: CdcMode): Promise<TableIngestReport> {
  const { options, route, table, batchId, records } = batch;
  const name = formatIdentifier(route.table);
  const policy = evolutionPolicyOf(table.metadata.properties, route.schemaEvolution);
  // A route that does not fit the table fails every delivery, a replay's too: checked before the records are.
  resolveCdcSettings(mode, currentSchema(table.metadata), route, table.metadata.properties ?? {});
  let plan: CdcPlan | undefined;
  const properties = table.metadata.properties ?? {};
  // Position deletes find rows through the key index (functions/core/key-index/) unless it is turned off.
  const indexed = readIngestProperties(properties).deleteMode === 'position' && keyIndexEnabled(properties);
  const locator = indexed
    ? keyIndexLocator(options.catalog, (reason, kind) => {
        if (kind === 'failed') options.onWarning?.(name, reason, 'configuration');
      })
    : scanRowLocator;
  const state: CdcRoundState = {
    ignored: {},
    warnings: [],
    late: new Map(),
    lateOutcome: undefined,
    locator,
    located: [],
  };

  const outcome = await commitBatch<CdcFiles>(
    options,
    route.table,
    batchId,
    records,
    async (current, fresh, committed) => {
      if (plan === undefined) {
        plan = await planCdc(batch, mode, policy, { current, fresh, committed });
        state.ignored = plan.first.extracted.ignored;
      }
      return writeCdcRound(batch, mode, policy, plan, state, current, fresh);
    },
    table,
  );
  const committed = outcome.result?.status === 'committed';
  if (committed && indexed && state.columns) {
    await indexAfterCommit(options.catalog, outcome.result!.table, state.columns, state.located, (problem) =>
      options.onWarning?.(name, problem, 'configuration'),
    );
  }
  let warnings = state.warnings;
  if (committed) warnings = [...warnings, ...lateWarnings(state.late, state.lateOutcome)];
  for (const warning of warnings) options.onWarning?.(name, warning, 'configuration');
  return {
    ...baseReport(route, batchId, records, plan?.deadLettered ?? 0, outcome),
    mode,
    deleteFiles: committed ? (outcome.written?.deleteFiles.length ?? 0) : 0,
    equalityDeletes: committed ? (outcome.written?.equalityDeletes ?? 0) : 0,
    positionDeletes: committed ? (outcome.written?.positionDeletes ?? 0) : 0,
    ignored: { ...state.ignored },
    warnings,
  };
}

/**
 * Decodes, routes and plans the first round's fresh records, and commits their dead letters (decided
 * against the offsets the main table had not committed: `round.committed`).
 */
async function planCdc(
  batch: TableBatch,
  mode: CdcMode,
  policy: EvolutionPolicy,
  round: { current: LoadedTable; fresh: RawRecord[]; committed: CommittedState },
): Promise<CdcPlan> {
  const { options, route, batchId, allRoutes } = batch;
  const { current, fresh } = round;
  // An offset held twice is one change, not two (the repeat is a dead letter).
  const { unique, duplicates } = splitDuplicates(fresh);
  // A registry outage throws here, before anything is dead-lettered: the batch is redelivered.
  const { decoded: all, deadLetters: decodeLetters } = await decodeFor(route, unique);
  // Changes the route's `when` does not take belong to other tables (one topic, several tables).
  // Debezium's control records (tombstones, heartbeats, transaction metadata, ...) have no row fields
  // to route by and nothing to apply: every debezium route counts them as ignored instead.
  const control = (d: DecodedRecord) => mode === 'debezium' && isDebeziumControl(d);
  const selected = selectForRoute(
    route,
    allRoutes,
    all.filter((d) => !control(d)),
  );
  const decoded = [...selected.mine, ...all.filter(control)];
  const first = planChanges(current.metadata, decoded, route, mode, policy);
  const rec = first.reconciliation;
  if (rec.changed)
    options.onWarning?.(
      formatIdentifier(route.table),
      `schema evolves: ${describeChanges(rec.changes)}`,
      'schema-change',
    );
  const deadLetters = inRecordOrder(fresh, [
    ...duplicates,
    ...decodeLetters,
    ...selected.unrouted,
    ...first.schemaLetters,
    ...first.extracted.deadLetters,
  ]);
  const deadLettered = await commitDeadLetters(options, route, batchId, deadLetters, round.committed.offsets);
  return {
    table: current,
    fresh,
    first,
    byRecord: new Map(decoded.map((d) => [d.record, d])),
    letters: new Set(deadLetters.map((l) => l.record)),
    deadLettered,
  };
}

/** The changes of a round's base: the first plan while it still fits, else planned again. */
function planFor(
  batch: TableBatch,
  mode: CdcMode,
  policy: EvolutionPolicy,
  plan: CdcPlan,
  state: CdcRoundState,
  current: LoadedTable,
  fresh: RawRecord[],
  good: RawRecord[],
): ChangePlan {
  if (sameMappingBase(current, plan.table, fresh, plan.fresh)) return plan.first;
  const again = planChanges(
    current.metadata,
    good.map((r) => plan.byRecord.get(r)!),
    batch.route,
    mode,
    policy,
  );
  if (again.schemaLetters.length > 0 || again.extracted.deadLetters.length > 0) {
    // Never drop them: fail the batch, the redelivery decides dead letters against the new schema.
    throw new LakeError(`${formatIdentifier(batch.route.table)}: the table schema changed during the batch`, {
      retryable: true,
    });
  }
  state.ignored = again.extracted.ignored;
  return again;
}

/** Writes one round's files: the final rows and the equality deletes for the keys they replace or delete. */
async function writeCdcRound(
  batch: TableBatch,
  mode: CdcMode,
  policy: EvolutionPolicy,
  plan: CdcPlan,
  state: CdcRoundState,
  current: LoadedTable,
  fresh: RawRecord[],
): Promise<CdcFiles> {
  const { batchId } = batch;
  const name = formatIdentifier(batch.route.table);
  const good = fresh.filter((r) => plan.byRecord.has(r) && !plan.letters.has(r));
  // The first round plans once; only a moved base (new schema or offsets) plans again.
  const { reconciliation, settings, extracted } = planFor(
    batch,
    mode,
    policy,
    plan,
    state,
    current,
    fresh,
    good,
  );
  const columns = settings.key;
  const collapsed = collapseChanges(extracted.changes, columns);
  state.warnings = collapsed.warnings;
  const keyIds = columns.map((c) => c.id);
  const byPosition = readIngestProperties(current.metadata.properties).deleteMode === 'position';
  // A table without data files has no older rows to delete: no equality deletes (a Debezium
  // snapshot's reads into a new table would otherwise delete every key they write; and a snapshot
  // of delete files alone is one some readers refuse). Checked again against the commit's base.
  const empty = !hasDataFiles(current.metadata);
  // Late changes cannot trust "this key is new" (a create, a snapshot read): the newer changes
  // committed first may have written the key. So every key they touch replaces its rows, and a
  // key the table holds a newer version of (same partition) keeps it (cdc/late-changes.ts).
  const plannedOffsets = readCommittedOffsets(current.metadata);
  const lateAtPlan = latePartitions(good, plannedOffsets);
  state.late = lateAtPlan;
  const lineage = lineageFields(currentSchema(current.metadata));
  state.lateOutcome = undefined;
  let kept = collapsed.finals;
  if (lateAtPlan.size > 0 && lineage) {
    const versions = await readKeyVersions(
      current,
      columns,
      lateKeys(collapsed.finals, lateAtPlan).map((f) => f.key),
      lineage,
    );
    state.lateOutcome = applyLate(collapsed.finals, versions);
    kept = state.lateOutcome.finals;
  } else if (lateAtPlan.size > 0) {
    kept = collapsed.finals.map((f) => ({ ...f, deleteExisting: true }));
  }
  // A create after a gap cannot trust "this key is new" either: an older delete may be missing.
  kept = replaceRowsOn(kept, partitionsAfterGap(good, plannedOffsets));
  // With lineage, a key a batch leaves deleted keeps its delete row even in an empty table: it is
  // the key's version, so a late batch cannot bring the key back.
  const keepsDelete = (f: KeyState) => lineage !== undefined && f.row === null;
  const finals = empty
    ? kept.map((f) => (f.deleteExisting && !keepsDelete(f) ? { ...f, deleteExisting: false } : f))
    : kept;
  const lateWhenPlanned = lateAtPlan.size > 0;
  const deletes = finals.some((f) => f.deleteExisting);
  const located =
    byPosition && deletes ? await locateReplaced(current, columns, finals, state.locator) : undefined;
  state.columns = columns;
  state.located = located?.rows ?? [];
  // Only a batch with equality deletes (or, by position on v2, key versions: write-changes.ts) needs a
  // scope (and may add the unpartitioned spec); v3 carries versions in data files of the default spec.
  const versions =
    lineage !== undefined &&
    current.metadata['format-version'] < 3 &&
    finals.some((f) => f.deleteExisting && f.row === null);
  const scope = deletes && (!byPosition || versions) ? await planDeleteScope(current, keyIds) : undefined;
  const written = await writeChanges(current, finals, columns, scope, {
    filePrefix: batchId,
    schema: reconciliation.schema,
    positions: located?.rows ?? (byPosition ? [] : undefined),
  });
  return {
    ...written,
    used: good,
    checkBase: async (base): Promise<BaseCheck> => {
      if (!reconciliationStillApplies(base.metadata, reconciliation)) {
        return { kind: 'stale', reason: `${name}: the table schema changed while the batch was written` };
      }
      const baseOffsets = readCommittedOffsets(base.metadata);
      if (!lateWhenPlanned && latePartitions(good, baseOffsets).size > 0) {
        return {
          kind: 'stale',
          reason: `${name}: newer changes were committed while the batch was written`,
        };
      }
      // The versions read for a late batch hold only for the partitions' offsets they were read at.
      if (lateWhenPlanned && !sameLateOffsets(lateAtPlan, plannedOffsets, baseOffsets)) {
        return {
          kind: 'stale',
          reason: `${name}: changes of the late batch's partitions were committed while it was written`,
        };
      }
      const moved =
        located &&
        (await positionsMoved(
          base,
          located,
          columns,
          finals.filter((f) => f.deleteExisting).map((f) => f.key),
        ));
      if (moved) return { kind: 'stale', reason: `${name}: ${moved}` };
      if (empty && hasDataFiles(base.metadata)) {
        return {
          kind: 'stale',
          reason: `${name}: rows were committed while the batch was written for an empty table`,
        };
      }
      const evolve = reconciliation.changed
        ? { preUpdates: reconciliation.updates, preRequirements: reconciliation.requirements }
        : { preUpdates: [], preRequirements: [] };
      if (!scope) return { kind: 'fits', ...evolve };
      const now = await planDeleteScope(base, keyIds);
      if (!sameScope(scope, now)) {
        return {
          kind: 'stale',
          reason: `${name}: the partition specs changed while the batch was written`,
        };
      }
      return {
        kind: 'fits',
        preUpdates: [...evolve.preUpdates, ...now.preUpdates],
        preRequirements: [...evolve.preRequirements, ...now.preRequirements],
      };
    },
  };
}
