/**
 * Debezium change envelopes (JSON): `{ op, before, after, source, ts_ms }`, bare or wrapped by Kafka
 * Connect's JsonConverter as `{ schema, payload }`. What a Debezium topic also carries is recognised
 * and ignored (counted, never an error): tombstones after deletes, heartbeats, transaction metadata,
 * schema-change events, logical-decoding messages. A value that is none of these is refused with a
 * reason (it goes to the DLQ), never guessed at: a flattened row (ExtractNewRecordState) sent to a
 * `debezium` table would otherwise vanish.
 */
import { RecordDecodeError } from '../errors.js';
import { JsonNumberText } from '../records/json-to-value.js';
import { fromConnectSchema } from './connect-logical.js';

export type JsonObject = Record<string, unknown>;

export type DebeziumOp = 'c' | 'r' | 'u' | 'd';

/** Why a record was ignored (not a change to the table's rows). */
export type IgnoredReason = 'tombstone' | 'heartbeat' | 'transaction' | 'schema-change' | 'message';

export type DebeziumValue =
  | { kind: 'change'; op: DebeziumOp; before: JsonObject | null; after: JsonObject | null; source: unknown }
  | { kind: 'ignored'; reason: IgnoredReason };

export function isJsonObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof JsonNumberText);
}

/**
 * `{ schema, payload }` (JsonConverter with schemas.enable=true) → the payload, its logical-type values
 * (decimal bytes, epoch days, micro/nano timestamps, times) rewritten as the row conversion reads them
 * (connect-logical.ts); anything else as it is.
 */
export function unwrapConnectEnvelope(json: unknown): unknown {
  if (isJsonObject(json) && 'payload' in json && 'schema' in json) {
    return fromConnectSchema(json.schema, json.payload);
  }
  return json;
}

function rowImage(v: unknown, op: string, name: 'before' | 'after'): JsonObject | null {
  if (v === null || v === undefined) return null;
  if (!isJsonObject(v)) throw new RecordDecodeError(`op '${op}': '${name}' is not an object`, 'map');
  return v;
}

/** Control messages recognised by shape (Debezium's documented formats). */
function classifyControl(value: JsonObject): IgnoredReason | undefined {
  const keys = Object.keys(value);
  if (keys.every((k) => k === 'ts_ms')) return 'heartbeat';
  if ((value.status === 'BEGIN' || value.status === 'END') && 'id' in value) return 'transaction';
  if ('ddl' in value || 'tableChanges' in value) return 'schema-change';
  return undefined;
}

/**
 * Classifies a parsed Debezium value (null = a tombstone).
 * @throws RecordDecodeError for a value that is not a Debezium event, an unknown op, a change
 *   without the row image it needs, or a truncate (which no row-level delete can express)
 */
export function parseDebeziumValue(json: unknown): DebeziumValue {
  const value = unwrapConnectEnvelope(json);
  if (value === null || value === undefined) return { kind: 'ignored', reason: 'tombstone' };
  if (!isJsonObject(value)) {
    throw new RecordDecodeError('not a Debezium change event: the value is not a JSON object', 'map');
  }
  const op = value.op;
  if (op === undefined || op === null) {
    const control = classifyControl(value);
    if (control) return { kind: 'ignored', reason: control };
    throw new RecordDecodeError(
      "not a Debezium change event: no 'op' field (for flattened rows use mode 'upsert')",
      'map',
    );
  }
  if (op === 'm') return { kind: 'ignored', reason: 'message' };
  if (op === 't') {
    throw new RecordDecodeError(
      "op 't' (truncate) is not applied: equality deletes cannot remove all rows; truncate the table explicitly",
      'map',
    );
  }
  if (op !== 'c' && op !== 'r' && op !== 'u' && op !== 'd') {
    throw new RecordDecodeError(`unknown Debezium op ${JSON.stringify(op)}`, 'map');
  }
  const before = rowImage(value.before, op, 'before');
  const after = rowImage(value.after, op, 'after');
  if (op !== 'd' && after === null) throw new RecordDecodeError(`op '${op}' has no 'after' row`, 'map');
  return { kind: 'change', op, before, after, source: value.source ?? null };
}
