/**
 * What table maintenance aims at, from the table's properties (Iceberg's names and defaults) and the
 * run's overrides (a schedule's input, CLI flags). Overrides win over properties; a branch's own
 * retention (`max-snapshot-age-ms` / `min-snapshots-to-keep` on the ref) wins over both, as in Iceberg Java.
 */
import { ValidationError } from '../errors.js';
import { readMaintenanceProperties, readWriteProperties } from '../spec/table-properties.js';
import type { TableMetadata } from '../spec/types.js';

/** Iceberg's DeleteOrphanFiles default window: files younger than this may belong to a commit in flight. */
export const DEFAULT_ORPHAN_FILE_AGE_MS = 3 * 24 * 3_600_000;
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

function checkOverride(name: string, value: number | undefined, min: number): void {
  if (value === undefined) return;
  if (!Number.isFinite(value) || value < min) {
    throw new ValidationError(`${name} must be a number ≥ ${min}, got ${value}`);
  }
}

/**
 * Settings for one table.
 * @throws ValidationError for an override that is not a number in range, or a malformed
 *   `history.expire.*`, `floe.maintenance.*` or `write.*` property (spec/table-properties.ts)
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
  const props = readMaintenanceProperties(metadata.properties);
  const target =
    overrides.targetFileSizeBytes ?? readWriteProperties(metadata.properties).targetFileSizeBytes;
  return {
    targetFileSizeBytes: Math.floor(target),
    smallFileBytes: Math.floor(target * SMALL_FILE_RATIO),
    maxGroupBytes: overrides.maxGroupBytes ?? props.maxGroupBytes,
    minInputFiles: props.minInputFiles,
    maxGroupsPerRun: props.maxGroupsPerRun,
    maxSnapshotAgeMs: overrides.maxSnapshotAgeMs ?? props.maxSnapshotAgeMs,
    minSnapshotsToKeep: Math.floor(overrides.minSnapshotsToKeep ?? props.minSnapshotsToKeep),
    maxRefAgeMs: props.maxRefAgeMs,
    orphanFileAgeMs: overrides.orphanFileAgeMs ?? DEFAULT_ORPHAN_FILE_AGE_MS,
  };
}
