import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import {
  ancestors,
  currentSchema,
  currentSnapshot,
  defaultSpec,
  newTableMetadata,
  parseTableMetadata,
  schemaById,
  serializeTableMetadata,
  snapshotById,
  sortOrderById,
  specById,
} from '../../../functions/core/spec/metadata.js';
import { parsePartitionExpression, parseSortOrder } from '../../../functions/core/spec/partition-spec.js';
import type { Schema, Snapshot, TableMetadata } from '../../../functions/core/spec/types.js';
import { deleteAt, getAt, setAt } from './json-edit.js';

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  'identifier-field-ids': [1],
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'ts', required: false, type: 'timestamptz' },
    {
      id: 3,
      name: 'tags',
      required: false,
      type: {
        type: 'map',
        'key-id': 4,
        key: 'string',
        'value-id': 5,
        value: 'string',
        'value-required': false,
      },
    },
  ],
};

const javaFixture = await readFile(
  new URL('../../fixtures/iceberg-java-v2-metadata.json', import.meta.url),
  'utf8',
);

/** The Java fixture with its 63-bit snapshot ids swapped for ids below 2^53 (see the rejection test). */
const javaFixtureSafeIds = javaFixture
  .replaceAll('3051729675574597004', '3051729675574597')
  .replaceAll('7413568091240385126', '7413568091240385');

function snapshot(id: number, parent: number | undefined, sequence: number): Snapshot {
  return {
    'snapshot-id': BigInt(id),
    ...(parent === undefined ? {} : { 'parent-snapshot-id': BigInt(parent) }),
    'sequence-number': sequence,
    'timestamp-ms': 1_700_000_000_000 + sequence,
    'manifest-list': `s3://b/t/metadata/snap-${id}.avro`,
    summary: { operation: 'append', 'floe.batch-id': `b${id}` },
    'schema-id': 0,
  };
}

/** New metadata with snapshots 1 ← 2 ← 3 (main at 3), and 5 whose parent 4 was expired. */
function metadataWithHistory(): TableMetadata {
  const md = newTableMetadata({ location: 's3://b/t', schema, uuid: 'u', nowMs: 1 });
  md.snapshots = [snapshot(1, undefined, 1), snapshot(2, 1, 2), snapshot(3, 2, 3), snapshot(5, 4, 5)];
  md['last-sequence-number'] = 5;
  md['current-snapshot-id'] = 3n;
  md.refs = { main: { 'snapshot-id': 3n, type: 'branch' } };
  return md;
}

describe('newTableMetadata', () => {
  it('makes valid empty v2 metadata', () => {
    // Prepare
    const spec = parsePartitionExpression('day(ts), bucket(8, id)', schema);
    const sortOrder = parseSortOrder('id', schema);

    // Act
    const md = newTableMetadata({
      location: 's3://bucket/db/t/',
      schema,
      spec,
      sortOrder,
      properties: { 'write.format.default': 'parquet' },
      uuid: '0f9a8e7d-6c5b-4a39-8281-7f6e5d4c3b2a',
      nowMs: 1_714_569_600_000,
    });

    // Assess
    expect(md).toMatchObject({
      'format-version': 2,
      'table-uuid': '0f9a8e7d-6c5b-4a39-8281-7f6e5d4c3b2a',
      location: 's3://bucket/db/t',
      'last-sequence-number': 0,
      'last-updated-ms': 1_714_569_600_000,
      'last-column-id': 5,
      'current-schema-id': 0,
      'default-spec-id': 0,
      'last-partition-id': 1001,
      'default-sort-order-id': 1,
      'current-snapshot-id': -1n,
      refs: {},
      snapshots: [],
      'snapshot-log': [],
      'metadata-log': [],
      properties: { 'write.format.default': 'parquet' },
    });
    expect(currentSnapshot(md)).toBeUndefined();
    expect(ancestors(md)).toEqual([]);
    expect(parseTableMetadata(serializeTableMetadata(md))).toEqual(md);
  });

  it('defaults to the unpartitioned spec (last-partition-id 999) and the unsorted order 0', () => {
    const md = newTableMetadata({ location: 's3://b/t', schema });
    expect(md['partition-specs']).toEqual([{ 'spec-id': 0, fields: [] }]);
    expect(md['last-partition-id']).toBe(999);
    expect(md['sort-orders']).toEqual([{ 'order-id': 0, fields: [] }]);
    expect(md['default-sort-order-id']).toBe(0);
    expect(md['table-uuid']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('refuses a spec or sort order that does not fit the schema', () => {
    const badSpec = {
      'spec-id': 0,
      fields: [{ 'source-id': 3, 'field-id': 1000, name: 'm', transform: 'identity' as const }],
    };
    expect(() => newTableMetadata({ location: 's3://b/t', schema, spec: badSpec })).toThrow(
      /identity does not apply to 'tags'/,
    );
    const missing = {
      'spec-id': 0,
      fields: [{ 'source-id': 42, 'field-id': 1000, name: 'm', transform: 'identity' as const }],
    };
    expect(() => newTableMetadata({ location: 's3://b/t', schema, spec: missing })).toThrow(/source-id 42/);
    const badOrder = {
      'order-id': 0,
      fields: [
        {
          transform: 'identity' as const,
          'source-id': 1,
          direction: 'asc' as const,
          'null-order': 'nulls-first' as const,
        },
      ],
    };
    expect(() => newTableMetadata({ location: 's3://b/t', schema, sortOrder: badOrder })).toThrow(
      /reserved for the unsorted order/,
    );
  });
});

describe('parseTableMetadata', () => {
  it('reads metadata as Iceberg Java writes it', () => {
    // Act
    const md = parseTableMetadata(javaFixtureSafeIds);

    // Assess
    expect(currentSchema(md)['schema-id']).toBe(1);
    expect(currentSchema(md).fields.map((f) => f.name)).toContain('order_uuid');
    expect(schemaById(md, 0)?.fields[1].type).toBe('int');
    expect(defaultSpec(md).fields.map((f) => f.name)).toEqual(['order_ts_day', 'customer_id_bucket']);
    expect(sortOrderById(md, 1)?.fields[0].direction).toBe('desc');
    expect(currentSnapshot(md)?.summary.operation).toBe('overwrite');
    expect(ancestors(md).map((s) => s['snapshot-id'])).toEqual([7413568091240385n, 3051729675574597n]);
    expect(md.refs['before-backfill']).toEqual({
      'snapshot-id': 3051729675574597n,
      type: 'tag',
      'max-ref-age-ms': 2592000000,
    });
    expect(md.properties['write.parquet.compression-codec']).toBe('zstd');
    expect(md['metadata-log']).toHaveLength(3);
    expect(JSON.parse(serializeTableMetadata(md))).toEqual(JSON.parse(javaFixtureSafeIds));
  });

  it("reads Java's 63-bit snapshot ids exactly and writes them back unchanged", () => {
    const md = parseTableMetadata(javaFixture);
    expect(ancestors(md).map((s) => s['snapshot-id'])).toEqual([7413568091240385126n, 3051729675574597004n]);
    expect(md['current-snapshot-id']).toBe(7413568091240385126n);
    const text = serializeTableMetadata(md);
    expect(text).toContain('"current-snapshot-id": 7413568091240385126');
    expect(text).toContain('"parent-snapshot-id": 3051729675574597004');
    expect(parseTableMetadata(text)).toEqual(md);
  });

  it('keeps fields it does not know, at every level, through a round trip', () => {
    // Prepare
    const doc = JSON.parse(serializeTableMetadata(metadataWithHistory()));
    setAt(doc, 'x-top', { nested: [1, 'two'] });
    setAt(doc, 'schemas.0.x-schema', 'kept');
    setAt(doc, 'schemas.0.fields.2.type.x-map', true);
    setAt(doc, 'snapshots.1.x-snap', 7);
    setAt(doc, 'partition-specs.0.x-spec', 'kept');
    setAt(doc, 'statistics', [{ 'snapshot-id': 3, 'statistics-path': 's3://b/t/stats.puffin' }]);
    const text = JSON.stringify(doc);

    // Act
    const md = parseTableMetadata(text);
    const again = serializeTableMetadata(md);

    // Assess
    expect(JSON.parse(again)).toEqual(doc);
    expect(md['x-top']).toEqual({ nested: [1, 'two'] });
  });

  it.each([
    'format-version',
    'table-uuid',
    'location',
    'last-sequence-number',
    'last-updated-ms',
    'last-column-id',
    'schemas',
    'current-schema-id',
    'partition-specs',
    'default-spec-id',
    'last-partition-id',
    'sort-orders',
    'default-sort-order-id',
    'snapshots.0.manifest-list',
    'snapshots.0.sequence-number',
    'snapshots.0.summary.operation',
    'partition-specs.0.fields',
    'metadata-log.0.metadata-file',
  ])('names the missing required field %s', (path) => {
    // Prepare
    const doc = JSON.parse(javaFixtureSafeIds);
    deleteAt(doc, path);
    const jsonPath = path.replace(/\.(\d+)/g, '[$1]');

    // Act / Assess
    expect(() => parseTableMetadata(JSON.stringify(doc))).toThrow(
      new ValidationError(`table metadata: ${jsonPath}: is required`),
    );
  });

  it.each([
    ['format-version', 1, /format-version: only format versions 2 and 3 are supported, got number 1/],
    ['current-schema-id', 7, /current-schema-id: schema 7 is not among \[0, 1\]/],
    ['default-spec-id', 2, /default-spec-id: partition spec 2 is not among \[0\]/],
    ['default-sort-order-id', 9, /default-sort-order-id: sort order 9 is not among/],
    ['schemas.1.fields.7.type', 'strin', /schemas\[1\]\.fields\[7\]\.type: unknown type 'strin'/],
    [
      'partition-specs.0.fields.1.transform',
      'bucket[x]',
      /partition-specs\[0\]\.fields\[1\]\.transform: unknown partition transform/,
    ],
    [
      'sort-orders.1.fields.0.direction',
      'down',
      /sort-orders\[1\]\.fields\[0\]\.direction: expected 'asc' or 'desc'/,
    ],
    ['snapshots.0.summary.operation', 'merge', /snapshots\[0\]\.summary\.operation: expected append/],
    ['snapshots.0.summary.added-records', 1500, /snapshots\[0\]\.summary\.added-records: expected a string/],
    ['snapshots.1.sequence-number', 3, /snapshots\[1\]\.sequence-number: 3 is above last-sequence-number 2/],
    ['refs.main.snapshot-id', 1, /refs\.main\.snapshot-id: snapshot 1 is not among/],
    [
      'current-snapshot-id',
      3051729675574597,
      /current-snapshot-id: 3051729675574597 does not match refs\.main/,
    ],
    ['current-snapshot-id', -1, /current-snapshot-id: is number -1 but refs\.main points at/],
    ['properties.owner', 5, /properties\.owner: expected a string/],
    ['snapshots.1.snapshot-id', 3051729675574597, /snapshots\[1\]: duplicate snapshot-id/],
    ['sort-orders.0.order-id', 1, /sort-orders\[1\]: duplicate order-id 1/],
  ])('rejects %s = %j', (path, value, message) => {
    // Prepare
    const doc = JSON.parse(javaFixtureSafeIds);
    setAt(doc, path, value);

    // Act / Assess
    expect(() => parseTableMetadata(JSON.stringify(doc))).toThrow(message);
  });

  it('rejects text that is not a JSON object', () => {
    expect(() => parseTableMetadata('{"format-version": 2,')).toThrow(/table metadata is not JSON/);
    expect(() => parseTableMetadata('[]')).toThrow(
      'table metadata: document: expected an object, got an array',
    );
  });

  it('accepts current-snapshot-id null or absent, and derives main from it when refs are absent', () => {
    // Prepare
    const empty = JSON.parse(serializeTableMetadata(newTableMetadata({ location: 's3://b/t', schema })));
    const nulled = { ...empty, 'current-snapshot-id': null };
    const absent = { ...empty };
    delete absent['current-snapshot-id'];
    const noRefs = JSON.parse(javaFixtureSafeIds);
    deleteAt(noRefs, 'refs');

    // Act
    const parsed = [nulled, absent].map((doc) => parseTableMetadata(JSON.stringify(doc)));
    const derived = parseTableMetadata(JSON.stringify(noRefs));

    // Assess
    for (const md of parsed) expect(currentSnapshot(md)).toBeUndefined();
    expect(parsed[0]['current-snapshot-id']).toBeNull();
    expect(derived.refs).toEqual({
      main: { 'snapshot-id': BigInt(getAt(noRefs, 'current-snapshot-id') as number), type: 'branch' },
    });
    expect(currentSnapshot(derived)?.['snapshot-id']).toBe(7413568091240385n);
  });
});

describe('accessors', () => {
  it('walks ancestors newest first and stops where a parent was expired', () => {
    // Prepare
    const md = metadataWithHistory();

    // Act / Assess
    expect(ancestors(md).map((s) => s['snapshot-id'])).toEqual([3n, 2n, 1n]);
    expect(ancestors(md, 2n).map((s) => s['snapshot-id'])).toEqual([2n, 1n]);
    expect(ancestors(md, 5n).map((s) => s['snapshot-id'])).toEqual([5n]);
    expect(ancestors(md, 42n)).toEqual([]);
  });

  it('prefers refs.main over current-snapshot-id, and falls back to it without refs', () => {
    const md = metadataWithHistory();
    md.refs = { main: { 'snapshot-id': 2n, type: 'branch' } };
    expect(currentSnapshot(md)?.['snapshot-id']).toBe(2n);
    md.refs = {};
    expect(currentSnapshot(md)?.['snapshot-id']).toBe(3n);
    expect(ancestors(md).map((s) => s['snapshot-id'])).toEqual([3n, 2n, 1n]);
  });

  it('looks up by id, and throws for what metadata must contain', () => {
    const md = metadataWithHistory();
    expect(snapshotById(md, 2n)?.['parent-snapshot-id']).toBe(1n);
    expect(snapshotById(md, 4n)).toBeUndefined();
    expect(schemaById(md, 9)).toBeUndefined();
    expect(sortOrderById(md, 0)?.fields).toEqual([]);
    expect(specById(md, 0).fields).toEqual([]);
    expect(() => specById(md, 1)).toThrow(ValidationError);
    md['current-schema-id'] = 8;
    expect(() => currentSchema(md)).toThrow(/current-schema-id 8 names no schema/);
    md.refs = { main: { 'snapshot-id': 4n, type: 'branch' } };
    expect(() => currentSnapshot(md)).toThrow(/current snapshot 4 is not in the table's snapshots/);
  });
});
