/**
 * The seam between ingestion and mapping + schema evolution: decoded records of one table's batch →
 * rows of the (possibly evolved) schema, dead letters with their stage and reason, and the schema
 * change to commit with the rows. Pure: reads the metadata it is given, writes nothing.
 *
 *   project every record (mapping)      → failures: dead letters, stage `map`
 *   reconcile the batch with the schema → incompatible records: dead letters, stage `schema`
 *                                          (policy block: SchemaEvolutionError for the whole batch)
 *   convert to rows of the new schema   → failures: dead letters, stage `map`
 */
import { describeError, RecordDecodeError } from '../errors.js';
import { currentSchema } from '../spec/metadata.js';
import type { PrimitiveType, Row, Schema, TableMetadata } from '../spec/types.js';
import type { DeadLetter } from '../records/dead-letters.js';
import { type RawRecord, recordLabel } from '../records/esm-event.js';
import type { EvolutionPolicy } from './evolution/evolution-policy.js';
import { canPromote, samePrimitive } from './evolution/promotions.js';
import { reconcileSchema, type SchemaReconciliation } from './evolution/reconcile-schema.js';
import type { DecodedRecord } from './decoded-record.js';
import type { MappingConfig } from './mapping-config.js';
import type { GatheredRows } from '../data/arrow/gathered-rows.js';
import { compileMapping, type FittingGatherer, fieldAtPath } from './record-mapper.js';
import type { ValueObject } from './value-paths.js';

export interface MapBatchOptions {
  mapping: MappingConfig;
  /** The table's metadata the batch is reconciled with (the base of the commit). */
  metadata: TableMetadata;
  /** @default 'evolve' */
  policy?: EvolutionPolicy;
  /**
   * Column types known from elsewhere, by column path (e.g. a decoder's writer schema: an Avro
   * timestamp arrives as ISO text but should make a timestamptz column). The mapping's own rules win.
   */
  typeHints?: ReadonlyMap<string, PrimitiveType>;
  /**
   * Ask for the rows gathered as columns (MappedBatch.gathered) when every record fits the schema as it
   * is: no row objects are built. @default false
   */
  columnar?: boolean;
  /**
   * false: every record goes through reconciliation and the general conversion (the reference the
   * fast path is tested against). @default true
   */
  fastPath?: boolean;
}

interface Candidate {
  value: ValueObject;
  record: RawRecord;
  /** The row, when the value fits the schema as it is. */
  fitting: Row | undefined;
}

export interface MappedBatch {
  /** The rows (empty when `gathered` holds them). */
  rows: Row[];
  /** With `columnar`, when every record fit: the rows gathered as columns, in record order. */
  gathered?: GatheredRows;
  /** The records the rows came from, in the same order. */
  used: RawRecord[];
  deadLetters: DeadLetter[];
  /** The schema change to commit with the rows (`changed` false: none; write with `schema`). */
  reconciliation: SchemaReconciliation;
}

function letterOf(record: RawRecord, error: unknown, stage: DeadLetter['stage']): DeadLetter {
  return {
    record,
    stage: error instanceof RecordDecodeError ? error.stage : stage,
    error: error instanceof RecordDecodeError ? error.message : describeError(error),
  };
}

/**
 * Whether type hints leave the existing columns as they are: a hint that would promote an existing
 * column must go through reconciliation for every record, fitting or not.
 */
function hintsKeepSchema(schema: Schema, hints: ReadonlyMap<string, PrimitiveType>): boolean {
  for (const [path, hint] of hints) {
    const field = fieldAtPath(schema, path.split('.'));
    if (!field) continue;
    if (typeof field.type !== 'string') return false;
    if (!samePrimitive(hint, field.type) && !canPromote(hint, field.type)) return false;
  }
  return true;
}

/** Every candidate's row gathered, or undefined as soon as one does not fit (the row path takes over). */
function gatherAll(gatherer: FittingGatherer, candidates: Candidate[]): GatheredRows | undefined {
  for (const c of candidates) if (!gatherer.append(c.value, c.record)) return undefined;
  return gatherer.rows;
}

/**
 * Maps one table's decoded records.
 *
 * Records whose value already fits the schema (RecordMapper.fittingRow) become rows at once; only the
 * others are reconciled with the schema (a fitting record never changes it nor is refused by it) and
 * converted by the general path. When the reconciliation changes the schema, every record is converted
 * again against the new one.
 * @throws ValidationError when the mapping does not fit the table (configuration, not data)
 * @throws SchemaEvolutionError under policy block when a record needs an incompatible change
 */
export function mapBatch(decoded: readonly DecodedRecord[], options: MapBatchOptions): MappedBatch {
  const schema = currentSchema(options.metadata);
  const mapper = compileMapping(options.mapping, schema);
  const deadLetters: DeadLetter[] = [];
  const candidates: Candidate[] = [];
  for (const d of decoded) {
    try {
      candidates.push({ value: mapper.project(d), record: d.record, fitting: undefined });
    } catch (error) {
      if (!(error instanceof RecordDecodeError)) throw error;
      deadLetters.push(letterOf(d.record, error, 'map'));
    }
  }
  const typeHints = new Map([...(options.typeHints ?? []), ...mapper.typeHints]);
  const fittingRow =
    options.fastPath !== false && hintsKeepSchema(schema, typeHints) ? mapper.fittingRow : undefined;
  if (fittingRow && options.columnar && mapper.gatherFitting) {
    const gathered = gatherAll(mapper.gatherFitting(candidates.length), candidates);
    if (gathered) {
      const reconciliation = reconcileSchema(options.metadata, [], { policy: options.policy, typeHints });
      const used = candidates.map((c) => c.record);
      return { rows: [], gathered, used, deadLetters, reconciliation };
    }
  }
  if (fittingRow) {
    for (const c of candidates) c.fitting = fittingRow(c.value, c.record);
  }
  // A record that shaped the new schema but then fails to convert must not leave a column or a
  // promotion behind: reconcile again without it. Each pass drops at least one record.
  let current = candidates;
  for (;;) {
    const pending = current.filter((c) => c.fitting === undefined);
    const reconciliation = reconcileSchema(
      options.metadata,
      pending.map((p) => p.value),
      {
        policy: options.policy,
        typeHints,
        label: (i) => recordLabel(pending[i].record),
      },
    );
    const rejected = new Map([...reconciliation.rejected].map(([i, reason]) => [pending[i], reason]));
    const target = reconciliation.changed ? compileMapping(options.mapping, reconciliation.schema) : mapper;
    const rows: Row[] = [];
    const used: RawRecord[] = [];
    const letters: DeadLetter[] = [];
    const failed = new Set<RawRecord>();
    for (const c of current) {
      if (c.fitting !== undefined && !reconciliation.changed) {
        rows.push(c.fitting);
        used.push(c.record);
        continue;
      }
      const reason = rejected.get(c);
      if (reason !== undefined) {
        letters.push({ record: c.record, stage: 'schema', error: reason });
        continue;
      }
      try {
        rows.push(target.toRow(c.value, c.record));
        used.push(c.record);
      } catch (error) {
        if (!(error instanceof RecordDecodeError)) throw error;
        letters.push(letterOf(c.record, error, 'map'));
        failed.add(c.record);
      }
    }
    if (failed.size === 0 || !reconciliation.changed) {
      return { rows, used, deadLetters: [...deadLetters, ...letters], reconciliation };
    }
    deadLetters.push(...letters.filter((l) => failed.has(l.record)));
    current = current.filter((c) => !failed.has(c.record));
  }
}
