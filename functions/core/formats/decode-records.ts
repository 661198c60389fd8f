/**
 * The seam between the ESM records and the mapper: decodes each record's value (and key, when the
 * route has a key format) once, before mapping. A record that cannot be decoded becomes a dead
 * letter (stage `decode`) and the others go on; a registry that cannot be asked rejects the whole
 * call, so the batch fails and the ESM redelivers it with nothing dead-lettered.
 */
import { describeError, LakeError, RecordDecodeError } from '../errors.js';
import type { DeadLetter } from '../records/dead-letters.js';
import type { RawRecord } from '../records/esm-event.js';
import type { DecodedPayload, PayloadDecoder } from './payload-decoder.js';

export interface DecodedRecord {
  record: RawRecord;
  /** `null` for a tombstone (no value). */
  value: DecodedPayload | null;
  /** `null` for no key; `undefined` when the route does not decode keys (use `record.key`). */
  key?: DecodedPayload | null;
}

export interface DecodedRecords {
  decoded: DecodedRecord[];
  deadLetters: DeadLetter[];
}

/**
 * Decodes a batch's records in order. Records the ESM event could not decode (`decodeError`) are
 * dead-lettered here too, so the mapper only sees decoded records.
 * @throws LakeError (retryable or a configuration error) when the batch must fail as a whole
 */
export async function decodeRecords(decoder: PayloadDecoder, records: RawRecord[]): Promise<DecodedRecords> {
  const decoded: DecodedRecord[] = [];
  const deadLetters: DeadLetter[] = [];
  for (const record of records) {
    if (record.decodeError !== undefined) {
      deadLetters.push({ record, stage: 'decode', error: record.decodeError });
      continue;
    }
    try {
      const value =
        record.value === null
          ? null
          : await decoder.decode(record.value, { topic: record.topic, isKey: false, record });
      const out: DecodedRecord = { record, value };
      if (decoder.decodesKeys) {
        out.key =
          record.key === null
            ? null
            : await decoder.decode(record.key, { topic: record.topic, isKey: true, record });
      }
      decoded.push(out);
    } catch (error) {
      if (error instanceof RecordDecodeError) {
        deadLetters.push({ record, stage: error.stage, error: error.message });
      } else if (error instanceof LakeError) {
        // Registry down, credentials refused, configuration: never dead-letter for these.
        throw error;
      } else {
        // A payload that trips a library in an unforeseen way is this record's problem, not the batch's.
        deadLetters.push({ record, stage: 'decode', error: describeError(error) });
      }
    }
  }
  return { decoded, deadLetters };
}
