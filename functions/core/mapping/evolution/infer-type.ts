/**
 * The Iceberg type a new column gets from the values a batch brings: booleans → boolean, integers →
 * long (int would have to be promoted at the first large value), other numbers → double, text →
 * string, bytes → binary, objects → structs, arrays → lists of the elements' common type. A type the
 * mapping declares (a type hint) wins over the value. Values that say nothing (null, {}, [], [null])
 * give no type yet: the column is added when a batch brings a real value.
 *
 * Types come out with field ids 0; `assignFreshIds` numbers them when the column is added.
 */
import { SchemaEvolutionError } from '../../errors.js';
import type { IcebergType, PrimitiveType, StructField } from '../../spec/types.js';
import { describeJsonValue, JsonNumberText } from '../../records/json-to-value.js';
import { isFieldObject } from '../value-paths.js';
import { samePrimitive } from './promotions.js';

/**
 * A value the table cannot take without an incompatible change; the message is the DLQ reason. A
 * SchemaEvolutionError (no retry can help): reconcileSchema catches it per record, so it does not
 * reach a caller as it is.
 */
export class IncompatibleValueError extends SchemaEvolutionError {}

export const MAX_DEPTH = 64;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;

function reject(path: string, message: string): never {
  throw new IncompatibleValueError(`${path}: ${message}`);
}

/** The exact text of a numeric value, or undefined for anything else. */
export function numericTextOf(v: unknown): string | undefined {
  if (v instanceof JsonNumberText) return v.text;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : undefined;
  return undefined;
}

/** An integer's value when `v` is an integer (number, bigint or integer text), else undefined. */
export function integerOf(v: unknown): bigint | undefined {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : undefined;
  if (v instanceof JsonNumberText) return /^-?\d+$/.test(v.text) ? BigInt(v.text) : undefined;
  return undefined;
}

/** Checks a name a JSON key gives a new column. */
export function checkNewName(name: string, path: string): void {
  if (name === '') reject(path, 'a field with an empty name cannot become a column');
  // Rows are JavaScript objects, where `__proto__` is not an ordinary key.
  if (name === '__proto__')
    reject(path, "a field named '__proto__' cannot become a column; rename it in the mapping");
  if (name.includes('.')) {
    reject(
      path,
      `field name '${name}' contains '.', which separates nested columns; exclude it in the mapping`,
    );
  }
}

/**
 * The type for a value of a column not in the table yet; undefined when the value carries no type.
 * @throws IncompatibleValueError when no type fits (mixed element types, an integer beyond long, ...)
 */
export function inferType(
  v: unknown,
  path: string,
  rulePath: string,
  hints: ReadonlyMap<string, PrimitiveType>,
  depth = 0,
): IcebergType | undefined {
  if (v === null || v === undefined) return undefined;
  const hint = hints.get(rulePath);
  if (hint) return hint;
  if (depth > MAX_DEPTH) reject(path, `nested deeper than ${MAX_DEPTH} levels`);
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'string') return 'string';
  if (v instanceof Uint8Array) return 'binary';
  const integer = integerOf(v);
  if (integer !== undefined) {
    if (integer < LONG_MIN || integer > LONG_MAX) {
      reject(
        path,
        `integer ${integer} is beyond the long range; give the column a decimal type in the mapping`,
      );
    }
    return 'long';
  }
  if (numericTextOf(v) !== undefined) return 'double';
  if (Array.isArray(v)) {
    let element: IcebergType | undefined;
    v.forEach((item, i) => {
      const t = inferType(item, `${path}[${i}]`, rulePath, hints, depth + 1);
      if (t !== undefined) element = element === undefined ? t : unifyTypes(element, t, `${path}[${i}]`);
    });
    if (element === undefined) return undefined;
    return { type: 'list', 'element-id': 0, 'element-required': false, element };
  }
  if (isFieldObject(v)) {
    const fields: StructField[] = [];
    for (const [name, item] of Object.entries(v)) {
      const childPath = `${path}.${name}`;
      const t = inferType(item, childPath, `${rulePath}.${name}`, hints, depth + 1);
      if (t === undefined) continue;
      checkNewName(name, childPath);
      fields.push({ id: 0, name, required: false, type: t });
    }
    return fields.length === 0 ? undefined : { type: 'struct', fields };
  }
  return reject(path, `${describeJsonValue(v)} has no Iceberg type (a ${Object.prototype.toString.call(v)})`);
}

/**
 * The one type two inferred types share: equal types, long and double → double, structs merged
 * field by field, lists by element.
 * @throws IncompatibleValueError for anything else (text and numbers, objects and lists, ...)
 */
export function unifyTypes(a: IcebergType, b: IcebergType, path: string): IcebergType {
  if (typeof a === 'string' && typeof b === 'string') {
    if (samePrimitive(a, b)) return a;
    const pair = new Set([a, b]);
    if (pair.has('long') && pair.has('double')) return 'double';
    return reject(path, `values of different kinds (${a} and ${b}) for one new column`);
  }
  if (typeof a !== 'string' && typeof b !== 'string') {
    if (a.type === 'list' && b.type === 'list') {
      return { ...a, element: unifyTypes(a.element, b.element, `${path}[]`) };
    }
    if (a.type === 'struct' && b.type === 'struct') {
      const fields = a.fields.map((f) => ({ ...f }));
      for (const g of b.fields) {
        const f = fields.find((x) => x.name === g.name);
        if (f) f.type = unifyTypes(f.type, g.type, `${path}.${g.name}`);
        else fields.push({ ...g });
      }
      return { type: 'struct', fields };
    }
  }
  const kind = (t: IcebergType) => (typeof t === 'string' ? t : t.type);
  return reject(path, `values of different kinds (${kind(a)} and ${kind(b)}) for one new column`);
}

/** A copy of an inferred type with fresh ids from `next()`, parents before children. */
export function assignFreshIds(type: IcebergType, next: () => number): IcebergType {
  if (typeof type === 'string') return type;
  if (type.type === 'struct') {
    const ids = type.fields.map(() => next());
    return {
      type: 'struct',
      fields: type.fields.map((f, i) => ({ ...f, id: ids[i], type: assignFreshIds(f.type, next) })),
    };
  }
  if (type.type === 'list') {
    const elementId = next();
    return { ...type, 'element-id': elementId, element: assignFreshIds(type.element, next) };
  }
  const keyId = next();
  const valueId = next();
  return {
    ...type,
    'key-id': keyId,
    'value-id': valueId,
    key: assignFreshIds(type.key, next),
    value: assignFreshIds(type.value, next),
  };
}
