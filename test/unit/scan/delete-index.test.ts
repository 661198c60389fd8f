import { describe, expect, it } from 'vitest';
import { DeleteIndex, POSITION_DELETE_FILE_PATH_ID } from '../../../functions/core/scan/delete-index.js';
import type { DeleteFileRef } from '../../../functions/core/scan/scan-plan.js';
import type { DataFile, PartitionSpec } from '../../../functions/core/spec/types.js';
import { dataFile } from './scan-fixtures.js';

const UNPARTITIONED: PartitionSpec = { 'spec-id': 0, fields: [] };
const ALL_VOID: PartitionSpec = {
  'spec-id': 2,
  fields: [{ 'source-id': 3, 'field-id': 1001, name: 'gone', transform: 'void' }],
};
const BY_COUNTRY: PartitionSpec = {
  'spec-id': 1,
  fields: [{ 'source-id': 3, 'field-id': 1000, name: 'country', transform: 'identity' }],
};

function deleteFile(
  name: string,
  content: 1 | 2,
  spec: PartitionSpec,
  partition: DataFile['partition'],
  seq: bigint,
): DeleteFileRef {
  const file: DataFile = {
    ...dataFile({ path: `s3://b/t/deletes/${name}`, partition }),
    content,
    spec_id: spec['spec-id'],
  };
  if (content === 2) file.equality_ids = [1];
  return { file, dataSequenceNumber: seq, specId: spec['spec-id'] };
}

const names = (refs: DeleteFileRef[]) => refs.map((r) => r.file.file_path.split('/').pop()).sort();

describe('DeleteIndex', () => {
  it('applies position deletes at ≤ and equality deletes at < the data sequence number', () => {
    // Prepare
    const index = new DeleteIndex();
    index.add(deleteFile('pos-5', 1, BY_COUNTRY, { country: 'DE' }, 5n), BY_COUNTRY);
    index.add(deleteFile('eq-5', 2, BY_COUNTRY, { country: 'DE' }, 5n), BY_COUNTRY);
    const data = { ...dataFile({ partition: { country: 'DE' } }), spec_id: 1 };

    // Act + Assess
    expect(names(index.forDataFile(data, 4n, BY_COUNTRY))).toEqual(['eq-5', 'pos-5']);
    expect(names(index.forDataFile(data, 5n, BY_COUNTRY))).toEqual(['pos-5']);
    expect(names(index.forDataFile(data, 6n, BY_COUNTRY))).toEqual([]);
  });

  it('scopes partitioned deletes to the same spec and partition tuple', () => {
    const index = new DeleteIndex();
    index.add(deleteFile('pos-de', 1, BY_COUNTRY, { country: 'DE' }, 5n), BY_COUNTRY);
    index.add(deleteFile('eq-fr', 2, BY_COUNTRY, { country: 'FR' }, 5n), BY_COUNTRY);
    index.add(deleteFile('eq-null', 2, BY_COUNTRY, { country: null }, 5n), BY_COUNTRY);
    index.add(deleteFile('pos-unpartitioned', 1, UNPARTITIONED, {}, 5n), UNPARTITIONED);

    expect(names(index.forDataFile(dataFile({ partition: { country: 'DE' } }), 1n, BY_COUNTRY))).toEqual([
      'pos-de',
    ]);
    expect(names(index.forDataFile(dataFile({ partition: { country: 'FR' } }), 1n, BY_COUNTRY))).toEqual([
      'eq-fr',
    ]);
    expect(names(index.forDataFile(dataFile({ partition: { country: null } }), 1n, BY_COUNTRY))).toEqual([
      'eq-null',
    ]);
    // A position delete in the unpartitioned spec applies only to data files of that spec.
    expect(names(index.forDataFile(dataFile({}), 1n, UNPARTITIONED))).toEqual(['pos-unpartitioned']);
  });

  it('applies equality deletes of an unpartitioned (or all-void) spec to every partition', () => {
    const index = new DeleteIndex();
    index.add(deleteFile('eq-global', 2, UNPARTITIONED, {}, 5n), UNPARTITIONED);
    index.add(deleteFile('eq-void', 2, ALL_VOID, { gone: null }, 3n), ALL_VOID);

    expect(names(index.forDataFile(dataFile({ partition: { country: 'DE' } }), 1n, BY_COUNTRY))).toEqual([
      'eq-global',
      'eq-void',
    ]);
    expect(names(index.forDataFile(dataFile({}), 4n, UNPARTITIONED))).toEqual(['eq-global']);
    expect(names(index.forDataFile(dataFile({}), 5n, UNPARTITIONED))).toEqual([]);
  });

  it("skips a position delete whose file_path bounds exclude the data file's path", () => {
    // Prepare
    const index = new DeleteIndex();
    const ref = deleteFile('pos-b', 1, UNPARTITIONED, {}, 5n);
    const path = new TextEncoder().encode('s3://b/t/data/b.parquet');
    ref.file.lower_bounds = new Map([[POSITION_DELETE_FILE_PATH_ID, path]]);
    ref.file.upper_bounds = new Map([[POSITION_DELETE_FILE_PATH_ID, path]]);
    index.add(ref, UNPARTITIONED);

    // Act + Assess
    expect(index.forDataFile(dataFile({ path: 's3://b/t/data/a.parquet' }), 1n, UNPARTITIONED)).toEqual([]);
    expect(
      names(index.forDataFile(dataFile({ path: 's3://b/t/data/b.parquet' }), 1n, UNPARTITIONED)),
    ).toEqual(['pos-b']);
  });

  it('refuses a deletion vector in another partition than the data file it names', () => {
    // Prepare
    const index = new DeleteIndex();
    const ref = deleteFile('dv.puffin', 1, BY_COUNTRY, { country: 'FR' }, 5n);
    Object.assign(ref.file, {
      file_format: 'PUFFIN',
      referenced_data_file: 's3://b/t/data/de.parquet',
      content_offset: 4n,
      content_size_in_bytes: 40n,
    });
    index.add(ref, BY_COUNTRY);
    const data = dataFile({ path: 's3://b/t/data/de.parquet', partition: { country: 'DE' } });
    const other = dataFile({ path: 's3://b/t/data/other.parquet', partition: { country: 'FR' } });

    // Act + Assess
    expect(() => index.forDataFile(data, 1n, BY_COUNTRY)).toThrow(
      /^the deletion vector s3:\/\/b\/t\/deletes\/dv.puffin at offset 4 \(40 bytes\) is in partition 1\/.*FR.*, its data file s3:\/\/b\/t\/data\/de.parquet in 1\/.*DE.*: the table's metadata is corrupt$/,
    );
    expect(index.forDataFile(other, 1n, BY_COUNTRY)).toEqual([]);
  });
});
