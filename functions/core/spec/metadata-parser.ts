/**
 * Reading a v2 or v3 metadata.json into TableMetadata, checking every field the spec requires and the
 * cross-references Iceberg Java checks on read (current schema/spec/order exist, refs point at
 * snapshots, main agrees with current-snapshot-id, no snapshot is newer than last-sequence-number).
 * Keys this model does not name are kept as they are, in their order; nothing is rewritten except that
 * absent optional collections become empty and, as Java does, a table with a current snapshot but no
 * `refs` gets its `main` branch.
 */
import { ValidationError } from '../errors.js';
import {
  describeJson,
  expectArray,
  expectInteger,
  expectObject,
  expectString,
  fail,
  type JsonObject,
  joinPath,
  requireKey,
} from './json-check.js';
import { checkSchemasForVersion } from './format-version.js';
import { parseJsonLossless } from './json-codec.js';
import { parseSchema } from './schema.js';
import { parseTransform } from './transforms.js';
import type {
  EncryptedKey,
  FormatVersion,
  PartitionSpec,
  Snapshot,
  SnapshotId,
  SnapshotOperation,
  SnapshotRef,
  SortField,
  SortOrder,
  TableMetadata,
} from './types.js';

const OPERATIONS = new Set<string>(['append', 'replace', 'overwrite', 'delete']);

const int = (obj: JsonObject, key: string, path: string, min?: number): number =>
  expectInteger(requireKey(obj, key, path), joinPath(path, key), min);

const str = (obj: JsonObject, key: string, path: string): string =>
  expectString(requireKey(obj, key, path), joinPath(path, key), true);

/** A 64-bit id (snapshot ids): any JSON integer, exact (parseJsonLossless gives bigints past 2^53). */
function expectId(value: unknown, path: string): SnapshotId {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  return fail(path, `expected a 64-bit integer id, got ${describeJson(value)}`);
}

const id = (obj: JsonObject, key: string, path: string): SnapshotId =>
  expectId(requireKey(obj, key, path), joinPath(path, key));

function optionalInt(obj: JsonObject, key: string, path: string): void {
  if (obj[key] !== undefined && obj[key] !== null) expectInteger(obj[key], joinPath(path, key));
}

/** Each item of the array at `obj[key]` through `read`, with its own path. */
function list<T>(
  obj: JsonObject,
  key: string,
  path: string,
  read: (v: unknown, p: string) => T,
  optional = false,
) {
  const at = joinPath(path, key);
  if (optional && obj[key] === undefined) return [];
  return expectArray(requireKey(obj, key, path), at).map((item, i) => read(item, joinPath(at, i)));
}

function requireUnique<T>(items: T[], id: (item: T) => number | bigint, path: string, what: string): void {
  const seen = new Set<number | bigint>();
  items.forEach((item, i) => {
    if (seen.has(id(item))) fail(joinPath(path, i), `duplicate ${what} ${id(item)}`);
    seen.add(id(item));
  });
}

function parseSpecJson(value: unknown, path: string): PartitionSpec {
  const obj = expectObject(value, path);
  const names = new Set<string>();
  const fields = list(obj, 'fields', path, (v, p) => {
    const f = expectObject(v, p);
    const name = str(f, 'name', p);
    if (names.has(name)) fail(joinPath(p, 'name'), `duplicate partition field name '${name}'`);
    names.add(name);
    const transform = parseTransformAt(requireKey(f, 'transform', p), joinPath(p, 'transform'));
    return {
      ...f,
      'source-id': int(f, 'source-id', p, 0),
      'field-id': int(f, 'field-id', p, 0),
      name,
      transform,
    };
  });
  requireUnique(fields, (f) => f['field-id'], joinPath(path, 'fields'), 'partition field-id');
  return { ...obj, 'spec-id': int(obj, 'spec-id', path, 0), fields };
}

function parseTransformAt(value: unknown, path: string) {
  const text = expectString(value, path);
  try {
    return parseTransform(text);
  } catch (error) {
    return fail(path, (error as Error).message);
  }
}

function parseSortOrderJson(value: unknown, path: string): SortOrder {
  const obj = expectObject(value, path);
  const fields = list(obj, 'fields', path, (v, p): SortField => {
    const f = expectObject(v, p);
    const direction = requireKey(f, 'direction', p);
    if (direction !== 'asc' && direction !== 'desc') {
      fail(joinPath(p, 'direction'), `expected 'asc' or 'desc', got ${describeJson(direction)}`);
    }
    const nullOrder = requireKey(f, 'null-order', p);
    if (nullOrder !== 'nulls-first' && nullOrder !== 'nulls-last') {
      fail(
        joinPath(p, 'null-order'),
        `expected 'nulls-first' or 'nulls-last', got ${describeJson(nullOrder)}`,
      );
    }
    const transform = parseTransformAt(requireKey(f, 'transform', p), joinPath(p, 'transform'));
    return { ...f, transform, 'source-id': int(f, 'source-id', p, 0), direction, 'null-order': nullOrder };
  });
  const orderId = int(obj, 'order-id', path, 0);
  if (orderId === 0 && fields.length > 0)
    fail(joinPath(path, 'order-id'), 'order id 0 is reserved for the unsorted order');
  return { ...obj, 'order-id': orderId, fields };
}

/**
 * v3 row lineage and encryption fields of a snapshot. A snapshot from before the table's upgrade to v3
 * has no first-row-id (its rows have no row ids); one that has it must say how many it assigned.
 */
function parseSnapshotV3(obj: JsonObject, path: string): Partial<Snapshot> {
  const out: Partial<Snapshot> = {};
  if (obj['first-row-id'] !== undefined && obj['first-row-id'] !== null) {
    out['first-row-id'] = int(obj, 'first-row-id', path, 0);
    out['added-rows'] = int(obj, 'added-rows', path, 0);
  } else if (obj['added-rows'] !== undefined && obj['added-rows'] !== null) {
    out['added-rows'] = int(obj, 'added-rows', path, 0);
  }
  if (obj['key-id'] !== undefined && obj['key-id'] !== null) out['key-id'] = str(obj, 'key-id', path);
  return out;
}

function parseEncryptedKey(value: unknown, path: string): EncryptedKey {
  const obj = expectObject(value, path);
  const key: EncryptedKey = {
    ...obj,
    'key-id': str(obj, 'key-id', path),
    'encrypted-key-metadata': str(obj, 'encrypted-key-metadata', path),
  };
  if (obj['encrypted-by-id'] !== undefined) key['encrypted-by-id'] = str(obj, 'encrypted-by-id', path);
  if (obj.properties !== undefined)
    key.properties = parseStringMap(obj.properties, joinPath(path, 'properties'));
  return key;
}

function parseSnapshotJson(value: unknown, path: string, version: FormatVersion): Snapshot {
  const obj = expectObject(value, path);
  const summaryPath = joinPath(path, 'summary');
  const summary = expectObject(requireKey(obj, 'summary', path), summaryPath);
  const operation = requireKey(summary, 'operation', summaryPath);
  if (typeof operation !== 'string' || !OPERATIONS.has(operation)) {
    fail(
      joinPath(summaryPath, 'operation'),
      `expected append, replace, overwrite or delete, got ${describeJson(operation)}`,
    );
  }
  for (const [key, v] of Object.entries(summary)) expectString(v, joinPath(summaryPath, key));
  const parent = obj['parent-snapshot-id'];
  optionalInt(obj, 'schema-id', path);
  return {
    ...obj,
    ...(parent === undefined || parent === null
      ? {}
      : { 'parent-snapshot-id': expectId(parent, joinPath(path, 'parent-snapshot-id')) }),
    'snapshot-id': id(obj, 'snapshot-id', path),
    'sequence-number': int(obj, 'sequence-number', path, 0),
    'timestamp-ms': int(obj, 'timestamp-ms', path),
    'manifest-list': str(obj, 'manifest-list', path),
    summary: { ...(summary as Record<string, string>), operation: operation as SnapshotOperation },
    ...(version >= 3 ? parseSnapshotV3(obj, path) : {}),
  };
}

function parseRefJson(value: unknown, path: string): SnapshotRef {
  const obj = expectObject(value, path);
  const type = requireKey(obj, 'type', path);
  if (type !== 'branch' && type !== 'tag')
    fail(joinPath(path, 'type'), `expected 'branch' or 'tag', got ${describeJson(type)}`);
  for (const key of ['max-ref-age-ms', 'max-snapshot-age-ms', 'min-snapshots-to-keep'])
    optionalInt(obj, key, path);
  return { ...obj, 'snapshot-id': id(obj, 'snapshot-id', path), type };
}

function parseStringMap(value: unknown, path: string): Record<string, string> {
  const obj = expectObject(value, path);
  for (const [key, v] of Object.entries(obj)) expectString(v, joinPath(path, key));
  return obj as Record<string, string>;
}

function mustExist<I extends number | bigint>(ids: I[], id: I, path: string, what: string): void {
  if (!ids.includes(id)) fail(path, `${what} ${id} is not among [${ids.join(', ')}]`);
}

function parseMetadataObject(obj: JsonObject): TableMetadata {
  const version = requireKey(obj, 'format-version', '');
  if (version !== 2 && version !== 3)
    fail('format-version', `only format versions 2 and 3 are supported, got ${describeJson(version)}`);
  const schemas = list(obj, 'schemas', '', parseSchema);
  const specs = list(obj, 'partition-specs', '', parseSpecJson);
  const orders = list(obj, 'sort-orders', '', parseSortOrderJson);
  const snapshots = list(obj, 'snapshots', '', (v, p) => parseSnapshotJson(v, p, version), true);
  requireUnique(schemas, (s) => s['schema-id'], 'schemas', 'schema-id');
  requireUnique(specs, (s) => s['spec-id'], 'partition-specs', 'spec-id');
  requireUnique(orders, (o) => o['order-id'], 'sort-orders', 'order-id');
  requireUnique(snapshots, (s) => s['snapshot-id'], 'snapshots', 'snapshot-id');
  const md: TableMetadata = {
    ...obj,
    'format-version': version,
    'table-uuid': str(obj, 'table-uuid', ''),
    location: str(obj, 'location', ''),
    'last-sequence-number': int(obj, 'last-sequence-number', '', 0),
    'last-updated-ms': int(obj, 'last-updated-ms', ''),
    'last-column-id': int(obj, 'last-column-id', '', 0),
    schemas,
    'current-schema-id': int(obj, 'current-schema-id', ''),
    'partition-specs': specs,
    'default-spec-id': int(obj, 'default-spec-id', ''),
    'last-partition-id': int(obj, 'last-partition-id', ''),
    properties: obj.properties === undefined ? {} : parseStringMap(obj.properties, 'properties'),
    snapshots,
    'snapshot-log': list(
      obj,
      'snapshot-log',
      '',
      (v, p) => {
        const e = expectObject(v, p);
        return { ...e, 'snapshot-id': id(e, 'snapshot-id', p), 'timestamp-ms': int(e, 'timestamp-ms', p) };
      },
      true,
    ),
    'metadata-log': list(
      obj,
      'metadata-log',
      '',
      (v, p) => {
        const e = expectObject(v, p);
        return {
          ...e,
          'metadata-file': str(e, 'metadata-file', p),
          'timestamp-ms': int(e, 'timestamp-ms', p),
        };
      },
      true,
    ),
    'sort-orders': orders,
    'default-sort-order-id': int(obj, 'default-sort-order-id', ''),
    refs: {},
    ...(version >= 3 ? parseMetadataV3(obj) : {}),
  };
  for (const key of ['statistics', 'partition-statistics']) {
    if (obj[key] !== undefined) expectArray(obj[key], key);
  }
  checkSchemasForVersion(md);
  if (version >= 3) checkRowLineage(md);
  mustExist(
    schemas.map((s) => s['schema-id']),
    md['current-schema-id'],
    'current-schema-id',
    'schema',
  );
  mustExist(
    specs.map((s) => s['spec-id']),
    md['default-spec-id'],
    'default-spec-id',
    'partition spec',
  );
  mustExist(
    orders.map((o) => o['order-id']),
    md['default-sort-order-id'],
    'default-sort-order-id',
    'sort order',
  );
  snapshots.forEach((s, i) => {
    if (s['sequence-number'] > md['last-sequence-number']) {
      fail(
        `snapshots[${i}].sequence-number`,
        `${s['sequence-number']} is above last-sequence-number ${md['last-sequence-number']}`,
      );
    }
  });
  checkRefs(md, obj);
  return md;
}

/** next-row-id (required in v3: row lineage is always on) and encryption-keys. */
function parseMetadataV3(obj: JsonObject): Partial<TableMetadata> {
  const out: Partial<TableMetadata> = { 'next-row-id': int(obj, 'next-row-id', '', 0) };
  if (obj['encryption-keys'] !== undefined) {
    out['encryption-keys'] = list(obj, 'encryption-keys', '', parseEncryptedKey);
  }
  return out;
}

/**
 * Every snapshot's row ids lie below next-row-id: a commit sets the snapshot's first-row-id to the
 * table's next-row-id and then raises next-row-id by added-rows, so a snapshot past it means
 * next-row-id went backwards, and row ids would be handed out twice.
 */
function checkRowLineage(md: TableMetadata): void {
  const next = md['next-row-id'] ?? 0;
  md.snapshots.forEach((s, i) => {
    const first = s['first-row-id'];
    if (first === undefined) return;
    const end = first + (s['added-rows'] ?? 0);
    if (end > next) {
      fail(
        `snapshots[${i}].first-row-id`,
        `${first} + added-rows ${s['added-rows']} is above next-row-id ${next}`,
      );
    }
  });
}

/** refs, current-snapshot-id and their agreement, as Iceberg Java's TableMetadata checks them. */
function checkRefs(md: TableMetadata, obj: JsonObject): void {
  const snapshotIds = md.snapshots.map((s) => s['snapshot-id']);
  const current = obj['current-snapshot-id'];
  const parsed =
    current === undefined || current === null ? undefined : expectId(current, 'current-snapshot-id');
  const currentId = parsed === -1n ? undefined : parsed;
  if (parsed !== undefined) md['current-snapshot-id'] = parsed;
  if (currentId !== undefined) mustExist(snapshotIds, currentId, 'current-snapshot-id', 'snapshot');
  if (obj.refs === undefined) {
    if (currentId !== undefined) md.refs = { main: { 'snapshot-id': currentId, type: 'branch' } };
    return;
  }
  const refsObj = expectObject(obj.refs, 'refs');
  for (const [name, value] of Object.entries(refsObj)) {
    const ref = parseRefJson(value, joinPath('refs', name));
    mustExist(snapshotIds, ref['snapshot-id'], joinPath(joinPath('refs', name), 'snapshot-id'), 'snapshot');
    md.refs[name] = ref;
  }
  const main = md.refs.main;
  if (main && main.type !== 'branch') fail('refs.main.type', 'main must be a branch');
  if (main && currentId !== undefined && main['snapshot-id'] !== currentId) {
    fail('current-snapshot-id', `${currentId} does not match refs.main (${main['snapshot-id']})`);
  }
  if (main && currentId === undefined && current !== undefined) {
    fail('current-snapshot-id', `is ${describeJson(current)} but refs.main points at ${main['snapshot-id']}`);
  }
}

/**
 * Parses and checks a v2 or v3 metadata.json document (v3: row lineage, encryption keys, the new types
 * and default values). Snapshot ids are read exactly as bigints, whatever
 * their size (Iceberg Java's are 63-bit).
 * @throws ValidationError naming the JSON path of the first problem (`table metadata: schemas[0].fields[2].type: ...`)
 */
export function parseTableMetadata(text: string): TableMetadata {
  let json: unknown;
  try {
    json = parseJsonLossless(text);
  } catch (error) {
    throw new ValidationError(`table metadata is not JSON: ${(error as Error).message}`, { cause: error });
  }
  try {
    return parseMetadataObject(expectObject(json, ''));
  } catch (error) {
    if (error instanceof ValidationError)
      throw new ValidationError(`table metadata: ${error.message}`, { cause: error });
    throw error;
  }
}
