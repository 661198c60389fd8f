/**
 * A change's key: the identifier columns' values, from a mapped row, from a Debezium row image, or
 * from the Kafka key. Kafka keys come decoded by the route's key format (Avro, ...) or as raw bytes:
 * JSON objects (Debezium and Kafka Connect write the primary key columns as `{ "id": 1 }`, possibly
 * inside `{ schema, payload }`), JSON primitives, or plain text (a string key that is not JSON); the
 * last two only for a single key column.
 */
import { RecordDecodeError } from '../errors.js';
import { JsonNumberText } from '../records/json-to-value.js';
import { convertPrimitive } from '../mapping/convert-row.js';
import { parseJsonBytes } from '../records/parse-json.js';
import { readPath } from '../scan/read-columns.js';
import { tupleKey } from '../scan/value-key.js';
import type { Row, Value } from '../spec/types.js';
import { isJsonObject, type JsonObject, unwrapConnectEnvelope } from './debezium-envelope.js';
import type { KeyColumn } from '../routing/table-mode.js';

export interface ChangeKey {
  /** Values in key column order. */
  values: Value[];
  /** Equal exactly when the values are equal (the same rule equality deletes use). */
  text: string;
}

function noKey(message: string): never {
  throw new RecordDecodeError(`no usable key: ${message}`, 'map');
}

function makeKey(values: Value[]): ChangeKey {
  return { values, text: tupleKey(values) };
}

/** `order_id=1000, region=EU`, for messages. Never throws. */
export function describeKey(columns: readonly KeyColumn[], key: ChangeKey): string {
  return columns
    .map((c, i) => {
      const v = key.values[i];
      return `${c.name}=${v instanceof Uint8Array ? `0x${Buffer.from(v).toString('hex')}` : String(v)}`;
    })
    .join(', ');
}

/** The key of a mapped row. @throws RecordDecodeError when a key column is null */
export function keyFromRow(row: Row, columns: readonly KeyColumn[]): ChangeKey {
  return makeKey(
    columns.map((c) => {
      const v = readPath(row, c.path);
      if (v === null) noKey(`key column '${c.name}' is null`);
      return v;
    }),
  );
}

function readJsonPath(obj: JsonObject, path: readonly string[]): unknown {
  let current: unknown = obj;
  for (const p of path) {
    if (!isJsonObject(current) || !Object.hasOwn(current, p)) return undefined;
    current = current[p];
  }
  return current;
}

/**
 * The key of a JSON object holding the key columns (a Debezium row image, a Kafka key object), or
 * undefined when any key column is missing or null there.
 * @throws RecordDecodeError when a key value does not fit its column's type
 */
export function keyFromJson(
  obj: JsonObject,
  columns: readonly KeyColumn[],
  what: string,
): ChangeKey | undefined {
  const values: Value[] = [];
  for (const c of columns) {
    const v = convertPrimitive(c.type, c.coercion, readJsonPath(obj, c.path), `${what}.${c.name}`);
    if (v === null) return undefined;
    values.push(v);
  }
  return makeKey(values);
}

/** Raw key bytes → the decoded key: JSON when they parse, else their text (a plain string key). */
function decodeRawKey(bytes: Uint8Array): { json: unknown } | { text: string } {
  try {
    return { json: parseJsonBytes(bytes, 'key') };
  } catch {
    return { text: Buffer.from(bytes).toString('utf8') };
  }
}

/**
 * The key a Kafka record key gives: a decoded key (JSON-like, from the route's key format) or the
 * raw key bytes (Uint8Array, when the route decodes no keys: read as JSON, else as plain text).
 * @throws RecordDecodeError when the key lacks a key column, does not fit the column types, or is a
 *   primitive while the table has several key columns
 */
export function keyFromKafkaKey(key: unknown, columns: readonly KeyColumn[]): ChangeKey {
  const raw = key instanceof Uint8Array ? key : undefined;
  const decoded = raw ? decodeRawKey(raw) : { json: key };
  const text = 'text' in decoded ? decoded.text : undefined;
  const json = 'json' in decoded ? unwrapConnectEnvelope(decoded.json) : undefined;
  if (text === undefined && isJsonObject(json)) {
    const found = keyFromJson(json, columns, 'key');
    if (!found) noKey(`the Kafka key has no ${columns.map((c) => `'${c.name}'`).join(', ')}`);
    return found;
  }
  if (columns.length !== 1) {
    noKey(`the Kafka key is not a JSON object, but the table's key has ${columns.length} columns`);
  }
  const [column] = columns;
  if (column.type === 'string') {
    if (text === undefined && typeof json === 'string') return makeKey([json]);
    // A string column takes raw key bytes' text as it is, whether or not it happens to parse as JSON.
    if (raw) return makeKey([Buffer.from(raw).toString('utf8')]);
  }
  if (text !== undefined) noKey(`the Kafka key '${text.slice(0, 40)}' is neither JSON nor a string column`);
  const kind = raw ? 'JSON ' : '';
  if (json === null || json === undefined) noKey(`the Kafka key is ${kind}null`);
  if (Array.isArray(json)) noKey(`the Kafka key is ${raw ? 'a JSON' : 'an'} array`);
  // Keys are often numbers serialised as strings ("1000"): an integer column reads their digits.
  const integer = column.type === 'int' || column.type === 'long';
  const value = integer && typeof json === 'string' && /^-?\d+$/.test(json) ? new JsonNumberText(json) : json;
  return makeKey([convertPrimitive(column.type, column.coercion, value, `key.${column.name}`)]);
}
