import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import { parseTableMetadata, serializeTableMetadata } from '../../../functions/core/spec/metadata.js';
import { parseType } from '../../../functions/core/spec/schema.js';
import { deleteAt, setAt } from './json-edit.js';

const fixture = await readFile(
  new URL('../../fixtures/v3/TableMetadataV3ValidMinimal.json', import.meta.url),
  'utf8',
);

/** The Java fixture with one snapshot that assigned rows 0–99 (next-row-id 100), as a JSON object. */
function withSnapshot(): Record<string, unknown> {
  const doc = JSON.parse(fixture) as Record<string, unknown>;
  doc['next-row-id'] = 100;
  doc['current-snapshot-id'] = 3051729675574597;
  doc.snapshots = [
    {
      'snapshot-id': 3051729675574597,
      'sequence-number': 34,
      'timestamp-ms': 1602638573590,
      summary: { operation: 'append' },
      'manifest-list': 's3://bucket/test/location/metadata/snap-1.avro',
      'schema-id': 0,
      'first-row-id': 0,
      'added-rows': 100,
      'key-id': 'key-1',
    },
  ];
  doc['encryption-keys'] = [
    { 'key-id': 'key-1', 'encrypted-key-metadata': 'AAEC', 'encrypted-by-id': 'kms-1' },
  ];
  return doc;
}

const parseDoc = (doc: unknown) => parseTableMetadata(JSON.stringify(doc));

describe('parseTableMetadata: format version 3', () => {
  it("reads Iceberg Java's v3 fixture, defaults and next-row-id included", () => {
    // Act
    const md = parseTableMetadata(fixture);

    // Assess
    expect(md['format-version']).toBe(3);
    expect(md['next-row-id']).toBe(0);
    expect(md.schemas[0].fields[0]).toMatchObject({ name: 'x', 'initial-default': 1, 'write-default': 1 });
  });

  it('reads snapshot row lineage and encryption keys, and writes them back unchanged', () => {
    // Prepare
    const doc = withSnapshot();

    // Act
    const md = parseDoc(doc);
    const again = parseTableMetadata(serializeTableMetadata(md));

    // Assess
    expect(md.snapshots[0]).toMatchObject({ 'first-row-id': 0, 'added-rows': 100, 'key-id': 'key-1' });
    expect(md['encryption-keys']).toEqual([
      { 'key-id': 'key-1', 'encrypted-key-metadata': 'AAEC', 'encrypted-by-id': 'kms-1' },
    ]);
    expect(again).toEqual(md);
    expect(JSON.parse(serializeTableMetadata(md))).toMatchObject({ 'format-version': 3, 'next-row-id': 100 });
  });

  it('reads a snapshot from before the upgrade to v3 (no first-row-id)', () => {
    // Prepare
    const doc = withSnapshot();
    deleteAt(doc, 'snapshots.0.first-row-id');
    deleteAt(doc, 'snapshots.0.added-rows');

    // Act
    const md = parseDoc(doc);

    // Assess
    expect(md.snapshots[0]['first-row-id']).toBeUndefined();
  });

  it.each([
    ['next-row-id', undefined, /table metadata: next-row-id: is required/],
    ['next-row-id', -1, /next-row-id: must be ≥ 0, got -1/],
    ['next-row-id', '100', /next-row-id: expected an integer, got '100'/],
    ['snapshots.0.first-row-id', -5, /snapshots\[0\]\.first-row-id: must be ≥ 0, got -5/],
    ['snapshots.0.added-rows', undefined, /snapshots\[0\]\.added-rows: is required/],
    [
      'snapshots.0.added-rows',
      101,
      /snapshots\[0\]\.first-row-id: 0 \+ added-rows 101 is above next-row-id 100/,
    ],
    ['snapshots.0.key-id', 7, /snapshots\[0\]\.key-id: expected a string/],
    [
      'encryption-keys.0.encrypted-key-metadata',
      undefined,
      /encryption-keys\[0\]\.encrypted-key-metadata: is required/,
    ],
    ['encryption-keys', {}, /encryption-keys: expected an array/],
    ['format-version', 4, /format-version: only format versions 2 and 3 are supported, got number 4/],
    [
      'schemas.0.fields.1.type',
      'timestamp_us',
      /schemas\[0\]\.fields\[1\]\.type: unknown type 'timestamp_us'/,
    ],
    [
      'schemas.0.fields.1.type',
      'geography(OGC:CRS84, straight)',
      /unknown edge-interpolation algorithm 'straight'/,
    ],
    [
      'schemas.0.fields.1.type',
      'unknown',
      /schemas\[0\]\.fields\[1\]: 'y' is unknown, which must be optional/,
    ],
  ])('refuses %s = %j with a clear error', (path, value, message) => {
    // Prepare
    const doc = withSnapshot();
    if (value === undefined) deleteAt(doc, path);
    else setAt(doc, path, value);

    // Act / Assess
    expect(() => parseDoc(doc)).toThrow(message);
  });

  it('refuses a non-null default on a variant column', () => {
    // Prepare
    const doc = withSnapshot();
    setAt(doc, 'schemas.0.fields.2', {
      id: 3,
      name: 'z',
      required: false,
      type: 'variant',
      'write-default': {},
    });

    // Act / Assess
    expect(() => parseDoc(doc)).toThrow(
      /schemas\[0\]\.fields\[2\]\.write-default: a variant column defaults to null only/,
    );
  });

  it.each([
    ['timestamp_ns', /type 'timestamp_ns' needs format version 3/],
    [
      { type: 'list', 'element-id': 9, element: 'geometry', 'element-required': false },
      /element: type 'geometry' needs format version 3/,
    ],
  ])('refuses the v3 type %j in a v2 table', (type, message) => {
    // Prepare
    const doc = JSON.parse(fixture) as Record<string, unknown>;
    doc['format-version'] = 2;
    deleteAt(doc, 'schemas.0.fields.0.initial-default');
    deleteAt(doc, 'schemas.0.fields.0.write-default');
    setAt(doc, 'schemas.0.fields.2', { id: 3, name: 'z', required: false, type });

    // Act / Assess
    expect(() => parseDoc(doc)).toThrow(ValidationError);
    expect(() => parseDoc(doc)).toThrow(message);
  });

  it('refuses a non-null default in a v2 table', () => {
    // Prepare
    const doc = JSON.parse(fixture) as Record<string, unknown>;
    doc['format-version'] = 2;

    // Act / Assess
    expect(() => parseDoc(doc)).toThrow(
      /schemas\[0\]\.fields\[0\]\.initial-default: a non-null default needs format version 3/,
    );
  });

  it.each([
    'timestamp_ns',
    'timestamptz_ns',
    'unknown',
    'variant',
    'geometry',
    'geometry(srid:4326)',
    'geography',
    'geography(OGC:CRS84)',
    'geography(srid:4269, karney)',
  ])('reads the v3 type %s', (type) => {
    // Act / Assess
    expect(parseType(type)).toBe(type);
  });
});
