/**
 * Manifest rewrite (Iceberg Java's RewriteManifests): the current snapshot's manifests of one content
 * type and spec are rewritten into as few as `commit.manifest.target-size-bytes` allows, their entries
 * clustered by partition tuple, so planning a filtered scan opens few manifests and prunes the rest by
 * their partition summaries. Committed as a `replace` snapshot with no data change: entries keep their
 * snapshot ids and sequence numbers (EXISTING), DELETED entries are dropped.
 *
 * A content/spec group is rewritten when it has more manifests than its size needs or holds DELETED
 * entries; otherwise it is carried as it is (a table already in shape commits nothing).
 */
import { randomUUID } from 'node:crypto';
import { type Catalog, formatIdentifier, type LoadedTable } from '../../catalog/catalog.js';
import { CommitStateUnknownError } from '../../errors.js';
import { joinLocation } from '../../io/location.js';
import { writeManifest } from '../../manifest/manifest-writer.js';
import { compareValues } from '../../spec/conversions.js';
import { currentSchema, currentSnapshot, specById } from '../../spec/metadata.js';
import type {
  ManifestEntry,
  ManifestFile,
  PartitionSpec,
  SnapshotId,
  TableIdentifier,
} from '../../spec/types.js';
import type { Noop } from './table-action.js';
import { type CommitOptions, commitAction } from '../commit-loop.js';
import { prepareSnapshot } from '../snapshot-producer.js';
import { readCommitProperties, readWriteProperties } from '../../spec/table-properties.js';
import { carriedFloeSummary } from '../carried-summary.js';
import { type ManifestWithEntries, readSnapshotManifests } from '../snapshot-manifests.js';

export interface RewriteManifestsResult {
  status: 'rewritten' | 'nothing-to-rewrite' | 'dry-run';
  snapshotId: string | null;
  manifestsBefore: number;
  manifestsAfter: number;
  manifestsReplaced: number;
  manifestsCreated: number;
  entriesRewritten: number;
}

export interface RewriteManifestsOptions extends CommitOptions {
  dryRun?: boolean;
}

interface GroupDecision {
  manifests: ManifestWithEntries[];
  rewrite: boolean;
  /** Manifests the rewrite writes for the group. */
  outputs: number;
  entries: ManifestEntry[];
}

/** A table already in shape: nothing to rewrite, and the plan that found so. */
type InShape = Noop<'nothing-to-rewrite'> & { report: RewriteManifestsResult };

function comparePartitions(spec: PartitionSpec, a: ManifestEntry, b: ManifestEntry): number {
  for (const field of spec.fields) {
    const x = a.data_file.partition[field.name] ?? null;
    const y = b.data_file.partition[field.name] ?? null;
    if (x === null || y === null) {
      if (x !== y) return x === null ? -1 : 1;
      continue;
    }
    const c = compareValues(x, y);
    if (c !== 0) return c;
  }
  return a.data_file.file_path < b.data_file.file_path
    ? -1
    : a.data_file.file_path > b.data_file.file_path
      ? 1
      : 0;
}

function decide(manifests: ManifestWithEntries[], targetBytes: number): GroupDecision {
  const bytes = manifests.reduce((s, m) => s + Number(m.manifest.manifest_length), 0);
  const allEntries = manifests.reduce((s, m) => s + m.entries.length, 0);
  const entries = manifests.flatMap((m) => m.entries.filter((e) => e.status !== 2));
  const liveBytes = allEntries === 0 ? 0 : (bytes * entries.length) / allEntries;
  const outputs = Math.max(1, Math.ceil(liveBytes / targetBytes));
  const hasDeleted = entries.length < allEntries;
  return { manifests, rewrite: manifests.length > outputs || hasDeleted, outputs, entries };
}

/** How many entries go in each new manifest of a group, and so how many manifests it gets. */
function manifestsFor(d: GroupDecision): { perManifest: number; count: number } {
  const n = d.entries.length;
  if (n === 0) return { perManifest: 1, count: 0 };
  const perManifest = Math.ceil(n / Math.min(d.outputs, n));
  return { perManifest, count: Math.ceil(n / perManifest) };
}

function decideAll(manifests: ManifestWithEntries[], targetBytes: number): GroupDecision[] {
  const groups = new Map<string, ManifestWithEntries[]>();
  for (const m of manifests) {
    const key = `${m.manifest.content}/${m.manifest.partition_spec_id}`;
    groups.set(key, [...(groups.get(key) ?? []), m]);
  }
  return [...groups.values()].map((g) => decide(g, targetBytes));
}

/**
 * Rewrites the current snapshot's manifests of a table where that helps.
 * @throws CommitFailedError / CommitStateUnknownError / LockTimeoutError from the commit loop
 * @throws NotFoundError / TransientIOError / ValidationError from reading metadata
 */
export async function rewriteManifests(
  catalog: Catalog,
  id: TableIdentifier,
  options: RewriteManifestsOptions = {},
): Promise<RewriteManifestsResult> {
  const plan = async (base: LoadedTable) => {
    const snapshot = currentSnapshot(base.metadata);
    const manifests = snapshot ? await readSnapshotManifests(base.io, snapshot) : [];
    const target = readCommitProperties(base.metadata.properties).manifestTargetSizeBytes;
    const decisions = decideAll(manifests, target);
    const rewritten = decisions.filter((d) => d.rewrite);
    const replaced = rewritten.reduce((s, d) => s + d.manifests.length, 0);
    const created = rewritten.reduce((s, d) => s + manifestsFor(d).count, 0);
    const report: RewriteManifestsResult = {
      status: rewritten.length === 0 ? 'nothing-to-rewrite' : options.dryRun ? 'dry-run' : 'rewritten',
      snapshotId: null,
      manifestsBefore: manifests.length,
      manifestsAfter: manifests.length - replaced + created,
      manifestsReplaced: replaced,
      manifestsCreated: created,
      entriesRewritten: rewritten.reduce((s, d) => s + d.entries.length, 0),
    };
    return { decisions, rewritten, report };
  };
  if (options.dryRun) return (await plan(await catalog.loadTable(id))).report;
  // What each attempt's snapshot rewrote: the result reports the one that landed.
  const reports = new Map<SnapshotId, RewriteManifestsResult>();
  const outcome = await commitAction<InShape>(
    catalog,
    id,
    {
      prepare: async (base) => {
        const { decisions, rewritten, report } = await plan(base);
        if (rewritten.length === 0) return { kind: 'noop', reason: 'nothing-to-rewrite', report };
        const written: string[] = [];
        const prepared = await prepareSnapshot(base, {
          operation: 'replace',
          addedDataFiles: [],
          addedDeleteFiles: [],
          summary: {
            ...carriedFloeSummary(base.metadata),
            'manifests-created': String(report.manifestsCreated),
            'manifests-replaced': String(report.manifestsReplaced),
            'manifests-kept': String(report.manifestsBefore - report.manifestsReplaced),
            'entries-processed': String(report.entriesRewritten),
          },
          rewriteExisting: async (b, _carried, snapshotId) => {
            const manifests: ManifestFile[] = [];
            for (const d of decisions) {
              if (!d.rewrite) manifests.push(...d.manifests.map((m) => m.manifest));
              else manifests.push(...(await writeClustered(b, d, snapshotId, written)));
            }
            return { manifests, removed: [] };
          },
        });
        prepared.attemptFiles.push(...written);
        reports.set(prepared.snapshot['snapshot-id'], report);
        return { kind: 'change', change: prepared };
      },
    },
    options,
  );
  if (outcome.kind === 'noop') return outcome.report;
  const { snapshotId } = outcome.result;
  const report = snapshotId === undefined ? undefined : reports.get(snapshotId);
  if (report === undefined) {
    // The loop reports only this call's own snapshots for an action without a batch id.
    throw new CommitStateUnknownError(
      `${formatIdentifier(id)}: the manifest rewrite committed, but as snapshot ${snapshotId}, not one it prepared`,
    );
  }
  return { ...report, snapshotId: String(snapshotId) };
}

async function writeClustered(
  base: LoadedTable,
  decision: GroupDecision,
  snapshotId: bigint,
  written: string[],
): Promise<ManifestFile[]> {
  const md = base.metadata;
  const first = decision.manifests[0].manifest;
  const spec = specById(md, first.partition_spec_id);
  const entries = [...decision.entries].sort((a, b) => comparePartitions(spec, a, b));
  const { perManifest } = manifestsFor(decision);
  const attempt = randomUUID();
  const out: ManifestFile[] = [];
  for (let start = 0; start < entries.length; start += perManifest) {
    const location = joinLocation(md.location, 'metadata', `${attempt}-c${out.length}.avro`);
    written.push(location);
    out.push(
      await writeManifest({
        io: base.io,
        location,
        schema: currentSchema(md),
        spec,
        content: first.content,
        snapshotId,
        entries: entries.slice(start, start + perManifest).map((e) => ({ ...e, status: 0 as const })),
        codec: readWriteProperties(md.properties).avroCodec,
        formatVersion: md['format-version'],
      }),
    );
  }
  return out;
}
