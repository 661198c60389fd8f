/**
 * Records → rows of a table schema. A record that cannot be decoded or mapped becomes a dead
 * letter with its stage and reason; the others go on.
 */
import { describeError, RecordDecodeError } from '../errors.js';
import type { Row, Schema, StructType } from '../spec/types.js';
import type { DeadLetter } from './dead-letters.js';
import type { RawRecord } from './esm-event.js';
import { jsonToRow } from './json-to-value.js';
import { KAFKA_FIELD, kafkaLineageRow } from './kafka-lineage.js';
import { parseJsonBytes } from './parse-json.js';

export interface MappedRecords {
  rows: Row[];
  deadLetters: DeadLetter[];
}

/** The schema's value columns (everything but `_kafka`). */
export function valueStruct(schema: Schema): StructType {
  return { type: 'struct', fields: schema.fields.filter((f) => f.name !== KAFKA_FIELD) };
}

export function mapRecords(records: RawRecord[], schema: Schema): MappedRecords {
  const valueType = valueStruct(schema);
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
      const json = parseJsonBytes(record.value);
      if (json === null || typeof json !== 'object' || Array.isArray(json)) {
        throw new RecordDecodeError(
          `value is JSON but not an object (${Array.isArray(json) ? 'an array' : typeof json})`,
          'map',
        );
      }
      const row = jsonToRow(valueType, json as Record<string, unknown>);
      if (lineage) row[KAFKA_FIELD] = kafkaLineageRow(record);
      rows.push(row);
    } catch (error) {
      const stage = error instanceof RecordDecodeError ? error.stage : 'map';
      deadLetters.push({
        record,
        stage,
        error: error instanceof RecordDecodeError ? error.message : describeError(error),
      });
    }
  }
  return { rows, deadLetters };
}
