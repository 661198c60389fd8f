/**
 * The hotset's records through the table's own route, as ingestion would take them (the same decoder,
 * `when`, mapping, evolution and CDC extraction functions), but into memory only: nothing is written,
 * no dead letter is committed, the table's schema is not changed. Records ingestion would dead-letter
 * are left out and counted by their reason.
 */
import { collapseChanges, type KeyState } from '../cdc/collapse-changes.js';
import { isDebeziumControl } from '../cdc/extract-changes.js';
import { planChanges } from '../cdc/plan-changes.js';
import type { CdcMode, KeyColumn } from '../routing/table-mode.js';
import type { DeadLetter } from '../records/dead-letters.js';
import { decodeFor } from '../routing/decode-for-route.js';
import { type RawRecord, recordLabel } from '../records/esm-event.js';
import type { EvolutionPolicy } from '../mapping/evolution/evolution-policy.js';
import { describeChanges } from '../mapping/evolution/reconcile-schema.js';
import type { DecodedRecord } from '../mapping/decoded-record.js';
import { mapBatch } from '../mapping/map-batch.js';
import { DEFAULT_MAPPING } from '../mapping/mapping-config.js';
import type { TableRoute } from '../routing/routes.js';
import { selectForRoute } from '../routing/select-for-route.js';
import type { TableUpdate } from '../catalog/requirements-updates.js';
import type { Row, Schema, TableMetadata } from '../spec/types.js';

/** Records left out of the view, as ingestion would have dead-lettered them. */
export interface LeftOut {
  total: number;
  /** `stage: reason` → records (reasons name the record's value, so examples keep a few). */
  byStage: Record<string, number>;
  examples: { record: string; stage: string; error: string }[];
}

interface MappedBase {
  /** The schema of the view: the table's, or the one evolution would commit with these records. */
  schema: Schema;
  /** Schema changes the tail would bring, described (empty: none). */
  schemaChanges: string;
  /** The same as metadata updates (add-schema, set-current-schema), for a served live snapshot. */
  schemaUpdates: TableUpdate[];
  leftOut: LeftOut;
  warnings: string[];
}

export interface MappedAppend extends MappedBase {
  mode: 'append';
  rows: Row[];
}

export interface MappedChanges extends MappedBase {
  mode: CdcMode;
  /** One final state per key, in offset order of each key's first change. */
  finals: KeyState[];
  key: KeyColumn[];
}

export type MappedHotset = MappedAppend | MappedChanges;

const EXAMPLES = 5;

/** Counts dead letters by stage, with a few examples. Never throws. */
export function summarizeLeftOut(letters: readonly DeadLetter[]): LeftOut {
  const byStage: Record<string, number> = {};
  for (const l of letters) byStage[l.stage] = (byStage[l.stage] ?? 0) + 1;
  return {
    total: letters.length,
    byStage,
    examples: letters
      .slice(0, EXAMPLES)
      .map((l) => ({ record: recordLabel(l.record), stage: l.stage, error: l.error })),
  };
}

/**
 * Policy block fails a whole batch at ingestion (nothing lands until the schema is fixed); the view
 * cannot fail "the batch", so it leaves the records that need a change out, as policy dlq does.
 */
function viewPolicy(policy: EvolutionPolicy): EvolutionPolicy {
  return policy === 'block' ? 'dlq' : policy;
}

/**
 * Maps the hot records of one table (in offset order per partition).
 * @throws LakeError from decoding when the route's format needs a registry that cannot be reached
 * @throws ValidationError when the route does not fit the table (mapping, key)
 */
export async function mapHotset(
  metadata: TableMetadata,
  route: TableRoute,
  mode: 'append' | CdcMode,
  policy: EvolutionPolicy,
  records: RawRecord[],
): Promise<MappedHotset> {
  const { decoded: all, deadLetters: decodeLetters } = await decodeFor(route, records);
  const control = (d: DecodedRecord) => mode === 'debezium' && isDebeziumControl(d);
  const selected = selectForRoute(
    route,
    [route],
    all.filter((d) => !control(d)),
  );
  if (mode === 'append') {
    const mapped = mapBatch(selected.mine, {
      mapping: route.mapping ?? DEFAULT_MAPPING,
      metadata,
      policy: viewPolicy(policy),
    });
    const rec = mapped.reconciliation;
    return {
      mode,
      rows: mapped.rows,
      schema: rec.schema,
      schemaChanges: rec.changed ? describeChanges(rec.changes) : '',
      schemaUpdates: rec.changed ? rec.updates : [],
      leftOut: summarizeLeftOut([...decodeLetters, ...selected.unrouted, ...mapped.deadLetters]),
      warnings: [],
    };
  }
  const plan = planChanges(
    metadata,
    [...selected.mine, ...all.filter(control)],
    route,
    mode,
    viewPolicy(policy),
  );
  const collapsed = collapseChanges(plan.extracted.changes, plan.settings.key);
  const rec = plan.reconciliation;
  return {
    mode,
    finals: collapsed.finals,
    key: plan.settings.key,
    schema: rec.schema,
    schemaChanges: rec.changed ? describeChanges(rec.changes) : '',
    schemaUpdates: rec.changed ? rec.updates : [],
    leftOut: summarizeLeftOut([
      ...decodeLetters,
      ...selected.unrouted,
      ...plan.schemaLetters,
      ...plan.extracted.deadLetters,
    ]),
    warnings: collapsed.warnings,
  };
}
