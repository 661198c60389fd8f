/**
 * PROTOTYPE (bench only, not used by floe): mapRecords (functions/core/ingest/map-records.ts) with the
 * linear long-number scan and the compiled JSON → Row converter, to measure the map phase they give.
 */
import { describeError, RecordDecodeError } from '../../../functions/core/errors.js';
import type { DeadLetter } from '../../../functions/core/ingest/dead-letters.js';
import type { RawRecord } from '../../../functions/core/ingest/esm-event.js';
import { KAFKA_FIELD, kafkaLineageRow } from '../../../functions/core/ingest/kafka-lineage.js';
import { type MappedRecords, valueStruct } from '../../../functions/core/ingest/map-records.js';
import type { Row, Schema } from '../../../functions/core/spec/types.js';
import { compileJsonToRow } from './compiled-mapper.js';
import { parseJsonBytesFast } from './fast-decode.js';

export function mapRecordsFast(records: RawRecord[], schema: Schema): MappedRecords {
  const toRow = compileJsonToRow(valueStruct(schema));
  const lineage = schema.fields.some((f) => f.name === KAFKA_FIELD);
  const rows: Row[] = [];
  const deadLetters: DeadLetter[] = [];
  for (const record of records) {
    if (record.decodeError !== undefined) {
      deadLetters.push({ record, stage: 'decode', error: record.decodeError });
      continue;
    }
    try {
      if (record.value === null)
        throw new RecordDecodeError('value is null (a tombstone) in an append table', 'map');
      const json = parseJsonBytesFast(record.value);
      if (json === null || typeof json !== 'object' || Array.isArray(json)) {
        throw new RecordDecodeError(
          `value is JSON but not an object (${Array.isArray(json) ? 'an array' : typeof json})`,
          'map',
        );
      }
      const row = toRow(json as Record<string, unknown>);
      if (lineage) row[KAFKA_FIELD] = kafkaLineageRow(record);
      rows.push(row);
    } catch (error) {
      deadLetters.push({
        record,
        stage: error instanceof RecordDecodeError ? error.stage : 'map',
        error: error instanceof RecordDecodeError ? error.message : describeError(error),
      });
    }
  }
  return { rows, deadLetters };
}
