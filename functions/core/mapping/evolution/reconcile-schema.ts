/**
 * Schema reconciliation of one batch: what the batch's projected records need from the table schema,
 * as one new schema and the requirements + updates that commit it in the same snapshot as the data
 * (table/actions/evolve-schema.ts; passed as the pre-updates of append-files or row-delta). Records are
 * judged in batch order against a draft that already holds what earlier records added, so the first
 * record decides a new column's type and later records must fit it (or widen it compatibly).
 *
 * The change commits with `assert-current-schema-id` and `assert-last-assigned-field-id` of the base:
 * if another writer evolved the table meanwhile the commit fails, and the caller must reconcile again
 * against the new base (`reconciliationStillApplies` says when) — new ids are then drawn above the
 * other writer's, so no id is ever used twice.
 */
import type { TableRequirement, TableUpdate } from '../../catalog/requirements-updates.js';
import { SchemaEvolutionError } from '../../errors.js';
import { currentSchema } from '../../spec/metadata.js';
import { schemaFieldPaths } from '../../spec/schema.js';
import { indexById, maxFieldId } from '../../spec/schema-index.js';
import type { PrimitiveType, Schema, TableMetadata, Transform } from '../../spec/types.js';
import { KAFKA_FIELD } from '../../records/kafka-lineage.js';
import { evolveSchema } from '../../table/actions/evolve-schema.js';
import { isFieldObject } from '../value-paths.js';
import { type WalkContext, walkStruct } from './draft-walker.js';
import type { EvolutionPolicy } from './evolution-policy.js';
import { IncompatibleValueError } from './infer-type.js';

export type SchemaChange =
  | { kind: 'add-column'; path: string; id: number; type: string }
  | { kind: 'promote'; path: string; id: number; from: string; to: string }
  | { kind: 'make-optional'; path: string; id: number };

export interface SchemaReconciliation {
  /** True when the batch needs a new schema (then `updates` and `requirements` are non-empty). */
  changed: boolean;
  baseSchemaId: number;
  baseLastColumnId: number;
  /** The schema to write the batch with: the new one, or the current one when nothing changed. */
  schema: Schema;
  lastColumnId: number;
  changes: SchemaChange[];
  /** add-schema + set-current-schema (empty when unchanged). */
  updates: TableUpdate[];
  /** assert-current-schema-id + assert-last-assigned-field-id of the base (empty when unchanged). */
  requirements: TableRequirement[];
  /** Records (by index) that need an incompatible change, with the reason; they go to the DLQ (stage schema). */
  rejected: Map<number, string>;
}

export interface ReconcileOptions {
  /** @default 'evolve' */
  policy?: EvolutionPolicy;
  /** Types the mapping decides, by column path (RecordMapper.typeHints). */
  typeHints?: ReadonlyMap<string, PrimitiveType>;
  /** Names a record in messages (e.g. `orders-0@42`); default `record #i`. */
  label?: (index: number) => string;
  /** Field ids a record may leave missing or null without making them optional (WalkContext.absentOk). */
  absentOk?: ReadonlySet<number>;
}

function partitionSources(md: TableMetadata): Map<number, { name: string; transform: Transform }[]> {
  const out = new Map<number, { name: string; transform: Transform }[]>();
  for (const spec of md['partition-specs'] ?? []) {
    for (const f of spec.fields) {
      const list = out.get(f['source-id']) ?? [];
      list.push({ name: f.name, transform: f.transform });
      out.set(f['source-id'], list);
    }
  }
  return out;
}

/** The changes between a schema and its evolved draft, for logs and metrics. */
export function diffSchemas(base: Schema, next: Schema): SchemaChange[] {
  const before = indexById(base);
  const after = indexById(next);
  const paths = schemaFieldPaths(next);
  const changes: SchemaChange[] = [];
  const added = new Set<number>();
  for (const [id, field] of after) {
    const path = paths.get(id) ?? field.name;
    const old = before.get(id);
    if (!old) {
      added.add(id);
      // Report a new subtree once, at its root.
      const parent = [...added].some((a) => a !== id && path.startsWith(`${paths.get(a)}.`));
      if (!parent) changes.push({ kind: 'add-column', path, id, type: typeLabel(field.type) });
      continue;
    }
    if (typeof old.type === 'string' && typeof field.type === 'string' && old.type !== field.type) {
      changes.push({ kind: 'promote', path, id, from: old.type, to: field.type });
    }
    if (old.required && !field.required) changes.push({ kind: 'make-optional', path, id });
  }
  return changes;
}

function typeLabel(type: Schema['fields'][number]['type']): string {
  return typeof type === 'string' ? type : type.type;
}

/** One line per change, for a log message. */
export function describeChanges(changes: SchemaChange[]): string {
  return changes
    .map((c) =>
      c.kind === 'add-column'
        ? `add ${c.path} (${c.type}, id ${c.id})`
        : c.kind === 'promote'
          ? `${c.path}: ${c.from} → ${c.to}`
          : `${c.path}: required → optional`,
    )
    .join('; ');
}

/**
 * Reconciles a batch of projected records (column name → decoded value) with the table's current
 * schema.
 * @throws SchemaEvolutionError (not retryable) under policy `block` when any record needs an
 *   incompatible change; the message lists the first reasons
 */
export function reconcileSchema(
  metadata: TableMetadata,
  values: readonly unknown[],
  options: ReconcileOptions = {},
): SchemaReconciliation {
  const policy = options.policy ?? 'evolve';
  const base = currentSchema(metadata);
  const baseLastColumnId = metadata['last-column-id'];
  const draft: Schema = structuredClone(base);
  const highest = Math.max(baseLastColumnId, ...metadata.schemas.map((s) => maxFieldId(s)));
  const ctx: WalkContext = {
    baseLastColumnId,
    nextId: highest + 1,
    identifierIds: new Set(base['identifier-field-ids'] ?? []),
    absentOk: options.absentOk ?? new Set(),
    partitionSources: partitionSources(metadata),
    hints: options.typeHints ?? new Map(),
    undo: [],
    applied: [],
  };
  const skip = new Set([KAFKA_FIELD].filter((n) => draft.fields.some((f) => f.name === n)));
  const rejected = new Map<number, string>();
  const undoRecord = () => {
    for (const step of ctx.undo.reverse()) step();
  };

  values.forEach((value, index) => {
    ctx.undo = [];
    ctx.applied = [];
    try {
      if (!isFieldObject(value)) throw new IncompatibleValueError('the record is not an object of columns');
      walkStruct(ctx, draft, value, '', '', 0, skip);
      if (policy === 'dlq' && ctx.applied.length > 0) {
        throw new IncompatibleValueError(
          `needs a schema change (${ctx.applied.join('; ')}), but schema evolution is off for this table (policy dlq)`,
        );
      }
    } catch (error) {
      if (!(error instanceof IncompatibleValueError)) throw error;
      undoRecord();
      rejected.set(index, error.message);
    }
  });

  if (policy === 'block' && rejected.size > 0) {
    const label = options.label ?? ((i: number) => `record #${i}`);
    const reasons = [...rejected].slice(0, 3).map(([i, reason]) => `${label(i)}: ${reason}`);
    throw new SchemaEvolutionError(
      `${rejected.size} record(s) need an incompatible schema change (policy block): ${reasons.join(' | ')}${rejected.size > 3 ? ' | …' : ''}`,
    );
  }

  const changes = diffSchemas(base, draft);
  if (changes.length === 0) {
    return {
      changed: false,
      baseSchemaId: base['schema-id'],
      baseLastColumnId,
      schema: base,
      lastColumnId: baseLastColumnId,
      changes,
      updates: [],
      requirements: [],
      rejected,
    };
  }
  const schemaId = Math.max(...metadata.schemas.map((s) => s['schema-id'])) + 1;
  const schema: Schema = { ...draft, 'schema-id': schemaId };
  const lastColumnId = Math.max(baseLastColumnId, ctx.nextId - 1);
  return {
    changed: true,
    baseSchemaId: base['schema-id'],
    baseLastColumnId,
    schema,
    lastColumnId,
    changes,
    ...evolveSchema({ schemaId: base['schema-id'], lastColumnId: baseLastColumnId }, schema, lastColumnId),
    rejected,
  };
}

/**
 * Whether a reconciliation made on one base still holds on another (e.g. the base a commit retry
 * reloaded): nothing changed, or the same current schema and last column id. When false, the files written with the
 * reconciled schema may carry ids the table now uses for something else: reconcile, map and write
 * again on the new base.
 */
export function reconciliationStillApplies(
  metadata: TableMetadata,
  reconciliation: SchemaReconciliation,
): boolean {
  // No change: the rows use ids of an older schema, which stay valid (ids are never reused).
  if (!reconciliation.changed) return true;
  return (
    metadata['current-schema-id'] === reconciliation.baseSchemaId &&
    metadata['last-column-id'] === reconciliation.baseLastColumnId
  );
}
