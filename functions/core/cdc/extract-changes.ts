/**
 * Records → row changes of a CDC table: each change names a key and either the row the key now has
 * or none (deleted). `debezium` tables read change envelopes; `upsert` tables take the Kafka key as
 * the row's key and a null value (tombstone) as its deletion. A record that cannot become a change
 * is a dead letter with the reason; recognised non-changes (heartbeats, ...) are counted and skipped.
 */
import { describeError, RecordDecodeError } from '../errors.js';
import type { DeadLetter } from '../records/dead-letters.js';
import type { RawRecord } from '../records/esm-event.js';
import { jsonToRow, jsonToValue } from '../records/json-to-value.js';
import { hasKafkaSchemaId, hasKafkaValue, KAFKA_FIELD, kafkaLineageRow } from '../records/kafka-lineage.js';
import { compileRowConversion } from '../mapping/convert-row.js';
import { type DecodedRecord, decodeJsonRecords } from '../mapping/decoded-record.js';
import { readPath } from '../scan/read-columns.js';
import { valueKey } from '../scan/value-key.js';
import type { Row, Schema, StructType, Value } from '../spec/types.js';
import {
  type DebeziumValue,
  type IgnoredReason,
  isJsonObject,
  type JsonObject,
  parseDebeziumValue,
  unwrapConnectEnvelope,
} from './debezium-envelope.js';
import { type ChangeKey, describeKey, keyFromJson, keyFromKafkaKey, keyFromRow } from './record-key.js';
import type { CdcSettings, KeyColumn } from '../routing/table-mode.js';

export interface Change {
  record: RawRecord;
  key: ChangeKey;
  /** The key's row after the change; null when the change deletes the key. */
  row: Row | null;
  /**
   * Whether the table may hold the key already (an update, delete, snapshot read or upsert): then
   * older rows of the key need an equality delete. A Debezium create (`c`) is a key that did not exist.
   */
  mayExist: boolean;
}

export interface ExtractedChanges {
  /** In record order; a record may yield two (an update that changed the key). */
  changes: Change[];
  deadLetters: DeadLetter[];
  ignored: Partial<Record<IgnoredReason, number>>;
}

interface Mapper {
  settings: CdcSettings;
  /** The value columns: everything but `_kafka` and the source column. */
  valueType: StructType;
  /** The same with key columns optional (upsert values may leave them to the Kafka key). */
  relaxedType: StructType;
  lineage: boolean;
  /** The table keeps the original value bytes (`_kafka.value`): a row keeps its change event's. */
  lineageValue: boolean;
  /** The table keeps the value frame's schema id (`_kafka.schema_id`, upsert tables of registry frames). */
  lineageSchemaId: boolean;
  /** A row image → a row: by the route's type rules when it has some, else the plain conversion. */
  toRow: (type: StructType, obj: JsonObject, path?: string) => Row;
}

function without(schema: Schema, names: Set<string>): StructType {
  return { type: 'struct', fields: schema.fields.filter((f) => !names.has(f.name)) };
}

function relaxKeys(struct: StructType, ids: Set<number>): StructType {
  return {
    ...struct,
    fields: struct.fields.map((f) => {
      if (ids.has(f.id)) return { ...f, required: false };
      if (typeof f.type !== 'string' && f.type.type === 'struct')
        return { ...f, type: relaxKeys(f.type, ids) };
      return f;
    }),
  };
}

function makeMapper(schema: Schema, settings: CdcSettings): Mapper {
  const names = new Set([KAFKA_FIELD, ...(settings.sourceColumn ? [settings.sourceColumn.name] : [])]);
  const valueType = without(schema, names);
  return {
    settings,
    valueType,
    relaxedType: relaxKeys(valueType, new Set(settings.key.map((c) => c.id))),
    lineage: schema.fields.some((f) => f.name === KAFKA_FIELD),
    lineageValue: hasKafkaValue(schema),
    lineageSchemaId: hasKafkaSchemaId(schema),
    toRow: settings.coercions ? compileRowConversion(settings.coercions) : jsonToRow,
  };
}

/** Debezium writes some source fields as numbers or booleans in one version and strings in another. */
function coerceSourceStrings(source: JsonObject, type: StructType): JsonObject {
  const out: JsonObject = { ...source };
  for (const f of type.fields) {
    const v = out[f.name];
    if (f.type === 'string' && (typeof v === 'number' || typeof v === 'boolean')) out[f.name] = String(v);
  }
  return out;
}

function addLineage(mapper: Mapper, row: Row, record: RawRecord, source: unknown): Row {
  if (mapper.lineage) row[KAFKA_FIELD] = kafkaLineageRow(record, mapper.lineageValue, mapper.lineageSchemaId);
  const column = mapper.settings.sourceColumn;
  if (column) {
    const type = column.type as StructType;
    row[column.name] = isJsonObject(source)
      ? jsonToValue(type, coerceSourceStrings(source, type), column.name)
      : null;
  }
  return row;
}

function setPath(row: Row, path: readonly string[], value: Value): void {
  let target: Row = row;
  for (const p of path.slice(0, -1)) target = target[p] as Row;
  target[path[path.length - 1]] = value;
}

/**
 * Routing (`when`), schema evolution and extraction all read a record's change event; each record's
 * is read once (the Connect rewrite copies the payload) and kept with the record, error included.
 */
const debeziumEvents = new WeakMap<DecodedRecord, { event: DebeziumValue } | { error: unknown }>();
const upsertValues = new WeakMap<DecodedRecord, unknown>();

/** parseDebeziumValue of the record's value, read once. @throws what it throws, every time */
function debeziumEvent(decoded: DecodedRecord): DebeziumValue {
  let read = debeziumEvents.get(decoded);
  if (read === undefined) {
    try {
      read = { event: parseDebeziumValue(decoded.value) };
    } catch (error) {
      read = { error };
    }
    debeziumEvents.set(decoded, read);
  }
  if ('error' in read) throw read.error;
  return read.event;
}

/** An upsert value without its Connect envelope (logical types rewritten), read once. */
function upsertValue(decoded: DecodedRecord): unknown {
  if (!upsertValues.has(decoded)) upsertValues.set(decoded, unwrapConnectEnvelope(decoded.value));
  return upsertValues.get(decoded);
}

/** Whether the record has a Kafka key (raw bytes or decoded). */
function hasKey(decoded: DecodedRecord): boolean {
  return decoded.key !== null && decoded.key !== undefined;
}

function debeziumChanges(
  mapper: Mapper,
  decoded: DecodedRecord,
  ignored: ExtractedChanges['ignored'],
): Change[] {
  const { record } = decoded;
  const columns = mapper.settings.key;
  const event = debeziumEvent(decoded);
  if (event.kind === 'ignored') {
    ignored[event.reason] = (ignored[event.reason] ?? 0) + 1;
    return [];
  }
  if (event.op === 'd') {
    const key =
      (event.before && keyFromJson(event.before, columns, 'before')) ??
      (hasKey(decoded) ? keyFromKafkaKey(decoded.key, columns) : undefined);
    if (!key) {
      throw new RecordDecodeError(
        "no usable key: a delete whose 'before' lacks the key and no Kafka key",
        'map',
      );
    }
    return [{ record, key, row: null, mayExist: true }];
  }
  const row = addLineage(mapper, mapper.toRow(mapper.valueType, event.after!, 'after'), record, event.source);
  const key = keyFromRow(row, columns);
  const changes: Change[] = [];
  if (event.op === 'u' && event.before) {
    // A primary-key update: the old key's row goes away (Debezium usually sends d + c instead).
    const old = keyFromJson(event.before, columns, 'before');
    if (old && old.text !== key.text) changes.push({ record, key: old, row: null, mayExist: true });
  }
  changes.push({ record, key, row, mayExist: event.op !== 'c' });
  return changes;
}

function upsertChanges(mapper: Mapper, decoded: DecodedRecord): Change[] {
  const { record } = decoded;
  const columns = mapper.settings.key;
  const kafkaKey = hasKey(decoded) ? keyFromKafkaKey(decoded.key, columns) : undefined;
  // A tombstone is a record without a value, not a value that decodes to null.
  if (record.value === null) {
    if (!kafkaKey) throw new RecordDecodeError('no usable key: a tombstone without a Kafka key', 'map');
    return [{ record, key: kafkaKey, row: null, mayExist: true }];
  }
  const value = upsertValue(decoded);
  if (!isJsonObject(value)) {
    throw new RecordDecodeError(
      `value is JSON but not an object (${Array.isArray(value) ? 'an array' : typeof value})`,
      'map',
    );
  }
  const row = addLineage(mapper, mapper.toRow(mapper.relaxedType, value), record, null);
  if (kafkaKey) {
    columns.forEach((c: KeyColumn, i) => {
      const inValue = readPath(row, c.path);
      const inKey = kafkaKey.values[i];
      if (inValue === null) setPath(row, c.path, inKey);
      else if (valueKey(inValue) !== valueKey(inKey)) {
        throw new RecordDecodeError(
          `the Kafka key (${describeKey(columns, kafkaKey)}) and the value disagree on '${c.name}' (${String(inValue)})`,
          'map',
        );
      }
    });
  } else if (columns.some((c) => readPath(row, c.path) === null)) {
    throw new RecordDecodeError(
      `no usable key: no Kafka key, and the value lacks ${columns.map((c) => `'${c.name}'`).join(', ')}`,
      'map',
    );
  }
  return [{ record, key: keyFromRow(row, columns), row, mayExist: true }];
}

/**
 * The row image a record's change would write, as decoded: a Debezium create/read/update's `after`,
 * an upsert value. What schema evolution reconciles with the table. Undefined when there is none
 * (deletes, tombstones, control messages) or the record is not a readable change (extraction says why).
 */
export function rowImageOf(decoded: DecodedRecord, mode: CdcSettings['mode']): JsonObject | undefined {
  if (decoded.record.value === null) return undefined;
  try {
    if (mode === 'upsert') {
      const value = upsertValue(decoded);
      return isJsonObject(value) ? value : undefined;
    }
    const event = debeziumEvent(decoded);
    return event.kind === 'change' && event.op !== 'd' ? (event.after ?? undefined) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The Connect schema of a record's row image, when its value is a JsonConverter `{ schema, payload }`
 * envelope: the `after` field's (debezium) or the value's own (upsert); undefined otherwise.
 */
export function rowImageSchema(decoded: DecodedRecord, mode: CdcSettings['mode']): unknown {
  const value = decoded.value;
  if (!isJsonObject(value) || !('payload' in value) || !isJsonObject(value.schema)) return undefined;
  if (mode === 'upsert') return value.schema;
  const fields = value.schema.fields;
  return Array.isArray(fields) ? fields.find((f) => isJsonObject(f) && f.field === 'after') : undefined;
}

/**
 * Whether a record is one Debezium sends beside the changes (a tombstone, a heartbeat, transaction
 * metadata, a schema change, a logical message): nothing to apply, and no row fields to route by.
 */
export function isDebeziumControl(decoded: DecodedRecord): boolean {
  if (decoded.record.value === null) return true;
  try {
    return debeziumEvent(decoded).kind === 'ignored';
  } catch {
    return false; // not readable: extraction dead-letters it with the reason
  }
}

/**
 * A record as extraction takes it: decoded (ingest decodes by the route's format first), or raw,
 * whose value is then read as JSON (keys stay raw bytes) — a record that does not decode is a dead
 * letter, stage `decode`, in its place in the order.
 */
function decodeOne(item: DecodedRecord | RawRecord): DecodedRecord | DeadLetter {
  if ('record' in item) return item;
  const { decoded, deadLetters } = decodeJsonRecords([item]);
  return decoded[0] ?? deadLetters[0];
}

/**
 * Extracts the changes of records (in the order given): decoded records (values and keys JSON-like;
 * a key may be raw bytes when the route decodes no keys), or raw records with JSON values.
 * Never throws: failures are dead letters.
 */
export function extractChanges(
  records: ReadonlyArray<DecodedRecord | RawRecord>,
  schema: Schema,
  settings: CdcSettings,
): ExtractedChanges {
  const mapper = makeMapper(schema, settings);
  const out: ExtractedChanges = { changes: [], deadLetters: [], ignored: {} };
  for (const item of records) {
    const decoded = decodeOne(item);
    if ('stage' in decoded) {
      out.deadLetters.push(decoded);
      continue;
    }
    const { record } = decoded;
    try {
      if (settings.mode === 'upsert') {
        out.changes.push(...upsertChanges(mapper, decoded));
      } else if (record.value === null) {
        // Debezium follows each delete with a tombstone for log compaction; the delete did the work.
        out.ignored.tombstone = (out.ignored.tombstone ?? 0) + 1;
      } else {
        out.changes.push(...debeziumChanges(mapper, decoded, out.ignored));
      }
    } catch (error) {
      out.deadLetters.push({
        record,
        stage: error instanceof RecordDecodeError ? error.stage : 'map',
        error: error instanceof RecordDecodeError ? error.message : describeError(error),
      });
    }
  }
  return out;
}
