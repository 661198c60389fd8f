/**
 * The files one compaction run passes between its steps, under
 * `<table>/metadata/floe-maintenance/<runId>/`: the plan (`plan.json`: which files each group rewrites)
 * and each group's result (`group-<i>.avro`: the DataFiles it wrote).
 *
 * Why files and not the step results themselves: Step Functions caps a state at 256 KB, and a plan over
 * thousands of small files, or a group's DataFiles with their column metrics, would not fit. Results
 * are written in the manifest format (a manifest of ADDED entries) so DataFiles round-trip exactly
 * through the one codec that already encodes them. Nothing in table metadata references these files:
 * the commit deletes them, and orphan removal collects those of runs that never committed.
 */
import { randomUUID } from 'node:crypto';
import { ValidationError } from '../errors.js';
import type { FileIO } from '../io/file-io.js';
import { joinLocation } from '../io/location.js';
import { readManifestEntries } from '../manifest/manifest-reader.js';
import { writeManifest } from '../manifest/manifest-writer.js';
import type { DataFile, PartitionSpec, Schema } from '../spec/types.js';

export interface RewriteGroupPlan {
  index: number;
  specId: number;
  /** The partition as a path (`day=2024-05-01`), for people. */
  partition: string;
  /** Data files the group replaces. */
  files: string[];
  bytes: number;
  records: number;
  /** How many of those files had deletes applying to them at the starting snapshot. */
  filesWithDeletes: number;
}

export interface RewritePlan {
  version: 1;
  runId: string;
  table: string;
  /** The snapshot the rewrite reads (its starting snapshot), as a decimal string. */
  snapshotId: string;
  /** That snapshot's sequence number: the data sequence number of every file the rewrite writes. */
  sequenceNumber: number;
  targetFileSizeBytes: number;
  groups: RewriteGroupPlan[];
}

/** A new run id: sortable by time, unique. Never throws. */
export function newRunId(nowMs = Date.now()): string {
  return `${new Date(nowMs).toISOString().replace(/[-:.]/g, '')}-${randomUUID().slice(0, 8)}`;
}

/** The folder of a run's files. @throws ValidationError for a run id that is not one path segment */
export function runFolder(tableLocation: string, runId: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(runId)) throw new ValidationError(`'${runId}' is not a maintenance run id`);
  return joinLocation(tableLocation, 'metadata', 'floe-maintenance', runId);
}

export function planLocation(tableLocation: string, runId: string): string {
  return joinLocation(runFolder(tableLocation, runId), 'plan.json');
}

export function groupResultLocation(tableLocation: string, runId: string, index: number): string {
  return joinLocation(runFolder(tableLocation, runId), `group-${index}.avro`);
}

/** @throws whatever `io.write` throws */
export async function writeRewritePlan(io: FileIO, location: string, plan: RewritePlan): Promise<void> {
  await io.write(location, new TextEncoder().encode(JSON.stringify(plan)));
}

/**
 * Reads a plan written by {@link writeRewritePlan}.
 * @throws NotFoundError when it is gone; ValidationError when it is not a plan
 */
export async function readRewritePlan(io: FileIO, location: string): Promise<RewritePlan> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(await io.read(location)));
  } catch (error) {
    if (error instanceof SyntaxError) throw new ValidationError(`${location} is not JSON`, { cause: error });
    throw error;
  }
  const plan = parsed as Partial<RewritePlan> | null;
  if (
    plan === null ||
    typeof plan !== 'object' ||
    plan.version !== 1 ||
    typeof plan.runId !== 'string' ||
    typeof plan.snapshotId !== 'string' ||
    typeof plan.sequenceNumber !== 'number' ||
    !Array.isArray(plan.groups) ||
    plan.groups.some((g) => !Array.isArray(g?.files) || typeof g.index !== 'number')
  ) {
    throw new ValidationError(`${location} is not a floe rewrite plan`);
  }
  return plan as RewritePlan;
}

/**
 * Writes a group's new DataFiles as a manifest of ADDED entries (snapshot id 0: no snapshot yet).
 * @throws ValidationError when a file does not fit the spec; whatever `io.write` throws
 */
export async function writeGroupResult(
  io: FileIO,
  location: string,
  schema: Schema,
  spec: PartitionSpec,
  files: DataFile[],
): Promise<void> {
  await writeManifest({
    io,
    location,
    schema,
    spec,
    content: 0,
    snapshotId: 0n,
    entries: files.map((data_file) => ({
      status: 1,
      snapshot_id: null,
      sequence_number: null,
      file_sequence_number: null,
      data_file,
    })),
  });
}

/**
 * Reads the DataFiles of a group result.
 * @throws NotFoundError when it is gone; ValidationError when it is not a manifest
 */
export async function readGroupResult(io: FileIO, location: string, specId: number): Promise<DataFile[]> {
  const entries = await readManifestEntries(io, {
    manifest_path: location,
    manifest_length: 0n,
    partition_spec_id: specId,
    content: 0,
    sequence_number: 1n,
    min_sequence_number: 1n,
    added_snapshot_id: 0n,
    added_files_count: 0,
    existing_files_count: 0,
    deleted_files_count: 0,
    added_rows_count: 0n,
    existing_rows_count: 0n,
    deleted_rows_count: 0n,
    partitions: null,
  });
  return entries.map((e) => e.data_file);
}
