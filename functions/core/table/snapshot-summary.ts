/**
 * Snapshot summary totals, as Iceberg Java's SnapshotSummary computes them. Totals carry forward
 * from the parent; when the parent lacks one (an external writer left it out), it is omitted.
 */
import type { DataFile, Snapshot, SnapshotOperation, SnapshotSummary } from '../spec/types.js';

export interface FileChanges {
  added: DataFile[];
  removed: DataFile[];
}

interface Counts {
  dataFiles: number;
  deleteFiles: number;
  records: bigint;
  filesSize: bigint;
  positionDeletes: bigint;
  equalityDeletes: bigint;
  positionDeleteFiles: number;
  equalityDeleteFiles: number;
}

function count(files: DataFile[]): Counts {
  const c: Counts = {
    dataFiles: 0,
    deleteFiles: 0,
    records: 0n,
    filesSize: 0n,
    positionDeletes: 0n,
    equalityDeletes: 0n,
    positionDeleteFiles: 0,
    equalityDeleteFiles: 0,
  };
  for (const f of files) {
    c.filesSize += f.file_size_in_bytes;
    if (f.content === 0) {
      c.dataFiles++;
      c.records += f.record_count;
    } else {
      c.deleteFiles++;
      if (f.content === 1) {
        c.positionDeletes += f.record_count;
        c.positionDeleteFiles++;
      } else {
        c.equalityDeletes += f.record_count;
        c.equalityDeleteFiles++;
      }
    }
  }
  return c;
}

const TOTALS: [string, keyof Counts][] = [
  ['total-data-files', 'dataFiles'],
  ['total-delete-files', 'deleteFiles'],
  ['total-records', 'records'],
  ['total-files-size', 'filesSize'],
  ['total-position-deletes', 'positionDeletes'],
  ['total-equality-deletes', 'equalityDeletes'],
];

function partitionKey(f: DataFile): string {
  return `${f.spec_id}/${JSON.stringify(f.partition, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}`;
}

/** Builds a snapshot summary: added/removed counts, totals carried from the parent, extra properties. */
export function buildSummary(
  operation: SnapshotOperation,
  changes: FileChanges,
  parent: Snapshot | undefined,
  extra: Record<string, string> = {},
): SnapshotSummary {
  const added = count(changes.added);
  const removed = count(changes.removed);
  const summary: SnapshotSummary = { operation };
  const put = (key: string, value: number | bigint) => {
    if (value !== 0 && value !== 0n) summary[key] = value.toString();
  };
  put('added-data-files', added.dataFiles);
  put('deleted-data-files', removed.dataFiles);
  put('added-delete-files', added.deleteFiles);
  put('removed-delete-files', removed.deleteFiles);
  put('added-position-delete-files', added.positionDeleteFiles);
  put('added-equality-delete-files', added.equalityDeleteFiles);
  put('removed-position-delete-files', removed.positionDeleteFiles);
  put('removed-equality-delete-files', removed.equalityDeleteFiles);
  put('added-records', added.records);
  put('deleted-records', removed.records);
  put('added-files-size', added.filesSize);
  put('removed-files-size', removed.filesSize);
  put('added-position-deletes', added.positionDeletes);
  put('removed-position-deletes', removed.positionDeletes);
  put('added-equality-deletes', added.equalityDeletes);
  put('removed-equality-deletes', removed.equalityDeletes);
  const partitions = new Set([...changes.added, ...changes.removed].map(partitionKey));
  summary['changed-partition-count'] = String(partitions.size);

  for (const [key, field] of TOTALS) {
    const before = parent ? parent.summary[key] : '0';
    if (before === undefined) continue;
    const total = BigInt(before) + BigInt(added[field]) - BigInt(removed[field]);
    summary[key] = (total < 0n ? 0n : total).toString();
  }
  return { ...summary, ...extra, operation };
}
