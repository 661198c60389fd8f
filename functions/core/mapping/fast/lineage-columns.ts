/**
 * The `_kafka` lineage appended straight from a record into gathered columns: topic, partition,
 * offset, timestamp, timestamp type, key and headers go into the struct's leaf columns as they are
 * (numbers into typed storage, strings as UTF-8), with no lineage row, header row or BigInt per
 * record. Only for a lineage struct of exactly the shape records/kafka-lineage.ts makes (with or without
 * the optional fields after the headers, in the order the table gained them: the original value bytes,
 * `value`, which go in as they are, and the value frame's schema id, `schema_id`); any other
 * (a table whose `_kafka` was changed) gets kafkaLineageRow + appendValue, the same values.
 */
import {
  appendValue,
  type GatheredColumn,
  type LeafColumn,
  type ListColumn,
  type StructColumn,
} from '../../data/arrow/gathered-rows.js';
import type { RawRecord } from '../../records/esm-event.js';
import { BatchRecord } from '../../records/record-columns.js';
import {
  confluentSchemaIdOf,
  KAFKA_SCHEMA_ID_FIELD,
  KAFKA_VALUE_FIELD,
  kafkaLineageRow,
} from '../../records/kafka-lineage.js';
import type { IcebergType } from '../../spec/types.js';

/** Appends one record's lineage to a `_kafka` struct column. */
export type LineageAppend = (column: GatheredColumn, record: RawRecord) => void;

const SHAPE: readonly [string, IcebergType | 'headers'][] = [
  ['topic', 'string'],
  ['partition', 'int'],
  ['offset', 'long'],
  ['timestamp', 'timestamptz'],
  ['timestamp_type', 'string'],
  ['key', 'binary'],
  ['headers', 'headers'],
];

function isHeadersType(type: IcebergType): boolean {
  if (typeof type === 'string' || type.type !== 'list' || !type['element-required']) return false;
  const element = type.element;
  if (typeof element === 'string' || element.type !== 'struct' || element.fields.length !== 2) return false;
  const [key, value] = element.fields;
  return key.name === 'key' && key.type === 'string' && value.name === 'value' && value.type === 'binary';
}

/** An optional field after the headers: the value bytes or the value's schema id. */
type Extra = 'value' | 'schema_id';

/** The optional fields after the headers in their order, or undefined for a struct of any other shape. */
function lineageShape(type: IcebergType): Extra[] | undefined {
  if (typeof type === 'string' || type.type !== 'struct') return undefined;
  const fields = type.fields;
  if (fields.length < SHAPE.length) return undefined;
  const same = SHAPE.every(([name, expected], j) => {
    const f = fields[j];
    return f.name === name && (expected === 'headers' ? isHeadersType(f.type) : f.type === expected);
  });
  if (!same) return undefined;
  const extras: Extra[] = [];
  for (const f of fields.slice(SHAPE.length)) {
    const extra =
      f.name === KAFKA_VALUE_FIELD && f.type === 'binary'
        ? 'value'
        : f.name === KAFKA_SCHEMA_ID_FIELD && f.type === 'int'
          ? 'schema_id'
          : undefined;
    if (extra === undefined || extras.includes(extra)) return undefined;
    extras.push(extra);
  }
  return extras;
}

/** The value frame's schema id from value bytes bytes[start, end), or -1 when not a Confluent frame. */
function frameSchemaId(bytes: Uint8Array, start: number, end: number): number {
  if (start < 0 || end - start < 5 || bytes[start] !== 0) return -1;
  const id =
    ((bytes[start + 1] << 24) | (bytes[start + 2] << 16) | (bytes[start + 3] << 8) | bytes[start + 4]) >>> 0;
  return id <= 0x7fffffff ? id : -1;
}

/** Epoch ms → µs as an exact double when it is one. */
function pushMicros(leaf: LeafColumn, ms: number, record: RawRecord): void {
  const micros = ms * 1000;
  if (Number.isSafeInteger(micros)) leaf.pushNumber(micros + 0);
  else appendValue(leaf, kafkaLineageRow(record).timestamp);
}

/**
 * The UTF-8 bytes of the last string pushed through it: a batch's lineage repeats a few topics,
 * timestamp types and header keys, which are encoded once instead of once a record.
 */
class RepeatedText {
  private text: string | undefined;
  private bytes: Uint8Array | undefined;

  push(leaf: LeafColumn, s: string): void {
    if (s !== this.text) {
      this.text = s;
      // Not well-formed: pushValue keeps it as rows keep it.
      this.bytes = s.isWellFormed() ? Buffer.from(s, 'utf8') : undefined;
    }
    const bytes = this.bytes;
    if (bytes === undefined) leaf.pushValue(s);
    else leaf.pushBytes(bytes, 0, bytes.length);
  }
}

const TOPIC = new RepeatedText();
const TIMESTAMP_TYPE = new RepeatedText();
const HEADER_KEY = new RepeatedText();

/** A BatchRecord's lineage read from its batch's columns: no view, header array or BigInt. */
function appendFromBatch(struct: StructColumn, record: BatchRecord, extras: readonly Extra[]): void {
  const c = struct.children;
  const cols = record.columns;
  const i = record.index;
  struct.valid.pushValid();
  TOPIC.push(c[0] as LeafColumn, cols.topics[cols.topic[i]]);
  (c[1] as LeafColumn).pushNumber(cols.partition[i]);
  (c[2] as LeafColumn).pushNumber(cols.offset[i]);
  // The ms read and scaled by the column itself: no heap number a record.
  const timestamp = c[3] as LeafColumn;
  if (!timestamp.pushScaled(cols.timestamp, i, 1000)) pushMicros(timestamp, cols.timestamp[i], record);
  TIMESTAMP_TYPE.push(c[4] as LeafColumn, cols.timestampTypes[cols.timestampType[i]]);
  const key = c[5] as LeafColumn;
  const keyStart = cols.keyStart[i];
  if (keyStart < 0) key.pushAbsent(false);
  else key.pushBytes(cols.bytes, keyStart, cols.keyEnd[i]);
  const list = c[6] as ListColumn;
  const element = list.element as StructColumn;
  const keys = element.children[0] as LeafColumn;
  const values = element.children[1] as LeafColumn;
  const from = cols.headersFrom(i);
  const to = cols.headerEnd[i];
  for (let h = from; h < to; h++) {
    element.valid.pushValid();
    HEADER_KEY.push(keys, cols.headerKeyAt(h));
    const start = cols.headerStart[h];
    if (start < 0) values.pushAbsent(false);
    else values.pushBytes(cols.bytes, start, cols.headerStop[h]);
  }
  list.valid.pushValid();
  list.offsets.pushCount(to - from);
  const valueStart = cols.valueStart[i];
  for (let e = 0; e < extras.length; e++) {
    const leaf = c[SHAPE.length + e] as LeafColumn;
    if (extras[e] === 'value') {
      if (valueStart < 0) leaf.pushAbsent(false);
      else leaf.pushBytes(cols.bytes, valueStart, cols.valueEnd[i]);
    } else {
      const id = frameSchemaId(cols.bytes, valueStart, cols.valueEnd[i]);
      if (id < 0) leaf.pushAbsent(false);
      else leaf.pushNumber(id);
    }
  }
}

function appendColumns(column: GatheredColumn, record: RawRecord, extras: readonly Extra[]): void {
  const struct = column as StructColumn;
  if (record instanceof BatchRecord) {
    appendFromBatch(struct, record, extras);
    return;
  }
  const c = struct.children;
  struct.valid.pushValid();
  // pushValue: a string that is not well-formed is kept as rows keep it (build-binary-data.ts writes it).
  (c[0] as LeafColumn).pushValue(record.topic);
  (c[1] as LeafColumn).pushNumber(record.partition);
  const offset = Number(record.offset);
  if (Number.isSafeInteger(offset)) (c[2] as LeafColumn).pushNumber(offset);
  else (c[2] as LeafColumn).pushValue(record.offset);
  pushMicros(c[3] as LeafColumn, record.timestamp, record);
  (c[4] as LeafColumn).pushValue(record.timestampType);
  (c[5] as LeafColumn).pushValue(record.key);
  const list = c[6] as ListColumn;
  const headers = record.headers;
  const element = list.element as StructColumn;
  const keys = element.children[0] as LeafColumn;
  const values = element.children[1] as LeafColumn;
  for (let h = 0; h < headers.length; h++) {
    element.valid.pushValid();
    keys.pushValue(headers[h].key);
    values.pushValue(headers[h].value);
  }
  list.valid.pushValid();
  list.offsets.pushCount(headers.length);
  for (let e = 0; e < extras.length; e++) {
    const leaf = c[SHAPE.length + e] as LeafColumn;
    if (extras[e] === 'value') leaf.pushValue(record.value);
    else leaf.pushValue(confluentSchemaIdOf(record.value));
  }
}

/** The lineage appender for a `_kafka` column of this type. */
export function compileLineageAppend(type: IcebergType): LineageAppend {
  const extras = lineageShape(type);
  if (extras) return (column, record) => appendColumns(column, record, extras);
  const has = (name: string, t: IcebergType) =>
    typeof type !== 'string' &&
    type.type === 'struct' &&
    type.fields.some((f) => f.name === name && f.type === t);
  const value = has(KAFKA_VALUE_FIELD, 'binary');
  const schemaId = has(KAFKA_SCHEMA_ID_FIELD, 'int');
  return (column, record) => appendValue(column, kafkaLineageRow(record, value, schemaId));
}
