/**
 * Reading Iceberg schemas and types from their JSON form (spec, Appendix C), checked so that everything
 * downstream may trust them: known primitives, decimal precision/scale in range, unique field ids across
 * the whole schema, unique names within each struct, identifier fields that can be keys. Keys this model
 * does not name are kept.
 */
import {
  describeJson,
  expectArray,
  expectBoolean,
  expectInteger,
  expectObject,
  expectString,
  fail,
  joinPath,
  requireKey,
} from './json-check.js';
import type {
  IcebergType,
  ListType,
  MapType,
  PrimitiveType,
  Schema,
  StructField,
  StructType,
} from './types.js';

const PLAIN_PRIMITIVES = new Set<string>([
  'boolean',
  'int',
  'long',
  'float',
  'double',
  'date',
  'time',
  'timestamp',
  'timestamptz',
  'timestamp_ns',
  'timestamptz_ns',
  'unknown',
  'variant',
  'string',
  'uuid',
  'binary',
]);

/** The geography edge-interpolation algorithms of the v3 spec. */
const EDGE_ALGORITHMS = new Set(['spherical', 'vincenty', 'thomas', 'andoyer', 'karney']);

/** True for a primitive (string-typed) Iceberg type. */
export function isPrimitive(type: IcebergType): type is PrimitiveType {
  return typeof type === 'string';
}

/** Field ids seen so far in one schema, with the path that claimed each (for duplicate messages). */
type IdRegistry = Map<number, string>;

function claimId(ids: IdRegistry, id: number, path: string): void {
  const previous = ids.get(id);
  if (previous !== undefined) fail(path, `field id ${id} is already used by ${previous || 'the root'}`);
  ids.set(id, path);
}

function parsePrimitive(text: string, path: string): PrimitiveType {
  if (PLAIN_PRIMITIVES.has(text)) return text as PrimitiveType;
  const decimal = /^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(text);
  if (decimal) {
    const precision = Number(decimal[1]);
    const scale = Number(decimal[2]);
    if (precision < 1 || precision > 38) fail(path, `decimal precision must be 1–38, got ${precision}`);
    if (scale > precision) fail(path, `decimal scale ${scale} exceeds precision ${precision}`);
    return text as PrimitiveType;
  }
  const fixed = /^fixed\[(\d+)\]$/.exec(text);
  if (fixed) {
    if (Number(fixed[1]) < 1) fail(path, 'fixed length must be at least 1');
    return text as PrimitiveType;
  }
  if (/^geometry\s*(\(\s*[^,()\s][^,()]*\))?$/.test(text)) return text as PrimitiveType;
  const geography = /^geography\s*(?:\(\s*[^,()\s][^,()]*?\s*(?:,\s*(\w+)\s*)?\))?$/.exec(text);
  if (geography) {
    const algorithm = geography[1];
    if (algorithm !== undefined && !EDGE_ALGORITHMS.has(algorithm.toLowerCase())) {
      fail(path, `unknown edge-interpolation algorithm '${algorithm}' in '${text}'`);
    }
    return text as PrimitiveType;
  }
  fail(path, `unknown type '${text}'`);
}

function parseAnyType(input: unknown, path: string, ids: IdRegistry): IcebergType {
  if (typeof input === 'string') return parsePrimitive(input, path);
  const obj = expectObject(input, path);
  const kind = requireKey(obj, 'type', path);
  switch (kind) {
    case 'struct':
      return parseStruct(obj, path, ids);
    case 'list':
      return parseList(obj, path, ids);
    case 'map':
      return parseMap(obj, path, ids);
  }
  fail(joinPath(path, 'type'), `unknown nested type ${describeJson(kind)}`);
}

function parseField(input: unknown, path: string, ids: IdRegistry): StructField {
  const obj = expectObject(input, path);
  const id = expectInteger(requireKey(obj, 'id', path), joinPath(path, 'id'), 0);
  const name = expectString(requireKey(obj, 'name', path), joinPath(path, 'name'), true);
  const required = expectBoolean(requireKey(obj, 'required', path), joinPath(path, 'required'));
  claimId(ids, id, path);
  const type = parseAnyType(requireKey(obj, 'type', path), joinPath(path, 'type'), ids);
  if (obj.doc !== undefined) expectString(obj.doc, joinPath(path, 'doc'));
  return { ...obj, id, name, required, type };
}

function parseStruct(obj: Record<string, unknown>, path: string, ids: IdRegistry): StructType {
  const fieldsPath = joinPath(path, 'fields');
  const list = expectArray(requireKey(obj, 'fields', path), fieldsPath);
  const names = new Set<string>();
  const fields = list.map((item, i) => {
    const field = parseField(item, joinPath(fieldsPath, i), ids);
    if (names.has(field.name)) fail(joinPath(fieldsPath, i), `duplicate field name '${field.name}'`);
    names.add(field.name);
    return field;
  });
  return { ...obj, type: 'struct', fields };
}

function parseList(obj: Record<string, unknown>, path: string, ids: IdRegistry): ListType {
  const elementId = expectInteger(requireKey(obj, 'element-id', path), joinPath(path, 'element-id'), 0);
  const required = expectBoolean(
    requireKey(obj, 'element-required', path),
    joinPath(path, 'element-required'),
  );
  claimId(ids, elementId, joinPath(path, 'element'));
  const element = parseAnyType(requireKey(obj, 'element', path), joinPath(path, 'element'), ids);
  return { ...obj, type: 'list', 'element-id': elementId, element, 'element-required': required };
}

function parseMap(obj: Record<string, unknown>, path: string, ids: IdRegistry): MapType {
  const keyId = expectInteger(requireKey(obj, 'key-id', path), joinPath(path, 'key-id'), 0);
  const valueId = expectInteger(requireKey(obj, 'value-id', path), joinPath(path, 'value-id'), 0);
  const required = expectBoolean(requireKey(obj, 'value-required', path), joinPath(path, 'value-required'));
  claimId(ids, keyId, joinPath(path, 'key'));
  claimId(ids, valueId, joinPath(path, 'value'));
  const key = parseAnyType(requireKey(obj, 'key', path), joinPath(path, 'key'), ids);
  const value = parseAnyType(requireKey(obj, 'value', path), joinPath(path, 'value'), ids);
  return {
    ...obj,
    type: 'map',
    'key-id': keyId,
    key,
    'value-id': valueId,
    value,
    'value-required': required,
  };
}

/**
 * Reads a type: a primitive's name (`long`, `decimal(9,2)`, `fixed[16]`) or a struct/list/map object.
 * @throws ValidationError naming the JSON path of the first problem (`fields[2].type: unknown type 'strin'`)
 */
export function parseType(input: unknown, path = ''): IcebergType {
  return parseAnyType(input, path, new Map());
}

/**
 * Reads and checks a schema's JSON (`{"type":"struct","schema-id":0,"fields":[...]}`). `path` prefixes
 * error paths (e.g. `schemas[1]` when reading metadata.json).
 * @throws ValidationError naming the JSON path of the first problem
 */
export function parseSchema(json: unknown, path = ''): Schema {
  const obj = expectObject(json, path);
  if (requireKey(obj, 'type', path) !== 'struct') {
    fail(joinPath(path, 'type'), `a schema must be a struct, got ${describeJson(obj.type)}`);
  }
  const schemaId = expectInteger(requireKey(obj, 'schema-id', path), joinPath(path, 'schema-id'), 0);
  const struct = parseStruct(obj, path, new Map());
  const schema: Schema = { ...struct, 'schema-id': schemaId };
  if (obj['identifier-field-ids'] !== undefined) {
    const idsPath = joinPath(path, 'identifier-field-ids');
    const ids = expectArray(obj['identifier-field-ids'], idsPath).map((id, i) =>
      expectInteger(id, joinPath(idsPath, i)),
    );
    ids.forEach((id, i) => {
      checkIdentifierField(schema, id, joinPath(idsPath, i));
    });
    schema['identifier-field-ids'] = ids;
  }
  return schema;
}

/**
 * An identifier field must be a required primitive (not float/double, whose NaN and ±0 make equality
 * unsound) reachable from the root through required structs only — Iceberg Java's rule.
 */
function checkIdentifierField(schema: Schema, id: number, path: string): void {
  const chain = findChain(schema, id);
  if (!chain) fail(path, `identifier field id ${id} is not a field of this schema`);
  const field = chain[chain.length - 1];
  const why = (reason: string) => fail(path, `identifier field '${field.name}' (id ${id}) ${reason}`);
  if (!isPrimitive(field.type)) why('must be a primitive');
  if (!field.required) why('must be required');
  if (field.type === 'float' || field.type === 'double') why('must not be a float or double');
  for (const parent of chain.slice(0, -1)) {
    if (!parent.required) why(`must not be nested in the optional field '${parent.name}'`);
  }
}

/** The struct fields from the root down to field `id`, or undefined when `id` is not reachable through structs alone. */
function findChain(struct: StructType, id: number): StructField[] | undefined {
  for (const field of struct.fields) {
    if (field.id === id) return [field];
    if (typeof field.type !== 'string' && field.type.type === 'struct') {
      const rest = findChain(field.type, id);
      if (rest) return [field, ...rest];
    }
  }
  return undefined;
}

/** A readable type name for messages: `long`, `list<string>`, `map<string, int>`, `struct<a: int>`. */
export function typeToString(type: IcebergType): string {
  if (typeof type === 'string') return type;
  if (type.type === 'list') return `list<${typeToString(type.element)}>`;
  if (type.type === 'map') return `map<${typeToString(type.key)}, ${typeToString(type.value)}>`;
  return `struct<${type.fields.map((f) => `${f.name}: ${typeToString(f.type)}`).join(', ')}>`;
}

/**
 * Every field id → its full dotted name, as Iceberg Java indexes names (`address.city`, list elements
 * as `tags.element`, maps as `attrs.key` / `attrs.value`).
 */
export function schemaFieldPaths(schema: StructType): Map<number, string> {
  const paths = new Map<number, string>();
  const visit = (type: IcebergType, prefix: string): void => {
    if (typeof type === 'string') return;
    const at = (name: string) => (prefix === '' ? name : `${prefix}.${name}`);
    if (type.type === 'struct') {
      for (const f of type.fields) {
        paths.set(f.id, at(f.name));
        visit(f.type, at(f.name));
      }
    } else if (type.type === 'list') {
      paths.set(type['element-id'], at('element'));
      visit(type.element, at('element'));
    } else {
      paths.set(type['key-id'], at('key'));
      paths.set(type['value-id'], at('value'));
      visit(type.key, at('key'));
      visit(type.value, at('value'));
    }
  };
  visit(schema, '');
  return paths;
}
