/**
 * A format-version 3 table built here, as another engine would leave it: v3 metadata (row lineage),
 * v3 manifests and manifest list, and a data file written by pyarrow with INT64 TIMESTAMP(NANOS)
 * columns (test/fixtures/v3). floe scans it with every nanosecond kept; `unknown` columns read as null;
 * variant columns are refused rather than read wrongly.
 */
import { copyFile, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { toDisplayRow } from '../../../functions/cli/format-value.js';
import { readColumnValues } from '../../../functions/core/data/arrow/arrow-to-values.js';
import { projectFile, readArrowFile } from '../../../functions/core/data/parquet/read/read-arrow-columns.js';
import { ValidationError } from '../../../functions/core/errors.js';
import { LocalFileIO } from '../../../functions/core/io/local-file-io.js';
import { readManifestList, writeManifestList } from '../../../functions/core/manifest/manifest-list.js';
import { readManifestEntries } from '../../../functions/core/manifest/manifest-reader.js';
import { writeManifest } from '../../../functions/core/manifest/manifest-writer.js';
import { parseExpression } from '../../../functions/core/scan/parse-expression.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { UnsupportedFeatureError } from '../../../functions/core/spec/format-version.js';
import {
  newTableMetadata,
  parseTableMetadata,
  serializeTableMetadata,
} from '../../../functions/core/spec/metadata.js';
import type {
  DataFile,
  ManifestEntry,
  ManifestFile,
  Schema,
  Snapshot,
  StructType,
} from '../../../functions/core/spec/types.js';

const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'ts', required: false, type: 'timestamp_ns' },
    { id: 3, name: 'ts_tz', required: false, type: 'timestamptz_ns' },
    { id: 4, name: 'later', required: false, type: 'unknown' },
    { id: 5, name: 'doc', required: false, type: 'variant' },
  ],
};

/** What make-timestamp-ns.py wrote, by row. */
const TS = [1_700_000_000_123_456_789n, -1n, 0n, null, 1_700_000_000_120_000_000n];
const TS_TZ = [1_700_000_000_123_456_789n, 9_007_199_254_740_993n, null, -1_000n, 86_400_000_000_000n];

const added = (file: DataFile): ManifestEntry => ({
  status: 1,
  snapshot_id: null,
  sequence_number: null,
  file_sequence_number: null,
  data_file: file,
});

describe('a format-version 3 table written by another engine', () => {
  let root: string;
  const io = new LocalFileIO();
  let dataFile: DataFile;
  let dataManifest: ManifestFile;
  let manifestCount = 0;

  /** A v3 table whose snapshots are the given manifest lists, each one snapshot after the other. */
  const tableOf = async (lists: ManifestFile[][], schema: Schema = SCHEMA): Promise<LoadedTable> => {
    const snapshots: Snapshot[] = [];
    // Manifests as an earlier snapshot's list wrote them (sequence numbers and first_row_id assigned).
    const assigned = new Map<string, ManifestFile>();
    let nextRowId = 0n;
    for (const [i, given] of lists.entries()) {
      const snapshotId = BigInt(i + 1);
      const location = `${root}/metadata/snap-${snapshotId}-${manifestCount++}.avro`;
      const firstRowId = nextRowId;
      const manifests = given.map((m) => {
        const carried = assigned.get(m.manifest_path);
        if (carried) return carried;
        // First row id assignment (spec): new data manifests in list order, each after the rows of the last.
        const first = m.content === 0 ? nextRowId : null;
        if (m.content === 0) nextRowId += m.added_rows_count + m.existing_rows_count;
        const done = {
          ...m,
          sequence_number: snapshotId,
          min_sequence_number: snapshotId,
          first_row_id: first,
        };
        assigned.set(m.manifest_path, done);
        return done;
      });
      await writeManifestList({
        io,
        location,
        snapshotId,
        parentSnapshotId: i === 0 ? null : BigInt(i),
        sequenceNumber: snapshotId,
        manifests,
        formatVersion: 3,
      });
      snapshots.push({
        'snapshot-id': snapshotId,
        ...(i === 0 ? {} : { 'parent-snapshot-id': BigInt(i) }),
        'sequence-number': i + 1,
        'timestamp-ms': 1_700_000_000_000 + i,
        'manifest-list': location,
        summary: { operation: 'append' },
        'schema-id': 0,
        'first-row-id': Number(firstRowId),
        'added-rows': Number(nextRowId - firstRowId),
      });
    }
    const base = newTableMetadata({ location: root, schema, uuid: '6d0cc7f0-4d54-4a43-9ee8-2b0c6b0cd6a1' });
    const last = snapshots[snapshots.length - 1]['snapshot-id'];
    const metadata = {
      ...base,
      'format-version': 3 as const,
      'next-row-id': Number(nextRowId),
      'last-sequence-number': snapshots.length,
      'current-snapshot-id': last,
      refs: { main: { 'snapshot-id': last, type: 'branch' as const } },
      snapshots,
    };
    // Through the parser, as a catalog would load it.
    return {
      identifier: { namespace: ['db'], name: 'v3' },
      metadata: parseTableMetadata(serializeTableMetadata(metadata)),
      metadataLocation: `${root}/metadata/v1.metadata.json`,
      io,
    };
  };

  const manifest = (content: 0 | 1, snapshotId: bigint, entries: ManifestEntry[]) =>
    writeManifest({
      io,
      location: `${root}/metadata/m${manifestCount++}.avro`,
      schema: SCHEMA,
      spec: { 'spec-id': 0, fields: [] },
      content,
      snapshotId,
      entries,
      codec: 'null',
      formatVersion: 3,
    });

  /** A deletion vector (Puffin blob) on `referenced`. */
  const deletionVector = (referenced: string): DataFile => ({
    content: 1,
    file_path: `${root}/data/dv-${manifestCount}.puffin`,
    file_format: 'PUFFIN',
    spec_id: 0,
    partition: {},
    record_count: 1n,
    file_size_in_bytes: 100n,
    referenced_data_file: referenced,
    content_offset: 4n,
    content_size_in_bytes: 40n,
  });

  const readable: StructType = { type: 'struct', fields: SCHEMA.fields.filter((f) => f.name !== 'doc') };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'floe-v3-'));
    await mkdir(join(root, 'data'));
    await mkdir(join(root, 'metadata'));
    const location = join(root, 'data', 'timestamp-ns.parquet');
    await copyFile(new URL('../../fixtures/v3/timestamp-ns.parquet', import.meta.url), location);
    dataFile = {
      content: 0,
      file_path: location,
      file_format: 'PARQUET',
      spec_id: 0,
      partition: {},
      record_count: 5n,
      file_size_in_bytes: BigInt((await stat(location)).size),
    };
    dataManifest = await manifest(0, 1n, [added(dataFile)]);
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('scans timestamp_ns and timestamptz_ns columns to the nanosecond; unknown columns are null', async () => {
    // Prepare
    const table = await tableOf([[dataManifest]]);

    // Act
    const plan = await planScan(table);
    const rows = await readScanRows(table, plan, { schema: readable });

    // Assess
    expect(rows.map((r) => r.ts)).toEqual(TS);
    expect(rows.map((r) => r.ts_tz)).toEqual(TS_TZ);
    expect(rows.map((r) => r.later)).toEqual([null, null, null, null, null]);
  });

  it('projects nanosecond columns to Arrow (the columnar read) without losing digits', async () => {
    // Prepare
    const file = await readArrowFile(io, dataFile.file_path);
    const struct: StructType = { type: 'struct', fields: SCHEMA.fields.slice(1, 3) };

    // Act
    const [columns] = projectFile(file, struct);
    const values = struct.fields.map((f, j) => readColumnValues(f.type, columns[j], f.name));

    // Assess
    expect(values).toEqual([TS, TS_TZ]);
  });

  it.each([
    ["ts > '2023-11-14T22:13:20.120000001'", [1n]],
    ["ts <= '2023-11-14T22:13:20.120000000'", [2n, 3n, 5n]],
    ["ts_tz = '1970-04-15T06:59:59.254740993+01:00'", [2n]],
    ["ts < '1970-01-01'", [2n]],
  ])('filters on nanosecond columns to the nanosecond: %s', async (where, ids) => {
    // Prepare
    const table = await tableOf([[dataManifest]]);
    const filter = parseExpression(where);

    // Act
    const rows = await readScanRows(table, await planScan(table, { filter }), { schema: readable, filter });

    // Assess
    expect(rows.map((r) => r.id)).toEqual(ids);
  });

  it('keeps a timestamp_ns partition value exact in a v3 manifest', async () => {
    // Prepare
    const spec = {
      'spec-id': 0,
      fields: [{ 'source-id': 2, 'field-id': 1000, name: 'ts', transform: 'identity' as const }],
    };
    const value = 1_700_000_000_123_456_789n;
    const file: DataFile = { ...dataFile, partition: { ts: value } };
    const written = await writeManifest({
      io,
      location: `${root}/metadata/m${manifestCount++}.avro`,
      schema: SCHEMA,
      spec,
      content: 0,
      snapshotId: 1n,
      entries: [added(file)],
      formatVersion: 3,
    });

    // Act
    const [entry] = await readManifestEntries(io, {
      ...written,
      sequence_number: 1n,
      min_sequence_number: 1n,
    });

    // Assess
    expect(entry.data_file.partition).toEqual({ ts: value });
  });

  it('refuses to read a column with an initial-default from a file written before it; others read', async () => {
    // Prepare: column 6 was added with initial-default 7 after the data file was written
    const added6 = { id: 6, name: 'added', required: false, type: 'long' as const, 'initial-default': 7 };
    const schema: Schema = { ...SCHEMA, fields: [...SCHEMA.fields, added6] };
    const table = await tableOf([[dataManifest]], schema);
    const plan = await planScan(table);

    // Act
    const withAdded = readScanRows(table, plan, {
      schema: { type: 'struct', fields: [SCHEMA.fields[0], added6] },
    });
    const without = readScanRows(table, plan, { schema: readable });

    // Assess
    await expect(withAdded).rejects.toBeInstanceOf(UnsupportedFeatureError);
    await expect(withAdded).rejects.toThrow(
      `column 'added' has an initial-default, and data file ${dataFile.file_path} was written before the column existed`,
    );
    expect(await without).toHaveLength(5);
  });

  it('shows nanosecond timestamps with every digit', async () => {
    // Prepare
    const table = await tableOf([[dataManifest]]);
    const rows = await readScanRows(table, await planScan(table), { schema: readable });

    // Act
    const shown = rows.map((r) => toDisplayRow(readable, r));

    // Assess
    expect(shown.map((r) => [r.ts, r.ts_tz])).toEqual([
      ['2023-11-14T22:13:20.123456789', '2023-11-14T22:13:20.123456789Z'],
      ['1969-12-31T23:59:59.999999999', '1970-04-15T05:59:59.254740993Z'],
      ['1970-01-01T00:00', null],
      [null, '1969-12-31T23:59:59.999999Z'],
      ['2023-11-14T22:13:20.120', '1970-01-02T00:00Z'],
    ]);
  });

  it('refuses a scan that reads a variant column, naming it; leaving it out reads', async () => {
    // Prepare
    const table = await tableOf([[dataManifest]]);
    const plan = await planScan(table);

    // Act
    const all = readScanRows(table, plan);
    const withoutDoc = readScanRows(table, plan, { schema: readable });

    // Assess
    await expect(all).rejects.toBeInstanceOf(UnsupportedFeatureError);
    await expect(all).rejects.toThrow("column 'doc' has type variant, which floe cannot read yet");
    expect(await withoutDoc).toHaveLength(5);
  });

  it('reads the v3 manifest fields, with first_row_id inherited from the manifest list', async () => {
    // Prepare
    const second: DataFile = { ...dataFile, file_path: `${root}/data/other.parquet`, record_count: 7n };
    const third: DataFile = { ...dataFile, file_path: `${root}/data/third.parquet`, first_row_id: 100n };
    const fourth: DataFile = { ...dataFile, file_path: `${root}/data/fourth.parquet` };
    const m = await manifest(0, 1n, [added(dataFile), added(second), added(third), added(fourth)]);
    const table = await tableOf([[m]]);

    // Act
    const [listed] = await readManifestList(io, table.metadata.snapshots[0]['manifest-list']);
    const entries = await readManifestEntries(io, listed);

    // Assess: 0 + 5 rows, then 5 + 7; an explicit first_row_id is kept and counts nothing
    expect(listed.first_row_id).toBe(0n);
    expect(entries.map((e) => e.data_file.first_row_id)).toEqual([0n, 5n, 100n, 12n]);
  });

  it('plans a data file with the deletion vector that applies to it (deletion-vector-scan.test.ts reads them)', async () => {
    // Prepare
    const dv = deletionVector(dataFile.file_path);
    const deletes = await manifest(1, 2n, [added(dv)]);
    const table = await tableOf([[dataManifest], [dataManifest, deletes]]);

    // Act
    const plan = await planScan(table);

    // Assess
    expect(plan.tasks.map((t) => t.deletes.map((d) => d.file.file_path))).toEqual([[dv.file_path]]);
  });

  it('reads a data file no deletion vector applies to (referenced_data_file names another)', async () => {
    // Prepare
    const deletes = await manifest(1, 2n, [added(deletionVector(`${root}/data/elsewhere.parquet`))]);
    const table = await tableOf([[dataManifest], [dataManifest, deletes]]);

    // Act
    const rows = await readScanRows(table, await planScan(table), { schema: readable });

    // Assess
    expect(rows.map((r) => r.id)).toEqual([1n, 2n, 3n, 4n, 5n]);
  });

  it.each([
    ['referenced_data_file', 'has no referenced_data_file'],
    ['content_offset', 'has no content_offset / content_size_in_bytes'],
  ] as const)('refuses a deletion vector without %s when reading its manifest', async (key, problem) => {
    // Prepare
    const dv: DataFile = { ...deletionVector(dataFile.file_path), [key]: null };
    // The size goes with the offset: the spec requires it whenever content_offset is present.
    if (key === 'content_offset') dv.content_size_in_bytes = null;
    const deletes = await manifest(1, 2n, [added(dv)]);
    const table = await tableOf([[dataManifest], [dataManifest, deletes]]);

    // Act
    const plan = planScan(table);

    // Assess
    await expect(plan).rejects.toBeInstanceOf(ValidationError);
    await expect(plan).rejects.toThrow(`deletion vector ${dv.file_path} in a manifest ${problem}`);
  });

  it('refuses to plan a snapshot whose manifest list is encrypted (key-id)', async () => {
    // Prepare
    const table = await tableOf([[dataManifest]]);
    table.metadata.snapshots[0]['key-id'] = 'k1';

    // Act / Assess
    await expect(planScan(table)).rejects.toThrow(
      'snapshot 1 is encrypted (key-id k1): reading encrypted tables is not supported',
    );
  });

  it('refuses a manifest entry with a negative first_row_id', async () => {
    // Prepare
    const bad = await manifest(0, 1n, [added({ ...dataFile, first_row_id: -3n })]);
    const table = await tableOf([[bad]]);

    // Act / Assess
    await expect(planScan(table)).rejects.toThrow(/first_row_id is negative \(-3\)/);
  });
});
