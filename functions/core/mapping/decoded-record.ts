/**
 * A record after its payload was decoded (JSON today; Avro, Protobuf and registry formats from the
 * formats layer) and before it is mapped to a row. The mapping, the route conditions and schema
 * evolution all work on this shape, so they do not care which format the bytes were in.
 */
import { describeError, RecordDecodeError } from '../errors.js';
import type { DeadLetter } from '../records/dead-letters.js';
import type { RawRecord } from '../records/esm-event.js';
import type { DecodedRecord as FormatDecodedRecord } from '../formats/decode-records.js';
import { parseJsonBytes } from '../records/parse-json.js';

export interface DecodedRecord {
  /**
   * The decoded value: JSON-like (plain objects, arrays, strings, booleans, numbers, `JsonNumberText`
   * for numbers too long for a double, bigint, Uint8Array), or null for a tombstone.
   */
  value: unknown;
  /** The decoded key, or the raw key bytes (Uint8Array) when no format decoded it; null when absent. */
  key: unknown;
  record: RawRecord;
}

export interface DecodedBatch {
  decoded: DecodedRecord[];
  deadLetters: DeadLetter[];
}

/**
 * Decodes values as JSON (keys stay raw bytes: the mapping decides what a key is). Records that
 * arrived broken (bad base64, headers) or hold invalid UTF-8/JSON become dead letters, stage `decode`.
 * Never throws for a record's content.
 */
export function decodeJsonRecords(records: RawRecord[]): DecodedBatch {
  const decoded: DecodedRecord[] = [];
  const deadLetters: DeadLetter[] = [];
  for (const record of records) {
    if (record.decodeError !== undefined) {
      deadLetters.push({ record, stage: 'decode', error: record.decodeError });
      continue;
    }
    try {
      const value = record.value === null ? null : parseJsonBytes(record.value);
      decoded.push({ value, key: record.key, record });
    } catch (error) {
      deadLetters.push({
        record,
        stage: error instanceof RecordDecodeError ? error.stage : 'decode',
        error: error instanceof RecordDecodeError ? error.message : describeError(error),
      });
    }
  }
  return { decoded, deadLetters };
}

/**
 * A record the formats layer decoded (formats/decode-records.ts) in the shape the mapping takes: the
 * payloads' values, and the raw key bytes when the route decodes no keys.
 */
export function fromFormatDecoded(decoded: FormatDecodedRecord): DecodedRecord {
  return {
    record: decoded.record,
    value: decoded.value === null ? null : decoded.value.value,
    key: decoded.key === undefined ? decoded.record.key : decoded.key === null ? null : decoded.key.value,
  };
}
