/**
 * Projection: a decoded record → one object whose fields are the table's columns, still as decoded
 * values (typing is the row conversion's job, and schema evolution looks at this object to learn what
 * the batch needs). Steps, in order: the value (its fields, or one column), excluded paths dropped,
 * renames/moves, flattening, the key, chosen headers, the record timestamp, defaults for what is missing.
 * Never changes the decoded record (routing and dead letters still need it).
 */
import { RecordDecodeError } from '../errors.js';
import type { KafkaHeader } from '../records/esm-event.js';
import { describeJsonValue, JsonNumberText } from '../records/json-to-value.js';
import { parseJsonBytes } from '../records/parse-json.js';
import type { DecodedRecord } from './decoded-record.js';
import type { HeaderMapping, KeyMapping, MappingConfig } from './mapping-config.js';
import {
  getAt,
  isFieldObject,
  ownValue,
  putAt,
  setOwn,
  splitPath,
  takeAt,
  type ValueObject,
} from './value-paths.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });
const INTEGER_TEXT = /^[+-]?\d+$/;

function fail(message: string): never {
  throw new RecordDecodeError(message, 'map');
}

function decodeText(bytes: Uint8Array, what: string): string {
  try {
    return utf8.decode(bytes);
  } catch {
    return fail(`${what} is not valid UTF-8`);
  }
}

function keyColumnValue(key: Extract<KeyMapping, { kind: 'column' }>, raw: unknown): unknown {
  switch (key.as) {
    case 'binary':
      if (raw instanceof Uint8Array) return raw;
      if (typeof raw === 'string') return new TextEncoder().encode(raw);
      return fail(`key: expected bytes, got ${describeJsonValue(raw)}`);
    case 'string':
      if (raw instanceof Uint8Array) return decodeText(raw, 'key');
      if (typeof raw === 'string') return raw;
      if (typeof raw === 'number' || typeof raw === 'bigint') return String(raw);
      if (raw instanceof JsonNumberText) return raw.text;
      return fail(`key: expected text, got ${describeJsonValue(raw)}`);
    case 'long': {
      const text = raw instanceof Uint8Array ? decodeText(raw, 'key').trim() : raw;
      if (typeof text === 'string') {
        if (!INTEGER_TEXT.test(text)) fail(`key: expected an integer, got ${describeJsonValue(text)}`);
        return new JsonNumberText(text);
      }
      return text;
    }
    case 'json':
      return raw instanceof Uint8Array ? parseJsonBytes(raw, 'key') : raw;
  }
}

/**
 * JSON-like equality where 5, 5n and the number text "5" are the same value. Values nested deeper
 * than 64 levels count as different (the record is refused rather than the stack overflowed).
 */
function sameValue(a: unknown, b: unknown, depth = 0): boolean {
  if (depth > 64) return false;
  const num = (v: unknown) =>
    v instanceof JsonNumberText
      ? v.text
      : typeof v === 'number' || typeof v === 'bigint'
        ? String(v)
        : undefined;
  const na = num(a);
  const nb = num(b);
  if (na !== undefined && nb !== undefined) {
    return INTEGER_TEXT.test(na) && INTEGER_TEXT.test(nb)
      ? BigInt(na) === BigInt(nb)
      : Number(na) === Number(nb);
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => sameValue(x, b[i], depth + 1));
  }
  if (isFieldObject(a) && isFieldObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => sameValue(a[k], b[k], depth + 1));
  }
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.from(a).equals(Buffer.from(b));
  return a === b;
}

function addColumn(root: ValueObject, column: string, value: unknown, what: string): void {
  if (root[column] !== undefined && root[column] !== null) {
    fail(
      `${what} goes to column '${column}', but the value has a field '${column}' too; rename one in the mapping`,
    );
  }
  root[column] = value;
}

function addKey(root: ValueObject, key: KeyMapping, raw: unknown): void {
  if (raw === null || raw === undefined) {
    if (key.required) fail('key is null, but the mapping requires a key (mapping.key.required)');
    if (key.kind === 'column') addColumn(root, key.column, null, 'the key');
    return;
  }
  if (key.kind === 'column') {
    addColumn(root, key.column, keyColumnValue(key, raw), 'the key');
    return;
  }
  const obj = raw instanceof Uint8Array ? parseJsonBytes(raw, 'key') : raw;
  if (!isFieldObject(obj))
    fail(`key: expected a JSON object (mapping.key.fields), got ${describeJsonValue(obj)}`);
  for (const [name, value] of Object.entries(obj)) {
    const column = `${key.prefix}${name}`;
    const existing = ownValue(root, column);
    // Keys usually repeat fields of the value (an order id in both): the same value is no conflict.
    if (existing !== undefined && existing !== null && !sameValue(existing, value)) {
      fail(
        `key field '${name}' is ${describeJsonValue(value)} but the value's '${column}' is ${describeJsonValue(existing)}`,
      );
    }
    setOwn(root, column, value);
  }
}

function addHeader(root: ValueObject, h: HeaderMapping, headers: KafkaHeader[]): void {
  let found: KafkaHeader | undefined;
  // Kafka allows repeated headers; like Kafka's lastHeader(), the last one counts.
  for (const header of headers) if (header.key === h.header) found = header;
  if (!found) {
    if (h.required) fail(`header '${h.header}' is missing, but the mapping requires it`);
    addColumn(root, h.column, null, `header '${h.header}'`);
    return;
  }
  if (found.value === null) {
    // A header sent with a null value: null, never an empty string or byte string.
    if (h.required) fail(`header '${h.header}' is null, but the mapping requires it`);
    addColumn(root, h.column, null, `header '${h.header}'`);
    return;
  }
  const value = h.as === 'binary' ? found.value : decodeText(found.value, `header '${h.header}'`);
  addColumn(root, h.column, value, `header '${h.header}'`);
}

function flatten(obj: ValueObject, separator: string, maxDepth: number): ValueObject {
  const out: ValueObject = {};
  const sources = new Map<string, string>();
  const visit = (o: ValueObject, prefix: string, source: string, depth: number): void => {
    for (const [k, v] of Object.entries(o)) {
      if (isFieldObject(v) && depth < maxDepth) {
        visit(v, `${prefix}${k}${separator}`, `${source}${k}.`, depth + 1);
        continue;
      }
      const column = `${prefix}${k}`;
      const other = sources.get(column);
      if (other !== undefined) {
        fail(
          `flattening gives column '${column}' twice (from '${other}' and '${source}${k}'); rename one in the mapping`,
        );
      }
      sources.set(column, `${source}${k}`);
      setOwn(out, column, v);
    }
  };
  visit(obj, '', '', 1);
  return out;
}

/**
 * The columns of one record, as decoded values.
 * @throws RecordDecodeError (stage map; decode for a key that is not valid JSON) saying what is wrong
 */
export function projectRecord(config: MappingConfig, decoded: DecodedRecord): ValueObject {
  let root: ValueObject;
  if (config.value.kind === 'column') {
    root = { [config.value.column]: decoded.value };
  } else {
    const value = decoded.value;
    if (value === null || value === undefined) fail('value is null (a tombstone) in an append table');
    if (!isFieldObject(value)) {
      fail(
        `value is not an object (${Array.isArray(value) ? 'an array' : describeJsonValue(value)}); map it with "value": { "column": ... }`,
      );
    }
    root = { ...value };
  }
  for (const path of config.exclude) takeAt(root, splitPath(path));
  const moved: [string, unknown][] = [];
  for (const rule of config.columns) {
    if (rule.from !== undefined) moved.push([rule.column, takeAt(root, splitPath(rule.from))]);
  }
  for (const [column, value] of moved) {
    if (value === undefined) continue;
    const path = splitPath(column);
    const existing = getAt(root, path);
    if (existing !== undefined && existing !== null) {
      fail(`'${column}' is both a field of the value and the target of a rename; rename one in the mapping`);
    }
    if (!putAt(root, path, value)) fail(`cannot place '${column}': a parent field is not an object`);
  }
  if (config.flatten) root = flatten(root, config.flatten.separator, config.flatten.maxDepth);
  if (config.key) addKey(root, config.key, decoded.key);
  for (const h of config.headers) addHeader(root, h, decoded.record.headers);
  if (config.timestamp) {
    const r = decoded.record;
    const none = r.timestampType === 'NO_TIMESTAMP_TYPE' || r.timestamp < 0;
    addColumn(root, config.timestamp.column, none ? null : r.timestamp, 'the record timestamp');
  }
  for (const rule of config.columns) {
    if (rule.default === undefined) continue;
    const path = splitPath(rule.column);
    if (getAt(root, path) === undefined && !putAt(root, path, rule.default)) {
      fail(`cannot place the default of '${rule.column}': a parent field is not an object`);
    }
  }
  return root;
}
