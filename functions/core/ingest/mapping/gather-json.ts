/**
 * The shortest path of an append batch: JSON values that fit the table schema as it is go from their
 * text straight into gathered columns (evolution/fitting-json.ts), never parsed into objects. It
 * takes a batch only when every record fits, with the plain mapping (the value's fields are the
 * columns); otherwise it answers undefined and the caller decodes and maps the batch by the general
 * path (mapBatch), which gives the same rows for fitting records and decides and explains the rest.
 */
import { currentSchema } from '../../spec/metadata.js';
import type { RawRecord } from '../esm-event.js';
import { reconcileSchema } from '../evolution/reconcile-schema.js';
import { jsonTextOf } from '../parse-json.js';
import type { MapBatchOptions, MappedBatch } from './map-batch.js';
import { compileMapping, isPlainMapping } from './record-mapper.js';

/** The batch gathered from its JSON text, or undefined when a record needs the general path. */
export function gatherJsonBatch(
  records: readonly RawRecord[],
  options: MapBatchOptions,
): MappedBatch | undefined {
  if (options.fastPath === false || !isPlainMapping(options.mapping)) return undefined;
  if (options.typeHints !== undefined && options.typeHints.size > 0) return undefined;
  const gatherer = compileMapping(options.mapping, currentSchema(options.metadata)).gatherFitting?.();
  if (!gatherer) return undefined;
  for (const record of records) {
    if (record.decodeError !== undefined || record.value === null) return undefined;
    const json = jsonTextOf(record.value);
    if (json === undefined || !gatherer.appendJson(json, record)) return undefined;
  }
  return {
    rows: [],
    gathered: gatherer.rows,
    used: [...records],
    deadLetters: [],
    reconciliation: reconcileSchema(options.metadata, [], { policy: options.policy }),
  };
}
