/**
 * A CDC batch's changes with schema evolution, as appends have it (evolution/reconcile-schema.ts): the
 * row images are reconciled with the table's schema under the table's policy, so a column added at
 * the source becomes an optional column (fresh id) in the same commit as the rows, a dropped one
 * becomes optional, int → long and the like are promoted; then the changes are extracted against the
 * schema that commits. Records whose image needs a change the policy refuses are dead letters (stage
 * `schema`). Key columns stay as the table declares them.
 */
import type { DeadLetter } from '../records/dead-letters.js';
import { recordLabel } from '../records/esm-event.js';
import type { EvolutionPolicy } from '../mapping/evolution/evolution-policy.js';
import { canPromote } from '../mapping/evolution/promotions.js';
import { reconcileSchema, type SchemaReconciliation } from '../mapping/evolution/reconcile-schema.js';
import type { DecodedRecord } from '../mapping/decoded-record.js';
import type { TableRoute } from '../routing/routes.js';
import { currentSchema } from '../spec/metadata.js';
import type { IcebergType, PrimitiveType, TableMetadata } from '../spec/types.js';
import { connectFieldTypes } from './connect-logical.js';
import { type ExtractedChanges, extractChanges, rowImageOf, rowImageSchema } from './extract-changes.js';
import { type CdcMode, type CdcSettings, resolveCdcSettings } from '../routing/table-mode.js';

export interface ChangePlan {
  reconciliation: SchemaReconciliation;
  /** The key and rules on the reconciled schema. */
  settings: CdcSettings;
  /** The changes of the records not dead-lettered for their schema; its dead letters are extraction's. */
  extracted: ExtractedChanges;
  /** Records whose row image needs a schema change the policy refuses. */
  schemaLetters: DeadLetter[];
}

/**
 * The types the records' Connect schemas give the row's fields (connect-logical.ts), for schema
 * evolution: a field the table lacks becomes a column of that type; a column the source widened
 * (int → long, a decimal's precision) is promoted in the same commit. A type the column cannot be
 * promoted to is left out (the values decide, as without a schema), and so is every existing column
 * unless `widen` (policy dlq changes no column). Records that disagree keep the wider type where one
 * promotes to the other; otherwise the values decide.
 */
function connectHints(
  decoded: readonly DecodedRecord[],
  mode: CdcMode,
  columns: ReadonlyMap<string, IcebergType>,
  widen: boolean,
): Map<string, PrimitiveType> {
  const hints = new Map<string, PrimitiveType>();
  const conflicting = new Set<string>();
  for (const d of decoded) {
    for (const [name, type] of connectFieldTypes(rowImageSchema(d, mode))) {
      const column = columns.get(name);
      const promotes = widen && typeof column === 'string' && canPromote(column, type);
      if (column !== undefined && !promotes) continue;
      const seen = hints.get(name);
      if (seen === undefined || canPromote(seen, type)) hints.set(name, type);
      else if (seen !== type && !canPromote(type, seen)) conflicting.add(name);
    }
  }
  for (const name of conflicting) hints.delete(name);
  return hints;
}

/**
 * @throws SchemaEvolutionError under policy block (as appends); ValidationError from resolveCdcSettings
 */
export function planChanges(
  metadata: TableMetadata,
  decoded: readonly DecodedRecord[],
  route: TableRoute,
  mode: CdcMode,
  policy: EvolutionPolicy,
): ChangePlan {
  const properties = metadata.properties ?? {};
  const schema = currentSchema(metadata);
  const base = resolveCdcSettings(mode, schema, route, properties);
  // Columns take the type the route's rule names, else the one the records' Connect schemas name.
  const typeHints = new Map([
    // Under policy dlq the schema never changes: a widened source column must not send fitting values to the DLQ.
    ...connectHints(decoded, mode, new Map(schema.fields.map((f) => [f.name, f.type])), policy !== 'dlq'),
    ...[...(base.coercions ?? [])].map(([column, c]): [string, PrimitiveType] => [column, c.type]),
  ]);
  const absentOk = new Set(base.key.map((c) => c.id));
  // A record that shaped the new schema but then is not a change must not leave a column or a
  // promotion behind: reconcile again without it (as mapBatch does). Each pass drops a record.
  let current = [...decoded];
  const dropped: DeadLetter[] = [];
  for (;;) {
    const imaged = current.flatMap((d) => {
      const image = rowImageOf(d, mode);
      return image ? [{ d, image }] : [];
    });
    const reconciliation = reconcileSchema(
      metadata,
      imaged.map((x) => x.image),
      { policy, typeHints, absentOk, label: (i) => recordLabel(imaged[i].d.record) },
    );
    const refused = new Map([...reconciliation.rejected].map(([i, reason]) => [imaged[i].d, reason]));
    const schemaLetters: DeadLetter[] = [...refused].map(([d, error]) => ({
      record: d.record,
      stage: 'schema',
      error,
    }));
    const settings = reconciliation.changed
      ? resolveCdcSettings(mode, reconciliation.schema, route, properties)
      : base;
    const extracted = extractChanges(
      current.filter((d) => !refused.has(d)),
      reconciliation.schema,
      settings,
    );
    if (!reconciliation.changed || extracted.deadLetters.length === 0) {
      extracted.deadLetters.unshift(...dropped);
      return { reconciliation, settings, extracted, schemaLetters };
    }
    const failed = new Set(extracted.deadLetters.map((l) => l.record));
    dropped.push(...extracted.deadLetters);
    current = current.filter((d) => !failed.has(d.record));
  }
}
