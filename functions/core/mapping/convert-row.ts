/**
 * The row conversion with type rules: a decoded object → a Row of a struct type, each value by the
 * rule at its column path (coercions.ts) when there is one, else by the plain JSON conversion
 * (json-to-value.ts). Shared by the append mapping (record-mapper.ts) and CDC row images.
 */
import { RecordDecodeError } from '../errors.js';
import type { IcebergType, PrimitiveType, Row, StructType, Value } from '../spec/types.js';
import { describeJsonValue, jsonToValue } from '../records/json-to-value.js';
import { type Coercion, coerceValue, fitValue } from './coercions.js';
import { isFieldObject, ownValue, type ValueObject } from './value-paths.js';

const MAX_DEPTH = 64;

function fail(path: string, message: string): never {
  throw new RecordDecodeError(`${path}: ${message}`, 'map');
}

/**
 * Converts objects to rows by `coercions` (keyed by dotted column path; list elements share their
 * list's path). `path` prefixes error paths (`after` → `after.amount: ...`).
 * @throws RecordDecodeError (stage map) naming the value's path
 */
export function compileRowConversion(
  coercions: ReadonlyMap<string, Coercion>,
): (type: StructType, obj: ValueObject, path?: string) => Row {
  const convert = (type: IcebergType, v: unknown, path: string, rulePath: string, depth: number): Value => {
    if (v === null || v === undefined) return null;
    if (depth > MAX_DEPTH) fail(path, `nested deeper than ${MAX_DEPTH} levels`);
    if (typeof type === 'string') return convertPrimitive(type, coercions.get(rulePath), v, path);
    if (type.type === 'struct') {
      if (!isFieldObject(v)) fail(path, `expected an object, got ${describeJsonValue(v)}`);
      return convertStruct(type, v, path, rulePath, depth + 1);
    }
    if (type.type === 'list') {
      if (!Array.isArray(v)) fail(path, `expected an array, got ${describeJsonValue(v)}`);
      return v.map((item, i) => {
        const value = convert(type.element, item, `${path}[${i}]`, rulePath, depth + 1);
        if (value === null && type['element-required']) fail(`${path}[${i}]`, 'element is required but null');
        return value;
      });
    }
    return jsonToValue(type, v, path, depth);
  };
  const convertStruct = (
    type: StructType,
    obj: ValueObject,
    path: string,
    rulePath: string,
    depth: number,
  ): Row => {
    const row: Row = {};
    for (const field of type.fields) {
      const fieldPath = path ? `${path}.${field.name}` : field.name;
      const fieldRulePath = rulePath ? `${rulePath}.${field.name}` : field.name;
      const value = convert(field.type, ownValue(obj, field.name), fieldPath, fieldRulePath, depth);
      if (value === null && field.required) fail(fieldPath, 'is required but missing or null');
      row[field.name] = value;
    }
    return row;
  };
  return (type, obj, path = '') => convertStruct(type, obj, path, '', 0);
}

/**
 * One primitive value by its rule (else the plain conversion): what compileRowConversion does at a
 * leaf, for values read outside a row (CDC keys).
 * @throws RecordDecodeError (stage map) naming `path`
 */
export function convertPrimitive(
  type: PrimitiveType,
  coercion: Coercion | undefined,
  v: unknown,
  path: string,
): Value {
  if (v === null || v === undefined) return null;
  if (!coercion) return jsonToValue(type, v, path);
  return fitValue(coerceValue(coercion, v, path), coercion.type, type, path);
}
