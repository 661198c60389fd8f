import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeAvroContainer } from '../../../functions/core/manifest/avro-container.js';
import { writeManifestList } from '../../../functions/core/manifest/manifest-list.js';
import { readManifestHeader } from '../../../functions/core/manifest/manifest-reader.js';
import { writeManifest } from '../../../functions/core/manifest/manifest-writer.js';
import {
  allTypesPartition,
  allTypesSchema,
  allTypesSpec,
  entry,
  fullDataFile,
  makeTempWarehouse,
} from './manifest-fixtures.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (v: Json | undefined): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

interface Walked {
  fieldIds: Map<string, number>; // dotted Avro path → field-id
  fieldsWithoutId: string[];
  elementIds: Map<string, number>;
  recordNames: string[];
}

/** Walks a raw Avro schema collecting every id attribute and record name. */
function walkSchema(schema: Json): Walked {
  const out: Walked = { fieldIds: new Map(), fieldsWithoutId: [], elementIds: new Map(), recordNames: [] };
  const visit = (s: Json, at: string) => {
    if (Array.isArray(s)) {
      for (const branch of s) visit(branch, at);
      return;
    }
    if (!isObject(s)) return;
    if (s.type === 'record') {
      out.recordNames.push(String(s.name));
      for (const f of s.fields as JsonObject[]) {
        const p = at ? `${at}.${f.name}` : String(f.name);
        if (typeof f['field-id'] === 'number') out.fieldIds.set(p, f['field-id']);
        else out.fieldsWithoutId.push(p);
        visit(f.type, p);
      }
    } else if (s.type === 'array') {
      if (typeof s['element-id'] === 'number') out.elementIds.set(at, s['element-id']);
      visit(s.items, at);
    }
  };
  visit(schema, '');
  return out;
}

let warehouse: Awaited<ReturnType<typeof makeTempWarehouse>>;
beforeEach(async () => {
  warehouse = await makeTempWarehouse();
});
afterEach(async () => {
  await warehouse.cleanup();
});

async function writeSampleManifest() {
  const location = path.join(warehouse.dir, 'm.avro');
  const df = fullDataFile(1, allTypesPartition(1), allTypesSpec['spec-id']);
  const written = await writeManifest({
    io: warehouse.io,
    location,
    schema: allTypesSchema,
    spec: allTypesSpec,
    content: 0,
    snapshotId: 77n,
    entries: [entry(1, df, { snapshot: null, data: null, file: null })],
  });
  return { location, written };
}

describe('manifest Avro header', () => {
  it('carries the Iceberg header keys with the table schema and partition spec', async () => {
    // Act
    const { location } = await writeSampleManifest();
    const header = await readManifestHeader(warehouse.io, location);
    // Assess
    expect(Object.keys(header.metadata).sort()).toEqual(
      [
        'avro.codec',
        'avro.schema',
        'content',
        'format-version',
        'partition-spec',
        'partition-spec-id',
        'schema',
        'schema-id',
      ].sort(),
    );
    expect(header.metadata['format-version']).toBe('2');
    expect(header.metadata['schema-id']).toBe(String(allTypesSchema['schema-id']));
    expect(header.metadata['partition-spec-id']).toBe(String(allTypesSpec['spec-id']));
    expect(JSON.parse(header.metadata['partition-spec'])).toEqual(allTypesSpec.fields); // a JSON array of fields
    expect(header.metadata.content).toBe('data');
    expect(header.schema).toEqual(allTypesSchema);
    expect(header.spec).toEqual(allTypesSpec);
    expect(header.content).toBe('data');
    expect(header.formatVersion).toBe(2);
  });

  it('declares every manifest_entry / data_file field id, map key/value ids and list element ids', async () => {
    // Prepare
    const { location } = await writeSampleManifest();
    // Act
    const header = await readManifestHeader(warehouse.io, location);
    const walked = walkSchema(JSON.parse(header.metadata['avro.schema']) as Json);
    // Assess: ids from the Iceberg spec's manifest_entry and data_file tables
    const df = (name: string) => `data_file.${name}`;
    const expected: Record<string, number> = {
      status: 0,
      snapshot_id: 1,
      sequence_number: 3,
      file_sequence_number: 4,
      data_file: 2,
      [df('content')]: 134,
      [df('file_path')]: 100,
      [df('file_format')]: 101,
      [df('partition')]: 102,
      [df('record_count')]: 103,
      [df('file_size_in_bytes')]: 104,
      [df('column_sizes')]: 108,
      [df('column_sizes.key')]: 117,
      [df('column_sizes.value')]: 118,
      [df('value_counts')]: 109,
      [df('value_counts.key')]: 119,
      [df('value_counts.value')]: 120,
      [df('null_value_counts')]: 110,
      [df('null_value_counts.key')]: 121,
      [df('null_value_counts.value')]: 122,
      [df('nan_value_counts')]: 137,
      [df('nan_value_counts.key')]: 138,
      [df('nan_value_counts.value')]: 139,
      [df('lower_bounds')]: 125,
      [df('lower_bounds.key')]: 126,
      [df('lower_bounds.value')]: 127,
      [df('upper_bounds')]: 128,
      [df('upper_bounds.key')]: 129,
      [df('upper_bounds.value')]: 130,
      [df('key_metadata')]: 131,
      [df('split_offsets')]: 132,
      [df('equality_ids')]: 135,
      [df('sort_order_id')]: 140,
    };
    for (const f of allTypesSpec.fields) {
      expected[df(`partition.${f.name === 'ts-hour' ? 'ts_x2Dhour' : f.name}`)] = f['field-id'];
    }
    expect(Object.fromEntries(walked.fieldIds)).toEqual(expected);
    expect(walked.fieldsWithoutId).toEqual([]);
    expect(Object.fromEntries(walked.elementIds)).toEqual({
      [df('split_offsets')]: 133,
      [df('equality_ids')]: 136,
    });
    expect(walked.recordNames).toEqual([
      'manifest_entry',
      'r2',
      'r102',
      'k117_v118',
      'k119_v120',
      'k121_v122',
      'k138_v139',
      'k126_v127',
      'k129_v130',
    ]);
  });

  it('writes int-keyed maps as arrays with logicalType "map" and optional fields as null-first unions', async () => {
    const { location } = await writeSampleManifest();
    const header = await readManifestHeader(warehouse.io, location);
    const entrySchema = JSON.parse(header.metadata['avro.schema']) as JsonObject;
    const dataFile = (entrySchema.fields as JsonObject[]).find((f) => f.name === 'data_file') as JsonObject;
    const fields = (dataFile.type as JsonObject).fields as JsonObject[];
    const columnSizes = fields.find((f) => f.name === 'column_sizes') as JsonObject;
    expect(columnSizes.default).toBeNull();
    const [nullBranch, mapType] = columnSizes.type as Json[];
    expect(nullBranch).toBe('null');
    expect(mapType).toMatchObject({
      type: 'array',
      logicalType: 'map',
      items: { type: 'record', name: 'k117_v118' },
    });
    const required = fields.filter((f) => !Array.isArray(f.type)).map((f) => f.name);
    expect(required).toEqual([
      'content',
      'file_path',
      'file_format',
      'partition',
      'record_count',
      'file_size_in_bytes',
    ]);
  });

  it('maps partition types to Avro the way Iceberg Java does', async () => {
    const { location } = await writeSampleManifest();
    const header = await readManifestHeader(warehouse.io, location);
    const entrySchema = JSON.parse(header.metadata['avro.schema']) as JsonObject;
    const dataFile = (entrySchema.fields as JsonObject[]).find((f) => f.name === 'data_file') as JsonObject;
    const partition = ((dataFile.type as JsonObject).fields as JsonObject[]).find(
      (f) => f.name === 'partition',
    ) as JsonObject;
    const byName = new Map(((partition.type as JsonObject).fields as JsonObject[]).map((f) => [f.name, f]));
    const typeOf = (name: string) => {
      const f = byName.get(name) as JsonObject;
      expect(f.default).toBeNull(); // every partition field is optional
      expect((f.type as Json[])[0]).toBe('null');
      return (f.type as Json[])[1];
    };
    expect(typeOf('ts_day')).toEqual({ type: 'int', logicalType: 'date' });
    expect(typeOf('event_date')).toEqual({ type: 'int', logicalType: 'date' });
    expect(typeOf('id_bucket')).toBe('int');
    expect(typeOf('id')).toBe('long');
    expect(typeOf('name_trunc')).toBe('string');
    expect(typeOf('flag')).toBe('boolean');
    expect(typeOf('score')).toBe('double');
    expect(typeOf('ratio')).toBe('float');
    expect(typeOf('blob')).toBe('bytes');
    expect(typeOf('t')).toEqual({ type: 'long', logicalType: 'time-micros' });
    expect(typeOf('local_ts')).toEqual({
      type: 'long',
      logicalType: 'timestamp-micros',
      'adjust-to-utc': false,
    });
    expect(typeOf('uid')).toEqual({ type: 'fixed', name: 'uuid_fixed', size: 16, logicalType: 'uuid' });
    expect(typeOf('code')).toEqual({ type: 'fixed', name: 'fixed_3', size: 3 });
    expect(typeOf('amount')).toEqual({
      type: 'fixed',
      name: 'decimal_10_2',
      size: 5,
      logicalType: 'decimal',
      precision: 10,
      scale: 2,
    });
    expect(typeOf('fee')).toBe('decimal_10_2'); // a named type is defined once, then referenced
    expect(typeOf('big_amount')).toMatchObject({ name: 'decimal_38_0', size: 16 });
    expect(byName.get('ts_x2Dhour')).toMatchObject({ 'iceberg-field-name': 'ts-hour', 'field-id': 1013 });
  });
});

describe('manifest list Avro header', () => {
  it('carries snapshot-id, parent-snapshot-id, sequence-number, format-version and field ids 500–519', async () => {
    // Prepare
    const { written } = await writeSampleManifest();
    const location = path.join(warehouse.dir, 'snap.avro');
    // Act
    await writeManifestList({
      io: warehouse.io,
      location,
      snapshotId: 77n,
      parentSnapshotId: null,
      sequenceNumber: 5n,
      manifests: [written],
    });
    const { metadata } = decodeAvroContainer(await warehouse.io.read(location));
    const walked = walkSchema(JSON.parse(metadata['avro.schema']) as Json);
    // Assess
    expect(metadata).toMatchObject({
      'snapshot-id': '77',
      'parent-snapshot-id': 'null',
      'sequence-number': '5',
      'format-version': '2',
      'avro.codec': 'deflate',
    });
    expect(Object.fromEntries(walked.fieldIds)).toEqual({
      manifest_path: 500,
      manifest_length: 501,
      partition_spec_id: 502,
      content: 517,
      sequence_number: 515,
      min_sequence_number: 516,
      added_snapshot_id: 503,
      added_files_count: 504,
      existing_files_count: 505,
      deleted_files_count: 506,
      added_rows_count: 512,
      existing_rows_count: 513,
      deleted_rows_count: 514,
      partitions: 507,
      'partitions.contains_null': 509,
      'partitions.contains_nan': 518,
      'partitions.lower_bound': 510,
      'partitions.upper_bound': 511,
      key_metadata: 519,
    });
    expect(Object.fromEntries(walked.elementIds)).toEqual({ partitions: 508 });
    expect(walked.recordNames).toEqual(['manifest_file', 'r508']);
    expect(walked.fieldsWithoutId).toEqual([]);
  });
});
