/**
 * Version carriers (format-version 3): where a deleted key's version (change-version.ts) lives once no
 * row holds it. v2 keeps it in a key-versions file, position delete rows naming no data file
 * (write-changes.ts); v3 takes no new Parquet position delete file, and an equality delete (floe's
 * first v3 form) makes PyIceberg refuse the whole table. So on v3 the version rides on a **data file**
 * named `key-versions-<uuid>-NNNNN.parquet`, one row per deleted key in the table's own schema — the
 * key at its columns, `_kafka` = the deleting change's topic/partition/offset, every other column
 * null, or a placeholder where the schema requires a value — partitioned by the default spec like any
 * data file; and a deletion vector in the same commit deletes every row of it (write-deletion-vectors.ts).
 *
 * Why that is sound: a data file whose every row a DV of the same snapshot deletes is invisible to
 * every reader that follows the spec (v3 requires applying DVs), so no placeholder is ever read as a
 * row; floe finds the file by its name (scan/delete-index.ts isVersionCarrierDataFile) and reads its
 * rows as versions (key-versions.ts, key-index/snapshot-facts.ts). Row lineage counts its rows as
 * added rows, as it must for any data file. The cost of the form: another engine's compaction (Spark's
 * rewrite_data_files, S3 Tables') drops the file as fully deleted and so loses the versions — the same
 * as its rewrite drops v2's key-versions files as dangling deletes; floe's own compaction keeps it.
 */
import { randomUUID } from 'node:crypto';
import type { LoadedTable } from '../catalog/catalog.js';
import { writeDataFiles } from '../data/parquet/write/write-data-file.js';
import { joinLocation } from '../io/location.js';
import { defaultSpec } from '../spec/metadata.js';
import { UnsupportedFeatureError } from '../spec/format-version.js';
import { readWriteProperties } from '../spec/table-properties.js';
import { partitionPath } from '../spec/transforms.js';
import {
  type DataFile,
  type IcebergType,
  isRow,
  type Row,
  type Schema,
  type StructType,
  type Value,
} from '../spec/types.js';
import { partitionRows } from '../table/partition-rows.js';
import type { RawRecord } from '../records/esm-event.js';
import { timestampMicros } from '../records/kafka-lineage.js';
import { versionValue } from './change-version.js';

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

/**
 * A carrier row's `_kafka`: the deleting change's version, and its timestamp, so that the time of the
 * newest record a table holds (status/newest-record.ts, from `_kafka.timestamp` bounds) counts the
 * delete and finds a bound in every data file. Never throws.
 */
export function carrierLineage(record: RawRecord): Row {
  const none = record.timestampType === 'NO_TIMESTAMP_TYPE' || record.timestamp < 0;
  return {
    ...versionValue(record),
    timestamp: none ? null : timestampMicros(record.timestamp),
    timestamp_type: record.timestampType,
  };
}

/**
 * The value a required column holds in a carrier row: zero, empty, false, the epoch, or a struct of
 * such values (its optional fields null).
 * @throws UnsupportedFeatureError for variant, geometry and geography, which floe does not write
 */
export function placeholderValue(type: IcebergType): Value {
  if (typeof type !== 'string') {
    if (type.type === 'struct') return placeholderRow(type, {});
    return type.type === 'list' ? [] : new Map();
  }
  if (type === 'boolean') return false;
  if (type === 'int' || type === 'date' || type === 'float' || type === 'double') return 0;
  if (type === 'long' || type === 'time' || type.startsWith('timestamp') || type.startsWith('decimal'))
    return 0n;
  if (type === 'string') return '';
  if (type === 'uuid') return ZERO_UUID;
  if (type === 'binary') return new Uint8Array(0);
  const fixed = /^fixed\[(\d+)\]$/.exec(type);
  if (fixed) return new Uint8Array(Number(fixed[1]));
  if (type === 'unknown') return null;
  throw new UnsupportedFeatureError(
    `a column of type '${type}' is required: floe cannot write a version carrier row for it`,
  );
}

/**
 * `given` completed to a row of `struct`: its values where it has them (structs completed in turn),
 * null in the other optional fields, a placeholder in the other required ones.
 * @throws UnsupportedFeatureError as placeholderValue
 */
export function placeholderRow(struct: StructType, given: Row): Row {
  const row: Row = {};
  for (const f of struct.fields) {
    const value = given[f.name];
    const nested = typeof f.type !== 'string' && f.type.type === 'struct' ? f.type : undefined;
    if (nested && isRow(value)) row[f.name] = placeholderRow(nested, value);
    else if (value !== undefined && value !== null) row[f.name] = value;
    else row[f.name] = f.required ? placeholderValue(f.type) : null;
  }
  return row;
}

/**
 * Writes the version carriers for `versionRows` (each the key at its paths and `_kafka`), as data files
 * of the table's default spec named `<prefix>key-versions-<uuid>-NNNNN.parquet`. Nothing is committed:
 * the caller commits them with a deletion vector of every row of each (the same snapshot).
 * @throws UnsupportedFeatureError for a required column floe cannot write; ValidationError /
 *   TransientIOError from partitioning and writing
 */
export async function writeVersionCarriers(
  table: LoadedTable,
  versionRows: readonly Row[],
  schema: Schema,
  prefix: string,
): Promise<DataFile[]> {
  const md = table.metadata;
  const spec = defaultSpec(md);
  const rows = versionRows.map((r) => placeholderRow(schema, r));
  const written = readWriteProperties(md.properties);
  const files: DataFile[] = [];
  for (const group of partitionRows(rows, schema, spec)) {
    const dir = joinLocation(
      md.location,
      'data',
      ...(spec.fields.length ? [partitionPath(spec, schema, group.partition)] : []),
    );
    const id = randomUUID();
    files.push(
      ...(await writeDataFiles(group.rows, {
        io: table.io,
        schema,
        specId: spec['spec-id'],
        partition: group.partition,
        nextLocation: (i) =>
          joinLocation(dir, `${prefix}key-versions-${id}-${String(i).padStart(5, '0')}.parquet`),
        targetFileSizeBytes: written.targetFileSizeBytes,
        codec: written.parquetCodec,
        pageRowLimit: written.pageRowLimit,
      })),
    );
  }
  return files;
}
