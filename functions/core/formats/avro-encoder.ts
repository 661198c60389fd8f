/**
 * A table's rows back to Avro binary by the writer schema their records had (kafka-serve serving a
 * row that kept no value bytes): the inverse of avro-codec.ts and the mapping. The schema is compiled
 * by avsc with its logical types kept as markers (identity LogicalTypes that remember their attributes)
 * and every long as an exact 64-bit bigint, unions wrapped so the branch is chosen here, not guessed by
 * avsc. Each Avro type is matched once against the column it landed in (by field name; see
 * encode-values.ts for the columns a field may be in): a schema whose fields the table does not hold
 * (a renamed or coerced column) does not compile, and a row whose value cannot be given back exactly
 * is UNFIT; either way the caller serves JSON instead. Avro binary is canonical for a schema, so a row
 * that holds its record's values encodes to the record's bytes (maps in the order the table gives).
 */
import avro from 'avsc';
import { fixedLength } from '../spec/conversions.js';
import type { IcebergType, Row, StructType, Value } from '../spec/types.js';
import {
  describe,
  LOGICAL,
  LogicalMarker,
  logicalConverter,
  longConverter,
  longHook,
  mismatch,
  nonNull,
  primitiveOf,
} from './avro-encode-leaves.js';
import {
  type Convert,
  memoisedConverter,
  ShapeMismatch,
  toBytes,
  toDouble,
  toFloat,
  toInt32,
  UNFIT,
  type Unfit,
} from './encode-values.js';

export { ShapeMismatch };

function recordConverter(
  type: avro.types.RecordType,
  column: IcebergType,
  path: string,
  memo: Memo,
): Convert | ShapeMismatch {
  if (typeof column === 'string' || column.type !== 'struct')
    return mismatch(path, `a record cannot come from a ${describe(column)}`);
  const fields: [string, string, Convert][] = [];
  for (const f of type.fields) {
    const at = path ? `${path}.${f.name}` : f.name;
    const field = column.fields.find((x) => x.name === f.name);
    if (!field) {
      // A field only ever null or empty gave the table no column (its first other value would have added one).
      const empty = emptyOf(f.type);
      if (empty === UNFIT) return mismatch(at, 'the table has no column of that name');
      fields.push([f.name, f.name, () => empty]);
      continue;
    }
    const convert = converterFor(f.type, field.type, at, memo);
    if (convert instanceof ShapeMismatch) return convert;
    fields.push([f.name, field.name, convert]);
  }
  const empty = emptyOf(type);
  return (v) => {
    if (v === null || v === undefined) return empty;
    const row = v as Row;
    const out: Record<string, unknown> = {};
    for (const [name, columnName, convert] of fields) {
      const x = convert(row[columnName] ?? null);
      if (x === UNFIT) return UNFIT;
      out[name] = x;
    }
    return out;
  };
}

function unionConverter(
  type: avro.types.WrappedUnionType,
  column: IcebergType,
  path: string,
  memo: Memo,
): Convert | ShapeMismatch {
  const hasNull = type.types.some((t) => t.typeName === 'null');
  const branches: [string, Convert][] = [];
  const reasons: string[] = [];
  for (const branch of type.types) {
    if (branch.typeName === 'null') continue;
    const convert = converterFor(branch, column, path, memo);
    if (convert instanceof ShapeMismatch) reasons.push(convert.reason);
    else branches.push([branch.branchName ?? '', convert]);
  }
  if (branches.length === 0 && !hasNull) return new ShapeMismatch(reasons.join('; '));
  // The first branch that takes the value exactly: the decoder kept no branch name (an int in [int, long] goes back as int).
  return (v) => {
    if (v === null || v === undefined) return hasNull ? null : UNFIT;
    for (const [name, convert] of branches) {
      const x = convert(v);
      if (x !== UNFIT) return { [name]: x };
    }
    return UNFIT;
  };
}

type Memo = Map<avro.Type, Map<IcebergType, Convert>>;

function converterFor(
  type: avro.Type,
  column: IcebergType,
  path: string,
  memo: Memo,
): Convert | ShapeMismatch {
  return memoisedConverter(memo, type, column, () => buildConverter(type, column, path, memo));
}

function buildConverter(
  type: avro.Type,
  column: IcebergType,
  path: string,
  memo: Memo,
): Convert | ShapeMismatch {
  if (type instanceof LogicalMarker) return logicalConverter(type, column, path);
  const c = primitiveOf(column);
  const only = (ok: boolean, convert: Convert): Convert | ShapeMismatch =>
    ok ? convert : mismatch(path, `a ${type.typeName} cannot come from a ${describe(column)}`);
  switch (type.typeName) {
    case 'abstract:long':
      return longConverter(type, column, path);
    case 'null':
      return (v) => (v === null || v === undefined ? null : UNFIT);
    case 'boolean':
      return only(
        c === 'boolean',
        nonNull((v) => (typeof v === 'boolean' ? v : UNFIT)),
      );
    case 'int':
      return only(c === 'int' || c === 'long', nonNull(toInt32));
    case 'float':
      return only(c === 'float' || c === 'double' || c === 'int' || c === 'long', nonNull(toFloat));
    case 'double':
      return only(c === 'float' || c === 'double' || c === 'int' || c === 'long', nonNull(toDouble));
    case 'string':
      return only(
        c === 'string' || c === 'uuid',
        nonNull((v) => (typeof v === 'string' ? v : UNFIT)),
      );
    case 'enum': {
      const symbols = new Set((type as avro.types.EnumType).symbols);
      return only(
        c === 'string',
        nonNull((v) => (typeof v === 'string' && symbols.has(v) ? v : UNFIT)),
      );
    }
    case 'bytes':
      return only(
        c === 'binary' || c === 'string' || fixedLength(column) !== undefined,
        nonNull((v) => {
          const b = toBytes(v);
          return b === UNFIT ? UNFIT : Buffer.from(b);
        }),
      );
    case 'fixed': {
      const size = (type as avro.types.FixedType).size;
      return only(
        c === 'binary' || c === 'string' || fixedLength(column) === size,
        nonNull((v) => {
          const b = toBytes(v);
          return b === UNFIT || b.length !== size ? UNFIT : Buffer.from(b);
        }),
      );
    }
    case 'array': {
      if (typeof column === 'string' || column.type !== 'list') return only(false, () => UNFIT);
      const items = converterFor((type as avro.types.ArrayType).itemsType, column.element, `${path}[]`, memo);
      if (items instanceof ShapeMismatch) return items;
      // Null: rows written before an empty-so-far array's column was added (see emptyOf).
      return (v) => (v === null || v === undefined ? [] : mapAll(v as Value[], items));
    }
    case 'map': {
      const map = mapConverter(type as avro.types.MapType, column, path, memo);
      return map instanceof ShapeMismatch ? map : (v) => (v === null || v === undefined ? {} : map(v));
    }
    case 'record':
    case 'error':
      return recordConverter(type as avro.types.RecordType, column, path, memo);
    case 'union:wrapped':
      return unionConverter(type as avro.types.WrappedUnionType, column, path, memo);
    default:
      return mismatch(path, `Avro ${type.typeName} is not re-encoded`);
  }
}

/**
 * The value of a field whose column a row does not have, or has as null although the field cannot be
 * null: inference adds no column for null, [] or {} (they say nothing of a type), and rows written
 * before the column was added read null. So the field held its empty value: null for a nullable union,
 * an empty array or map, a record of such fields. UNFIT for a field that always has a typed value.
 */
function emptyOf(type: avro.Type): unknown {
  switch (type.typeName) {
    case 'union:wrapped':
      return (type as avro.types.WrappedUnionType).types.some((t) => t.typeName === 'null') ? null : UNFIT;
    case 'null':
      return null;
    case 'array':
      return [];
    case 'map':
      return {};
    case 'record':
    case 'error': {
      const out: Record<string, unknown> = {};
      for (const f of (type as avro.types.RecordType).fields) {
        const empty = emptyOf(f.type);
        if (empty === UNFIT) return UNFIT;
        out[f.name] = empty;
      }
      return out;
    }
    default:
      return UNFIT;
  }
}

function mapAll(values: readonly Value[], convert: Convert): unknown[] | Unfit {
  const out: unknown[] = [];
  for (const v of values) {
    const x = convert(v);
    if (x === UNFIT) return UNFIT;
    out.push(x);
  }
  return out;
}

function mapConverter(
  type: avro.types.MapType,
  column: IcebergType,
  path: string,
  memo: Memo,
): Convert | ShapeMismatch {
  if (typeof column === 'string' || column.type === 'list')
    return mismatch(path, `a map cannot come from a ${describe(column)}`);
  if (column.type === 'map') {
    if (column.key !== 'string') return mismatch(path, 'a map needs string keys');
    const values = converterFor(type.valuesType, column.value, `${path}{}`, memo);
    if (values instanceof ShapeMismatch) return values;
    return nonNull((v) => {
      const out: Record<string, unknown> = {};
      for (const [k, x] of v as Map<Value, Value>) {
        const converted = values(x);
        if (converted === UNFIT || typeof k !== 'string') return UNFIT;
        out[k] = converted;
      }
      return out;
    });
  }
  // A map the mapping inferred as a struct (one field per key seen): a null field is a key the record
  // lacked, so maps whose values may be null cannot be told apart and do not compile.
  if (type.valuesType.typeName === 'union:wrapped' || type.valuesType.typeName === 'null')
    return mismatch(
      path,
      'a map of nullable values kept as a struct cannot tell a null value from a missing key',
    );
  const fields: [string, Convert][] = [];
  for (const f of column.fields) {
    const convert = converterFor(type.valuesType, f.type, `${path}.${f.name}`, memo);
    if (convert instanceof ShapeMismatch) return convert;
    fields.push([f.name, convert]);
  }
  return nonNull((v) => {
    const out: Record<string, unknown> = {};
    for (const [name, convert] of fields) {
      const x = (v as Row)[name];
      if (x === null || x === undefined) continue;
      const converted = convert(x);
      if (converted === UNFIT) return UNFIT;
      out[name] = converted;
    }
    return out;
  });
}

/** Encodes a table's row as Avro binary, or undefined when the row cannot be given back exactly. */
export type AvroRowEncoder = (row: Row) => Buffer | undefined;

/**
 * Compiles a writer schema (and the schemas it references, dependencies first) against a table's value
 * columns (`table`, without `_kafka`).
 * @returns the encoder, or an ShapeMismatch saying which field the table does not hold as the schema has it
 * @throws Error (from avsc) when the schema is invalid
 */
export function compileAvroRowEncoder(
  schemaText: string,
  references: readonly string[],
  table: StructType,
): AvroRowEncoder | ShapeMismatch {
  const registry: Record<string, avro.Type> = {};
  const forSchema = (schema: unknown): avro.Type =>
    avro.Type.forSchema(schema as avro.Schema, {
      registry,
      typeHook: (s) => longHook(s),
      logicalTypes: LOGICAL,
      wrapUnions: 'always',
      omitRecordMethods: true,
    });
  for (const ref of references) forSchema(parseSchemaText(ref));
  const type = forSchema(parseSchemaText(schemaText));
  if (type.typeName !== 'record')
    return mismatch('', `the schema is a ${type.typeName}, not a record of the table's columns`);
  const convert = converterFor(type, table, '', new Map());
  if (convert instanceof ShapeMismatch) return convert;
  return (row) => {
    const value = convert(row);
    if (value === UNFIT) return undefined;
    try {
      return type.toBuffer(value);
    } catch {
      // avsc refusing a value the converters made (e.g. a string that is not valid for it): serve JSON.
      return undefined;
    }
  };
}

function parseSchemaText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text.trim();
  }
}
