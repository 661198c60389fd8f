/**
 * PROTOTYPE (bench only, not used by floe): JSON → Row compiled once per schema, instead of
 * functions/core/ingest/json-to-value.ts walking the type tree per value. What it removes per record:
 * a field-path string built for every field and list element (`${path}.${name}`, `${path}[${i}]`, used
 * only in error messages), `decimalParams` re-parsing `decimal(P, S)` with a regex for every value,
 * and the number → text → regex → BigInt round trip for ordinary integers. Error paths are built only
 * when a value fails, while the error unwinds. Types it has no fast path for go to jsonToValue.
 */
import { RecordDecodeError } from '../../../functions/core/errors.js';
import { parseDecimalText } from '../../../functions/core/ingest/decimal-text.js';
import { JsonNumberText, jsonToValue } from '../../../functions/core/ingest/json-to-value.js';
import { decimalParams } from '../../../functions/core/spec/conversions.js';
import type {
  IcebergType,
  PrimitiveType,
  Row,
  StructType,
  Value,
} from '../../../functions/core/spec/types.js';
import { parseIsoTimestamp } from '../../../functions/core/ingest/parse-temporal.js';

type Convert = (v: unknown) => Value;

const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
const LONE_SURROGATE = /\p{Cs}/u;

/** A failure below some field, with the path segments collected while unwinding. */
class PathError extends Error {
  constructor(
    readonly segments: string[],
    readonly detail: string,
  ) {
    super(detail);
  }
}

function fail(detail: string): never {
  throw new PathError([], detail);
}

/** Runs the current converter with a throwaway path, turning its `: message` into a PathError. */
function viaCurrent(type: IcebergType, v: unknown): Value {
  try {
    return jsonToValue(type, v, '');
  } catch (error) {
    if (error instanceof RecordDecodeError) throw new PathError([], error.message.replace(/^: /, ''));
    throw error;
  }
}

function compilePrimitive(type: PrimitiveType): Convert {
  switch (type) {
    case 'string':
      return (v) => {
        if (typeof v !== 'string') return viaCurrent(type, v);
        if (LONE_SURROGATE.test(v)) return viaCurrent(type, v);
        return v;
      };
    case 'long':
      return (v) => (typeof v === 'number' && Number.isSafeInteger(v) ? BigInt(v) : viaCurrent(type, v));
    case 'int':
      return (v) =>
        typeof v === 'number' && Number.isInteger(v) && v >= -(2 ** 31) && v <= 2 ** 31 - 1
          ? v === 0
            ? 0
            : v
          : viaCurrent(type, v);
    case 'timestamp':
    case 'timestamptz':
      return (v) => {
        if (typeof v !== 'string') return viaCurrent(type, v);
        let micros: bigint;
        try {
          micros = parseIsoTimestamp(v);
        } catch {
          return viaCurrent(type, v);
        }
        return micros < LONG_MIN || micros > LONG_MAX ? viaCurrent(type, v) : micros;
      };
  }
  const decimal = decimalParams(type);
  if (decimal) {
    const { precision, scale } = decimal;
    return (v) => {
      const text =
        typeof v === 'number' && Number.isFinite(v)
          ? String(v)
          : v instanceof JsonNumberText
            ? v.text
            : typeof v === 'string'
              ? v
              : undefined;
      if (text === undefined) return viaCurrent(type, v);
      try {
        return parseDecimalText(text, precision, scale, '');
      } catch {
        return viaCurrent(type, v);
      }
    };
  }
  return (v) => viaCurrent(type, v);
}

function compileType(type: IcebergType): Convert {
  if (typeof type === 'string') return compilePrimitive(type);
  if (type.type === 'struct') {
    const row = compileStruct(type);
    return (v) => {
      if (typeof v !== 'object' || v === null || Array.isArray(v) || v instanceof JsonNumberText) {
        return viaCurrent(type, v);
      }
      return row(v as Record<string, unknown>);
    };
  }
  if (type.type === 'list') {
    const element = compileType(type.element);
    const required = type['element-required'];
    return (v) => {
      if (!Array.isArray(v)) return viaCurrent(type, v);
      const out: Value[] = new Array(v.length);
      for (let i = 0; i < v.length; i++) {
        const item = v[i];
        try {
          const value = item === null || item === undefined ? null : element(item);
          if (value === null && required) fail('element is required but null');
          out[i] = value;
        } catch (error) {
          if (error instanceof PathError) error.segments.unshift(`[${i}]`);
          throw error;
        }
      }
      return out;
    };
  }
  return (v) => viaCurrent(type, v);
}

/** A converter for one struct: JSON object → Row. */
export function compileStruct(type: StructType): (obj: Record<string, unknown>) => Row {
  const fields = type.fields.map((f) => ({
    name: f.name,
    required: f.required,
    convert: compileType(f.type),
  }));
  return (obj) => {
    const row: Row = {};
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i];
      const raw = obj[f.name];
      try {
        const value = raw === null || raw === undefined ? null : f.convert(raw);
        if (value === null && f.required) fail('is required but missing or null');
        row[f.name] = value;
      } catch (error) {
        if (error instanceof PathError) error.segments.unshift(f.name);
        throw error;
      }
    }
    return row;
  };
}

/** The compiled converter with the current function's error contract (RecordDecodeError `path: message`). */
export function compileJsonToRow(type: StructType): (obj: Record<string, unknown>) => Row {
  const convert = compileStruct(type);
  return (obj) => {
    try {
      return convert(obj);
    } catch (error) {
      if (!(error instanceof PathError)) throw error;
      const path = error.segments.reduce((p, s) => (s.startsWith('[') || p === '' ? p + s : `${p}.${s}`), '');
      throw new RecordDecodeError(`${path}: ${error.detail}`, 'map');
    }
  };
}
