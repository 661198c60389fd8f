/**
 * Whether a compaction's groups may still be committed onto the table as it is now (the commit's base),
 * and which delete files the rewrite leaves dangling. Iceberg Java's RewriteFiles validations, per group:
 *
 * - every file the group replaces must still be live (another rewrite, or a delete, may have removed it);
 * - no position delete committed after the starting snapshot may name one of those files: it would not
 *   follow the rows to their new files. Equality deletes committed meanwhile are fine: the new files keep
 *   the starting snapshot's data sequence number, which is below theirs, so they still apply.
 *
 * A group failing either check is abandoned (its files stay as they are, the next run plans again);
 * never merged wrongly. A group whose new files are already live was committed by an earlier attempt.
 *
 * Dangling deletes: a delete file the committed table would no longer apply to any data file (equality:
 * no live data file in its scope with a lower data sequence number; position: no live data file it names
 * with a data sequence number at most its own; a deletion vector: its one data file gone). Only delete files in the partitions the rewrite touched
 * (and unpartitioned ones) are considered, so the commit stays about those partitions. floe's
 * key-versions files (position deletes naming no data file, cdc/write-changes.ts; on v3 tables written
 * before version carriers were data files, equality deletes named `key-versions-`) are never dangling.
 * A v3 version carrier data file is never in a group (plan-compaction.ts), so its vector stays too.
 */
import { readDataFile } from '../data/parquet/read/read-data-file.js';
import type { FileIO } from '../io/file-io.js';
import {
  isKeyVersionsFile,
  isUnpartitioned,
  isVersionCarrierFile,
  POSITION_DELETE_FILE_PATH_ID,
  partitionKey,
} from '../scan/delete-index.js';
import { isDeletionVector } from '../manifest/manifest-entry-codec.js';
import { specById } from '../spec/metadata.js';
import { deleteFileKey } from '../table/actions/mark-removed.js';
import type { DataFile, ManifestEntry, PartitionSpec, StructType, TableMetadata } from '../spec/types.js';
import type { RewriteGroupPlan } from './rewrite-run-files.js';
import type { ManifestWithEntries } from '../table/snapshot-manifests.js';

export interface GroupToCommit {
  plan: RewriteGroupPlan;
  /** The files the group wrote. */
  added: DataFile[];
  deletesApplied: boolean;
}

export interface RewriteValidation {
  accepted: GroupToCommit[];
  abandoned: { index: number; reason: string }[];
  /** Groups whose new files are already live: an earlier attempt committed them. */
  alreadyCommitted: number[];
  /**
   * Delete files to remove with the rewrite, by deleteFileKey: a deletion vector by its Puffin path and
   * offset, since the same Puffin file holds the vectors of data files the rewrite keeps.
   */
  danglingDeletes: Set<string>;
}

/** Only the file_path column: which files a position delete file names, not which rows. */
const PATH_STRUCT: StructType = {
  type: 'struct',
  fields: [{ id: POSITION_DELETE_FILE_PATH_ID, name: 'file_path', required: true, type: 'string' }],
};

interface LiveFile {
  entry: ManifestEntry;
  spec: PartitionSpec;
  key: string;
}

/**
 * Reads which data files position delete files name, each file once. A deletion vector names its one
 * data file in the manifest (`referenced_data_file`): nothing to read.
 */
class PositionPaths {
  private readonly cache = new Map<string, Promise<Set<string>>>();
  constructor(private readonly io: FileIO) {}
  get(file: DataFile): Promise<Set<string>> {
    if (isDeletionVector(file)) return Promise.resolve(new Set([file.referenced_data_file ?? '']));
    let paths = this.cache.get(file.file_path);
    if (!paths) {
      paths = readDataFile(this.io, file.file_path, PATH_STRUCT).then(
        (rows) => new Set(rows.map((r) => String(r.file_path))),
      );
      this.cache.set(file.file_path, paths);
    }
    return paths;
  }
}

function indexLive(md: TableMetadata, manifests: readonly ManifestWithEntries[]): LiveFile[] {
  const out: LiveFile[] = [];
  for (const { manifest, entries } of manifests) {
    const spec = specById(md, manifest.partition_spec_id);
    for (const entry of entries) {
      if (entry.status !== 2) out.push({ entry, spec, key: partitionKey(spec, entry.data_file) });
    }
  }
  return out;
}

const seqOf = (entry: ManifestEntry): bigint => entry.sequence_number ?? 0n;

/**
 * Validates the groups against the base's current manifests.
 * @throws NotFoundError / TransientIOError / ValidationError from reading position delete files
 */
export async function validateRewrite(
  io: FileIO,
  md: TableMetadata,
  manifests: readonly ManifestWithEntries[],
  groups: readonly GroupToCommit[],
  startingSequenceNumber: bigint,
): Promise<RewriteValidation> {
  const live = indexLive(md, manifests);
  const liveData = new Map(
    live.filter((f) => f.entry.data_file.content === 0).map((f) => [f.entry.data_file.file_path, f]),
  );
  const liveDeletes = live.filter((f) => f.entry.data_file.content !== 0);
  const positions = new PositionPaths(io);
  const result: RewriteValidation = {
    accepted: [],
    abandoned: [],
    alreadyCommitted: [],
    danglingDeletes: new Set(),
  };

  for (const group of groups) {
    const index = group.plan.index;
    if (group.added.some((f) => liveData.has(f.file_path))) {
      result.alreadyCommitted.push(index);
      continue;
    }
    const missing = group.plan.files.filter((p) => !liveData.has(p));
    if (missing.length > 0) {
      result.abandoned.push({
        index,
        reason: `${missing.length} of its file(s) were removed since the plan`,
      });
      continue;
    }
    const keys = new Set(group.plan.files.map((p) => liveData.get(p)!.key));
    const files = new Set(group.plan.files);
    let conflict = false;
    for (const d of liveDeletes) {
      if (d.entry.data_file.content !== 1 || seqOf(d.entry) <= startingSequenceNumber || !keys.has(d.key))
        continue;
      const named = await positions.get(d.entry.data_file);
      if ([...named].some((p) => files.has(p))) {
        conflict = true;
        break;
      }
    }
    if (conflict) {
      result.abandoned.push({
        index,
        reason: 'position deletes for its files were committed since the plan',
      });
      continue;
    }
    result.accepted.push(group);
  }
  if (result.accepted.length === 0) return result;

  // The data files live once the rewrite lands: the new ones carry the starting sequence number.
  const removed = new Set(result.accepted.flatMap((g) => g.plan.files));
  const after: { key: string; seq: bigint; path: string }[] = [];
  for (const [path, f] of liveData)
    if (!removed.has(path)) after.push({ key: f.key, seq: seqOf(f.entry), path });
  for (const g of result.accepted) {
    const spec = specById(md, g.plan.specId);
    for (const f of g.added)
      after.push({ key: partitionKey(spec, f), seq: startingSequenceNumber, path: f.file_path });
  }
  const touched = new Set(result.accepted.flatMap((g) => g.plan.files.map((p) => liveData.get(p)!.key)));
  for (const d of liveDeletes) {
    const file = d.entry.data_file;
    const global = file.content === 2 && isUnpartitioned(d.spec);
    if (!global && !touched.has(d.key)) continue;
    // Key-versions rows name no data file by design: they keep deleted keys' versions for late batches
    // (on v3, equality deletes of keys already deleted by position carry them).
    if (isKeyVersionsFile(file) || isVersionCarrierFile(md, file)) continue;
    const seq = seqOf(d.entry);
    if (file.content === 2) {
      const applies = after.some((a) => a.seq < seq && (global || a.key === d.key));
      if (!applies) result.danglingDeletes.add(deleteFileKey(file));
    } else {
      const candidates = after.filter((a) => a.key === d.key && a.seq <= seq);
      if (candidates.length === 0) {
        result.danglingDeletes.add(deleteFileKey(file));
        continue;
      }
      const named = await positions.get(file);
      if (!candidates.some((a) => named.has(a.path))) result.danglingDeletes.add(deleteFileKey(file));
    }
  }
  return result;
}
