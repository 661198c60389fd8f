/**
 * The shortest path of an append batch: JSON values that fit the table schema as it is go from their
 * text straight into gathered columns (evolution/fitting-json.ts), never parsed into objects. Only the
 * records that do not fit (a new field, a bad value, not JSON at all) are decoded and mapped by the
 * general path (mapBatch), which decides and explains; one bad record does not send the whole batch
 * there. When those records change the schema, every record has to be converted to the new one: then
 * this answers undefined and the caller maps the whole batch by the general path.
 *
 * Taken with the plain mapping only (the value's fields are the columns).
 */
import { appendValue } from '../../data/arrow/gathered-rows.js';
import { currentSchema } from '../../spec/metadata.js';
import type { RawRecord } from '../../records/esm-event.js';
import { BatchRecord } from '../../records/record-columns.js';
import { reconcileSchema } from '../evolution/reconcile-schema.js';
import { decodeJsonRecords } from '../decoded-record.js';
import { type MapBatchOptions, type MappedBatch, mapBatch } from '../map-batch.js';
import { compileMapping, isPlainMapping } from '../record-mapper.js';

/**
 * The batch gathered from its JSON text (dead letters as mapBatch gives them; `used` says which record
 * each row came from), or undefined when the batch needs the general path as a whole.
 * @throws SchemaEvolutionError under policy block, as mapBatch
 */
export function gatherJsonBatch(
  records: readonly RawRecord[],
  options: MapBatchOptions,
): MappedBatch | undefined {
  if (options.fastPath === false || !isPlainMapping(options.mapping)) return undefined;
  if (options.typeHints !== undefined && options.typeHints.size > 0) return undefined;
  const gatherer = compileMapping(options.mapping, currentSchema(options.metadata)).gatherFitting?.(
    records.length,
  );
  if (!gatherer) return undefined;
  // Which records fit (1), marked rather than pushed: most batches fit whole.
  const fits = new Uint8Array(records.length);
  let misfits = 0;
  for (let k = 0; k < records.length; k++) {
    const record = records[k];
    let fit: boolean;
    if (record instanceof BatchRecord) {
      // The value's bytes where the batch holds them: no view per record.
      const c = record.columns;
      const start = c.valueStart[record.index];
      fit = start >= 0 && gatherer.appendJson(c.bytes, record, start, c.valueEnd[record.index]);
    } else {
      const json = record.decodeError === undefined ? record.value : null;
      fit = json !== null && gatherer.appendJson(json, record);
    }
    if (fit) fits[k] = 1;
    else misfits++;
  }
  if (misfits === 0) {
    const reconciliation = reconcileSchema(options.metadata, [], { policy: options.policy });
    return { rows: [], gathered: gatherer.rows, used: records.slice(), deadLetters: [], reconciliation };
  }
  const fitting: RawRecord[] = [];
  const rest: RawRecord[] = [];
  for (let k = 0; k < records.length; k++) (fits[k] === 1 ? fitting : rest).push(records[k]);
  const decoded = decodeJsonRecords(rest);
  const mapped = mapBatch(decoded.decoded, { ...options, columnar: false });
  if (mapped.reconciliation.changed) return undefined;
  // The rows of the records that fit, then the others' (order within a batch carries no meaning;
  // putting them back in record order would copy every column).
  for (const row of mapped.rows) appendValue(gatherer.rows.columns, row);
  return {
    rows: [],
    gathered: gatherer.rows,
    used: [...fitting, ...mapped.used],
    deadLetters: [...decoded.deadLetters, ...mapped.deadLetters],
    reconciliation: mapped.reconciliation,
  };
}
