/**
 * The fast path of the row mapping: a decoded value → Row converter, compiled once per struct type,
 * that takes a value only when it already fits the table schema as it is — every key a known field,
 * every value of a kind its column takes without a schema change, numbers in range, no null in a
 * required column, nothing the conversion would refuse. For anything else it answers NOT_FITTING, and
 * the record goes through schema reconciliation and the general conversion (json-to-value.ts), which
 * decide what happens and explain it.
 *
 * Why it exists: most records of a stream fit the schema; walking each one twice (once to judge the
 * schema, once to convert it, each with path strings and per-value type parsing) cost more than the
 * JSON parse. For a value it takes, the row is exactly the one `jsonToRow` gives, and schema
 * reconciliation would change nothing for it (test/unit/ingest/fitting-row.test.ts checks both).
 */
import { decimalParams } from '../../spec/conversions.js';
import type { IcebergType, PrimitiveType, Row, StructType, Value } from '../../spec/types.js';
import { jsonToValue } from '../../records/json-to-value.js';
import { isFieldObject, ownValue } from '../value-paths.js';
import { parseDecimalText } from '../../records/decimal-text.js';
import { parseIsoTimestamp } from '../../records/parse-temporal.js';
import { acceptsKind } from '../evolution/value-kinds.js';

export const NOT_FITTING: unique symbol = Symbol('not fitting');
export type NotFitting = typeof NOT_FITTING;
export type Convert = (v: unknown) => Value | NotFitting;

const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
/** json-to-value.ts and the draft walker stop at 64 levels; deeper schemas take the general path. */
export const MAX_DEPTH = 60;

/** Types without a schema change for any value: only the value's kind and content matter. */
function viaGeneral(type: PrimitiveType): Convert {
  return (v) => {
    if (!acceptsKind(type, v)) return NOT_FITTING;
    try {
      return jsonToValue(type, v, '');
    } catch {
      return NOT_FITTING;
    }
  };
}

/** A primitive value → its Value when it fits the column as it is, else NOT_FITTING. */
export function compilePrimitive(type: PrimitiveType): Convert {
  switch (type) {
    case 'boolean':
      return (v) => (typeof v === 'boolean' ? v : NOT_FITTING);
    case 'int':
      // -0 becomes 0, as the general path's number → text → integer conversion makes it.
      return (v) =>
        typeof v === 'number' && Number.isInteger(v) && v >= INT_MIN && v <= INT_MAX ? v + 0 : NOT_FITTING;
    case 'long':
      return (v) => (typeof v === 'number' && Number.isSafeInteger(v) ? BigInt(v) : NOT_FITTING);
    case 'double':
      // -0 stays -0: the sign bit is part of the value (Iceberg orders -0 before +0).
      return (v) => (typeof v === 'number' && Number.isFinite(v) ? v : NOT_FITTING);
    case 'float':
      return (v) => {
        if (typeof v !== 'number' || !Number.isFinite(v)) return NOT_FITTING;
        const f = Math.fround(v);
        // Beyond a float's range the column would be promoted to double.
        return Number.isFinite(f) ? f : NOT_FITTING;
      };
    case 'string':
      // A lone surrogate cannot be stored as UTF-8: the general path refuses it with the reason.
      return (v) => (typeof v === 'string' && v.isWellFormed() ? v : NOT_FITTING);
    case 'timestamp':
    case 'timestamptz': {
      const local = type === 'timestamp';
      return (v) => {
        if (typeof v === 'number') {
          // Epoch milliseconds; every safe integer × 1000 is within the long range.
          return Number.isSafeInteger(v) ? BigInt(v) * 1000n : NOT_FITTING;
        }
        if (typeof v !== 'string') return NOT_FITTING;
        try {
          const micros = parseIsoTimestamp(v, local);
          return micros < LONG_MIN || micros > LONG_MAX ? NOT_FITTING : micros;
        } catch {
          return NOT_FITTING;
        }
      };
    }
  }
  const decimal = decimalParams(type);
  if (decimal) {
    const { precision, scale } = decimal;
    return (v) => {
      const text =
        typeof v === 'string' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined;
      if (text === undefined) return NOT_FITTING;
      try {
        // Fits precision and scale as it is: no promotion, no rejection.
        return parseDecimalText(text, precision, scale, '');
      } catch {
        return NOT_FITTING;
      }
    };
  }
  return viaGeneral(type);
}

/**
 * Which names Object.prototype has (`constructor`, `toString`, ...): those fields are read as own
 * properties only, so a record without one gives null rather than the inherited function. The others
 * take a plain read (the hot path).
 */
export function inheritedNames(names: readonly string[]): boolean[] {
  return names.map((name) => name in Object.prototype);
}

export function depthOf(type: IcebergType): number {
  if (typeof type === 'string') return 0;
  if (type.type === 'struct') return 1 + Math.max(0, ...type.fields.map((f) => depthOf(f.type)));
  if (type.type === 'list') return 1 + depthOf(type.element);
  return 1 + Math.max(depthOf(type.key), depthOf(type.value));
}

function compileType(type: IcebergType): Convert {
  if (typeof type === 'string') return compilePrimitive(type);
  if (type.type === 'struct') {
    const row = compileStruct(type);
    return (v) => (isFieldObject(v) ? row(v) : NOT_FITTING);
  }
  if (type.type === 'list') {
    const element = compileType(type.element);
    const required = type['element-required'];
    return (v) => {
      if (!Array.isArray(v)) return NOT_FITTING;
      const out: Value[] = new Array(v.length);
      for (let i = 0; i < v.length; i++) {
        const item = v[i];
        if (item === null || item === undefined) {
          if (required) return NOT_FITTING;
          out[i] = null;
          continue;
        }
        const value = element(item);
        if (value === NOT_FITTING) return NOT_FITTING;
        out[i] = value;
      }
      return out;
    };
  }
  // Maps (rare in JSON payloads) always take the general path.
  return () => NOT_FITTING;
}

function compileStruct(type: StructType): (obj: Record<string, unknown>) => Row | NotFitting {
  const names = type.fields.map((f) => f.name);
  const required = type.fields.map((f) => f.required);
  const converts = type.fields.map((f) => compileType(f.type));
  const inherited = inheritedNames(names);
  const n = names.length;
  return (obj) => {
    const row: Row = {};
    let present = 0;
    for (let i = 0; i < n; i++) {
      const name = names[i];
      const raw = inherited[i] ? ownValue(obj, name) : obj[name];
      if (raw === undefined || raw === null) {
        if (raw === null) present++;
        if (required[i]) return NOT_FITTING;
        row[name] = null;
        continue;
      }
      present++;
      const value = converts[i](raw);
      if (value === NOT_FITTING) return NOT_FITTING;
      row[name] = value;
    }
    // A key that is not a column (a new column for schema evolution) makes the record not fit.
    return Object.keys(obj).length === present ? row : NOT_FITTING;
  };
}

/**
 * The fitting-row converter of a struct (a table schema without `_kafka`). Schemas nested deeper than
 * the general path's limit get a converter that never takes a value.
 */
export function compileFittingRow(type: StructType): (obj: unknown) => Row | NotFitting {
  if (depthOf(type) > MAX_DEPTH) return () => NOT_FITTING;
  const row = compileStruct(type);
  return (obj) => (isFieldObject(obj) ? row(obj) : NOT_FITTING);
}
