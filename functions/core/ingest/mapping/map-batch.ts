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
import { describeError, RecordDecodeError } from '../../errors.js';
import { currentSchema } from '../../spec/metadata.js';
import type { PrimitiveType, Row, TableMetadata } from '../../spec/types.js';
import type { DeadLetter } from '../dead-letters.js';
import type { RawRecord } from '../esm-event.js';
import type { EvolutionPolicy } from '../evolution/evolution-policy.js';
import { reconcileSchema, type SchemaReconciliation } from '../evolution/reconcile-schema.js';
import type { DecodedRecord } from './decoded-record.js';
import type { MappingConfig } from './mapping-config.js';
import { compileMapping } from './record-mapper.js';
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
}

export interface MappedBatch {
  rows: Row[];
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
 * Maps one table's decoded records.
 * @throws ValidationError when the mapping does not fit the table (configuration, not data)
 * @throws SchemaEvolutionError under policy block when a record needs an incompatible change
 */
export function mapBatch(decoded: readonly DecodedRecord[], options: MapBatchOptions): MappedBatch {
  const mapper = compileMapping(options.mapping, currentSchema(options.metadata));
  const deadLetters: DeadLetter[] = [];
  let candidates: { value: ValueObject; record: RawRecord }[] = [];
  for (const d of decoded) {
    try {
      candidates.push({ value: mapper.project(d), record: d.record });
    } catch (error) {
      if (!(error instanceof RecordDecodeError)) throw error;
      deadLetters.push(letterOf(d.record, error, 'map'));
    }
  }
  const typeHints = new Map([...(options.typeHints ?? []), ...mapper.typeHints]);
  // A record that shaped the new schema but then fails to convert must not leave a column or a
  // promotion behind: reconcile again without it. Each pass drops at least one record.
  for (;;) {
    const current = candidates;
    const reconciliation = reconcileSchema(
      options.metadata,
      current.map((p) => p.value),
      {
        policy: options.policy,
        typeHints,
        label: (i) => {
          const r = current[i].record;
          return `${r.topic}-${r.partition}@${r.offset}`;
        },
      },
    );
    const target = reconciliation.changed ? compileMapping(options.mapping, reconciliation.schema) : mapper;
    const rows: Row[] = [];
    const used: RawRecord[] = [];
    const letters: DeadLetter[] = [];
    const failed = new Set<RawRecord>();
    current.forEach((p, i) => {
      const reason = reconciliation.rejected.get(i);
      if (reason !== undefined) {
        letters.push({ record: p.record, stage: 'schema', error: reason });
        return;
      }
      try {
        rows.push(target.toRow(p.value, p.record));
        used.push(p.record);
      } catch (error) {
        if (!(error instanceof RecordDecodeError)) throw error;
        letters.push(letterOf(p.record, error, 'map'));
        failed.add(p.record);
      }
    });
    if (failed.size === 0 || !reconciliation.changed) {
      return { rows, used, deadLetters: [...deadLetters, ...letters], reconciliation };
    }
    deadLetters.push(...letters.filter((l) => failed.has(l.record)));
    candidates = current.filter((p) => !failed.has(p.record));
  }
}
