/**
 * Strict checks of REST request bodies for the test catalog server, after the OpenAPI's schemas
 * (CommitTableRequest, TableRequirement, TableUpdate, CreateTableRequest). The spec requires a 400 for any
 * unknown update or requirement; this server also answers 400 for a malformed one (a missing or mistyped
 * required field), so a client that builds bodies wrong cannot pass tests by luck.
 */
import type { TableRequirement, TableUpdate } from '../../functions/core/catalog/requirements-updates.js';
import { parseJsonLossless } from '../../functions/core/spec/json-codec.js';

export class BadRequest extends Error {}

type Json = Record<string, unknown>;

function object(value: unknown, path: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new BadRequest(`${path}: expected an object`);
  return value as Json;
}

function array(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) throw new BadRequest(`${path}: expected an array`);
  return value;
}

function isInteger(value: unknown): boolean {
  return typeof value === 'bigint' || (typeof value === 'number' && Number.isInteger(value));
}

function integer(obj: Json, key: string, path: string, nullable = false): void {
  if (!(key in obj)) throw new BadRequest(`${path}.${key}: required`);
  const value = obj[key];
  if (nullable && value === null) return;
  if (!isInteger(value)) throw new BadRequest(`${path}.${key}: expected an integer`);
}

/** Snapshot ids are bigints in floe's model; parseJsonLossless yields numbers for those below 2^53. */
function toSnapshotId(value: unknown): unknown {
  return typeof value === 'number' ? BigInt(value) : value;
}

function string(obj: Json, key: string, path: string): void {
  if (typeof obj[key] !== 'string') throw new BadRequest(`${path}.${key}: expected a string`);
}

function stringMap(value: unknown, path: string): void {
  for (const [k, v] of Object.entries(object(value, path))) {
    if (typeof v !== 'string') throw new BadRequest(`${path}.${k}: expected a string`);
  }
}

function structType(value: unknown, path: string): void {
  const obj = object(value, path);
  if (obj.type !== 'struct') throw new BadRequest(`${path}.type: expected 'struct'`);
  array(obj.fields, `${path}.fields`).forEach((f, i) => {
    const field = object(f, `${path}.fields[${i}]`);
    integer(field, 'id', `${path}.fields[${i}]`);
    string(field, 'name', `${path}.fields[${i}]`);
    if (typeof field.required !== 'boolean')
      throw new BadRequest(`${path}.fields[${i}].required: expected a boolean`);
    if (typeof field.type !== 'string' && (typeof field.type !== 'object' || field.type === null)) {
      throw new BadRequest(`${path}.fields[${i}].type: expected a type`);
    }
  });
}

const REQUIREMENT_FIELDS: Record<string, (obj: Json, path: string) => void> = {
  'assert-create': () => {},
  'assert-table-uuid': (o, p) => string(o, 'uuid', p),
  'assert-ref-snapshot-id': (o, p) => {
    string(o, 'ref', p);
    integer(o, 'snapshot-id', p, true);
  },
  'assert-last-assigned-field-id': (o, p) => integer(o, 'last-assigned-field-id', p),
  'assert-current-schema-id': (o, p) => integer(o, 'current-schema-id', p),
  'assert-last-assigned-partition-id': (o, p) => integer(o, 'last-assigned-partition-id', p),
  'assert-default-spec-id': (o, p) => integer(o, 'default-spec-id', p),
  'assert-default-sort-order-id': (o, p) => integer(o, 'default-sort-order-id', p),
};

/** Updates the spec defines that this server does not apply: still not "unknown", but refused with 400. */
const KNOWN_UNSUPPORTED = new Set([
  'set-statistics',
  'remove-statistics',
  'set-partition-statistics',
  'remove-partition-statistics',
  'remove-partition-specs',
  'remove-schemas',
  'add-encryption-key',
  'remove-encryption-key',
  'add-view-version',
  'set-current-view-version',
]);

const UPDATE_FIELDS: Record<string, (obj: Json, path: string) => void> = {
  'assign-uuid': (o, p) => string(o, 'uuid', p),
  'upgrade-format-version': (o, p) => integer(o, 'format-version', p),
  'add-schema': (o, p) => structType(o.schema, `${p}.schema`),
  'set-current-schema': (o, p) => integer(o, 'schema-id', p),
  'add-spec': (o, p) => array(object(o.spec, `${p}.spec`).fields, `${p}.spec.fields`),
  'set-default-spec': (o, p) => integer(o, 'spec-id', p),
  'add-sort-order': (o, p) => {
    const order = object(o['sort-order'], `${p}.sort-order`);
    integer(order, 'order-id', `${p}.sort-order`);
    array(order.fields, `${p}.sort-order.fields`);
  },
  'set-default-sort-order': (o, p) => integer(o, 'sort-order-id', p),
  'add-snapshot': (o, p) => {
    const snap = object(o.snapshot, `${p}.snapshot`);
    integer(snap, 'snapshot-id', `${p}.snapshot`);
    integer(snap, 'timestamp-ms', `${p}.snapshot`);
    string(snap, 'manifest-list', `${p}.snapshot`);
    const summary = object(snap.summary, `${p}.snapshot.summary`);
    if (!['append', 'replace', 'overwrite', 'delete'].includes(String(summary.operation))) {
      throw new BadRequest(`${p}.snapshot.summary.operation: expected append, replace, overwrite or delete`);
    }
  },
  'set-snapshot-ref': (o, p) => {
    string(o, 'ref-name', p);
    integer(o, 'snapshot-id', p);
    if (o.type !== 'branch' && o.type !== 'tag')
      throw new BadRequest(`${p}.type: expected 'branch' or 'tag'`);
  },
  'remove-snapshots': (o, p) =>
    array(o['snapshot-ids'], `${p}.snapshot-ids`).forEach((id, i) => {
      if (!isInteger(id)) throw new BadRequest(`${p}.snapshot-ids[${i}]: expected an integer`);
    }),
  'remove-snapshot-ref': (o, p) => string(o, 'ref-name', p),
  'set-location': (o, p) => string(o, 'location', p),
  'set-properties': (o, p) => stringMap(o.updates, `${p}.updates`),
  'remove-properties': (o, p) =>
    array(o.removals, `${p}.removals`).forEach((r, i) => {
      if (typeof r !== 'string') throw new BadRequest(`${p}.removals[${i}]: expected a string`);
    }),
};

export interface CommitTableBody {
  identifier?: { namespace: string[]; name: string };
  requirements: TableRequirement[];
  updates: TableUpdate[];
}

/** @throws BadRequest naming the first problem */
export function validateCommitBody(value: unknown): CommitTableBody {
  const body = object(value, 'body');
  if (body.identifier !== undefined) {
    const ident = object(body.identifier, 'identifier');
    array(ident.namespace, 'identifier.namespace');
    string(ident, 'name', 'identifier');
  }
  array(body.requirements, 'requirements').forEach((r, i) => {
    const req = object(r, `requirements[${i}]`);
    const check = REQUIREMENT_FIELDS[String(req.type)];
    if (!check) throw new BadRequest(`requirements[${i}]: unknown requirement type '${String(req.type)}'`);
    check(req, `requirements[${i}]`);
  });
  array(body.updates, 'updates').forEach((u, i) => {
    const update = object(u, `updates[${i}]`);
    const action = String(update.action);
    if (KNOWN_UNSUPPORTED.has(action))
      throw new BadRequest(`updates[${i}]: '${action}' is not supported by this server`);
    const check = UPDATE_FIELDS[action];
    if (!check) throw new BadRequest(`updates[${i}]: unknown update action '${action}'`);
    check(update, `updates[${i}]`);
  });
  normalizeSnapshotIds(body);
  return body as unknown as CommitTableBody;
}

/** Turns every snapshot id of a validated commit body into a bigint, in place. */
function normalizeSnapshotIds(body: Json): void {
  for (const r of body.requirements as Json[]) {
    if (r.type === 'assert-ref-snapshot-id') r['snapshot-id'] = toSnapshotId(r['snapshot-id']);
  }
  for (const u of body.updates as Json[]) {
    if (u.action === 'add-snapshot') {
      const snapshot = u.snapshot as Json;
      snapshot['snapshot-id'] = toSnapshotId(snapshot['snapshot-id']);
      if (snapshot['parent-snapshot-id'] !== undefined) {
        snapshot['parent-snapshot-id'] = toSnapshotId(snapshot['parent-snapshot-id']);
      }
    } else if (u.action === 'set-snapshot-ref') {
      u['snapshot-id'] = toSnapshotId(u['snapshot-id']);
    } else if (u.action === 'remove-snapshots') {
      u['snapshot-ids'] = (u['snapshot-ids'] as unknown[]).map(toSnapshotId);
    }
  }
}

export interface CreateTableBody {
  name: string;
  location?: string;
  schema: Json;
  'partition-spec'?: Json;
  'write-order'?: Json;
  properties?: Record<string, string>;
  'stage-create'?: boolean;
}

/** @throws BadRequest naming the first problem */
export function validateCreateTableBody(value: unknown): CreateTableBody {
  const body = object(value, 'body');
  string(body, 'name', 'body');
  structType(body.schema, 'schema');
  if (body.location !== undefined) string(body, 'location', 'body');
  if (body['partition-spec'] !== undefined)
    array(object(body['partition-spec'], 'partition-spec').fields, 'partition-spec.fields');
  if (body['write-order'] !== undefined) object(body['write-order'], 'write-order');
  if (body.properties !== undefined) stringMap(body.properties, 'properties');
  if (body['stage-create'] === true) throw new BadRequest('stage-create is not supported by this server');
  return body as unknown as CreateTableBody;
}

/** @throws BadRequest when the body is not a JSON object */
export function parseBody(text: string): Record<string, unknown> {
  let json: unknown;
  try {
    json = parseJsonLossless(text);
  } catch {
    throw new BadRequest('request body is not JSON');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new BadRequest('request body is not a JSON object');
  }
  return json as Record<string, unknown>;
}

/** The spec's IcebergErrorResponse. */
export function errorBody(code: number, type: string, message: string): unknown {
  return { error: { message, type, code } };
}
