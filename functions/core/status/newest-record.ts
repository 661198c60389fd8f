/**
 * The time of the newest record a table holds, from metadata alone: the highest upper bound of the
 * `_kafka.timestamp` column (records/kafka-lineage.ts) over the live data files of the current snapshot,
 * as the manifests' column statistics record it. No data file is read.
 *
 * It is the newest record *timestamp* (the producer's or the broker's, per the topic's
 * message.timestamp.type), not the time it was committed. An upper bound of a CDC table's file may
 * belong to a row a later delete removed: the bound is then newer than any live row, never older.
 */
import type { LoadedTable } from '../catalog/catalog.js';
import { readManifestEntries } from '../manifest/manifest-reader.js';
import { readManifestList } from '../manifest/manifest-list.js';
import { decodeValue } from '../spec/conversions.js';
import { currentSchema, currentSnapshot } from '../spec/metadata.js';
import { findFieldByName } from '../spec/schema-index.js';
import type { DataFile } from '../spec/types.js';
import { mapLimited } from '../table/map-limited.js';

/** The column whose upper bounds say how new the table's records are. */
export const KAFKA_TIMESTAMP_COLUMN = '_kafka.timestamp';

export interface NewestRecord {
  /** Milliseconds since the epoch; null when no live data file has a bound (or the table has no column). */
  newestMs: number | null;
  /** Live data files read from the manifests. */
  files: number;
  /** Live data files holding rows but no upper bound for the column (metrics off, all nulls, another writer). */
  filesWithoutBound: number;
  /** Why no time could be given, when `newestMs` is null. */
  reason?: string;
}

/**
 * The highest `_kafka.timestamp` upper bound of `files` for field `fieldId`, in ms. A bound that does
 * not decode (a hostile manifest) counts as missing. Never throws.
 */
export function newestBound(
  files: readonly Pick<DataFile, 'upper_bounds' | 'record_count'>[],
  fieldId: number,
): { newestMs: number | null; filesWithoutBound: number } {
  let newest: bigint | null = null;
  let without = 0;
  for (const file of files) {
    const bytes = file.upper_bounds?.get(fieldId);
    let micros: bigint | null = null;
    if (bytes !== undefined) {
      try {
        const value = decodeValue('timestamptz', bytes);
        micros = typeof value === 'bigint' ? value : null;
      } catch {
        micros = null;
      }
    }
    if (micros === null) {
      if (file.record_count > 0n) without++;
      continue;
    }
    if (newest === null || micros > newest) newest = micros;
  }
  // Floor division: a bound of -1 µs is the millisecond before the epoch, not the epoch.
  const ms = newest === null ? null : Number(newest / 1000n - (newest % 1000n < 0n ? 1n : 0n));
  return { newestMs: ms, filesWithoutBound: without };
}

/**
 * The newest record time of the table's current snapshot (see the file comment).
 * @throws NotFoundError / TransientIOError / ValidationError from reading the manifest list and manifests
 */
export async function readNewestRecord(table: LoadedTable): Promise<NewestRecord> {
  const md = table.metadata;
  const field = findFieldByName(currentSchema(md), KAFKA_TIMESTAMP_COLUMN);
  const snapshot = currentSnapshot(md);
  if (field === undefined || (field.type !== 'timestamptz' && field.type !== 'timestamp')) {
    return { newestMs: null, files: 0, filesWithoutBound: 0, reason: `no ${KAFKA_TIMESTAMP_COLUMN} column` };
  }
  if (snapshot === undefined)
    return { newestMs: null, files: 0, filesWithoutBound: 0, reason: 'no snapshot' };
  const manifests = (await readManifestList(table.io, snapshot['manifest-list'])).filter(
    (m) => m.content === 0,
  );
  const entries = (await mapLimited(manifests, 8, (m) => readManifestEntries(table.io, m))).flat();
  const files = entries.filter((e) => e.status !== 2 && e.data_file.content === 0).map((e) => e.data_file);
  const bound = newestBound(files, field.id);
  return {
    ...bound,
    files: files.length,
    ...(bound.newestMs === null ? { reason: 'no data file has an upper bound for the column' } : {}),
  };
}
