/**
 * What table maintenance aims at, from the table's properties (Iceberg's names and defaults) and the
 * run's overrides (a schedule's input, CLI flags). Overrides win over properties; a branch's own
 * retention (`max-snapshot-age-ms` / `min-snapshots-to-keep` on the ref) wins over both, as in Iceberg Java.
 */
import { ValidationError } from '../errors.js';
import type { TableMetadata } from '../spec/types.js';
import { targetFileSizeBytes } from '../table/table-properties.js';

/** Iceberg's `history.expire.max-snapshot-age-ms` default: 5 days. */
export const DEFAULT_MAX_SNAPSHOT_AGE_MS = 5 * 24 * 3_600_000;
/** Iceberg's `history.expire.min-snapshots-to-keep` default. */
export const DEFAULT_MIN_SNAPSHOTS_TO_KEEP = 1;
/** Iceberg's DeleteOrphanFiles default window: files younger than this may belong to a commit in flight. */
export const DEFAULT_ORPHAN_FILE_AGE_MS = 3 * 24 * 3_600_000;
/**
 * Input bytes one compaction group may hold. Rows are decoded into memory to apply deletes and sort:
 * 128 MiB of compressed Parquet stays well inside a 3 GB Lambda and its 15 minutes.
 */
export const DEFAULT_MAX_GROUP_BYTES = 128 * 1024 * 1024;
/**
 * Rewrite groups one run takes on: each group travels through the state machine's state twice (plan,
 * result), which Step Functions caps at 256 KB. The rest wait for the next run.
 */
export const DEFAULT_MAX_GROUPS_PER_RUN = 400;
/** Iceberg's RewriteDataFiles `min-file-size-bytes` default ratio: below 75% of the target a file is small. */
export const SMALL_FILE_RATIO = 0.75;

export interface MaintenanceSettings {
  /** `write.target-file-size-bytes`: what compaction writes. */
  targetFileSizeBytes: number;
  /** Files below this are compaction candidates (75% of the target, Iceberg's `min-file-size-bytes`). */
  smallFileBytes: number;
  /** `floe.maintenance.max-group-bytes`: input bytes of one rewrite group (one Lambda invocation). */
  maxGroupBytes: number;
  /** `floe.maintenance.min-input-files`: small files a partition needs before it is worth rewriting. */
  minInputFiles: number;
  /** `floe.maintenance.max-groups-per-run`: the groups with the most files go first. */
  maxGroupsPerRun: number;
  /** `history.expire.max-snapshot-age-ms`. */
  maxSnapshotAgeMs: number;
  /** `history.expire.min-snapshots-to-keep`. */
  minSnapshotsToKeep: number;
  /** `history.expire.max-ref-age-ms` (branches and tags other than main); Infinity when unset. */
  maxRefAgeMs: number;
  /** Orphan files younger than this are never removed. */
  orphanFileAgeMs: number;
}

export interface MaintenanceOverrides {
  maxSnapshotAgeMs?: number;
  minSnapshotsToKeep?: number;
  orphanFileAgeMs?: number;
  maxGroupBytes?: number;
  targetFileSizeBytes?: number;
}

function positiveProperty(props: Record<string, string>, key: string, fallback: number): number {
  const raw = props[key];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

function checkOverride(name: string, value: number | undefined, min: number): void {
  if (value === undefined) return;
  if (!Number.isFinite(value) || value < min) {
    throw new ValidationError(`${name} must be a number ≥ ${min}, got ${value}`);
  }
}

/**
 * Settings for one table.
 * @throws ValidationError for an override that is not a number in range
 */
export function resolveSettings(
  metadata: TableMetadata,
  overrides: MaintenanceOverrides = {},
): MaintenanceSettings {
  checkOverride('maxSnapshotAgeMs', overrides.maxSnapshotAgeMs, 0);
  checkOverride('minSnapshotsToKeep', overrides.minSnapshotsToKeep, 1);
  checkOverride('orphanFileAgeMs', overrides.orphanFileAgeMs, 0);
  checkOverride('maxGroupBytes', overrides.maxGroupBytes, 1);
  checkOverride('targetFileSizeBytes', overrides.targetFileSizeBytes, 1);
  const props = metadata.properties ?? {};
  const target = overrides.targetFileSizeBytes ?? targetFileSizeBytes(props);
  return {
    targetFileSizeBytes: Math.floor(target),
    smallFileBytes: Math.floor(target * SMALL_FILE_RATIO),
    maxGroupBytes:
      overrides.maxGroupBytes ??
      positiveProperty(props, 'floe.maintenance.max-group-bytes', DEFAULT_MAX_GROUP_BYTES),
    minInputFiles: Math.max(2, Math.floor(positiveProperty(props, 'floe.maintenance.min-input-files', 2))),
    maxGroupsPerRun: Math.floor(
      positiveProperty(props, 'floe.maintenance.max-groups-per-run', DEFAULT_MAX_GROUPS_PER_RUN),
    ),
    maxSnapshotAgeMs:
      overrides.maxSnapshotAgeMs ??
      positiveProperty(props, 'history.expire.max-snapshot-age-ms', DEFAULT_MAX_SNAPSHOT_AGE_MS),
    minSnapshotsToKeep: Math.floor(
      overrides.minSnapshotsToKeep ??
        positiveProperty(props, 'history.expire.min-snapshots-to-keep', DEFAULT_MIN_SNAPSHOTS_TO_KEEP),
    ),
    maxRefAgeMs: positiveProperty(props, 'history.expire.max-ref-age-ms', Number.POSITIVE_INFINITY),
    orphanFileAgeMs: overrides.orphanFileAgeMs ?? DEFAULT_ORPHAN_FILE_AGE_MS,
  };
}
