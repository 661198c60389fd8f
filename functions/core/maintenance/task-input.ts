/**
 * The JSON the maintenance tasks exchange (the state machine's data contract, see
 * infra/maintenance-definition.ts): the execution input `{ "table": "ns.name", ...retention }`, each task
 * seeing the whole state, results under `$.plan`, `$.rewrites`, `$.commit`, ... Parsed here into typed
 * values; anything malformed is a ValidationError (not retried: the same input fails the same way).
 */
import type { TableIdentifier } from '../spec/types.js';
import { parseIdentifier } from '../catalog/catalog.js';
import { ValidationError } from '../errors.js';
import type { GroupOutcome } from './compact-group.js';
import type { TableFileStats } from './plan-compaction.js';

/** Options of a run, from the execution input (a schedule's, or `aws stepfunctions start-execution`). */
export interface RunOptions {
  table: string;
  maxSnapshotAgeMs?: number;
  minSnapshotsToKeep?: number;
  orphanFileAgeMs?: number;
  maxGroupBytes?: number;
  /** Report what would be done; change nothing. */
  dryRun?: boolean;
}

/** One Map item: a group of the plan, small enough for a Step Functions state. */
export interface GroupRef {
  /** The run: its plan file is `<table>/metadata/floe-maintenance/<runId>/plan.json`. */
  runId: string;
  index: number;
  files: number;
  bytes: number;
  partition: string;
}

export interface PlanOutput {
  table: string;
  runId: string;
  /** The plan file, or null when there is nothing to compact. */
  planLocation: string | null;
  snapshotId: string | null;
  groups: GroupRef[];
  /** The groups a dry run would rewrite (a dry run leaves `groups` empty so nothing runs). */
  wouldRewrite?: GroupRef[];
  before: TableFileStats;
  smallFiles: number;
  /** Why compaction is not floe's to do (an S3 Tables table). */
  skipped?: string;
}

type Json = Record<string, unknown>;

function objectOf(value: unknown, what: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ValidationError(`${what} must be a JSON object`);
  }
  return value as Json;
}

function optionalNumber(obj: Json, key: string): number | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new ValidationError(`'${key}' must be a number`);
  return v;
}

function stringOf(obj: Json, key: string): string {
  const v = obj[key];
  if (typeof v !== 'string' || v.length === 0)
    throw new ValidationError(`'${key}' must be a non-empty string`);
  return v;
}

/** `ns.name` → identifier. @throws ValidationError */
export function tableIdentifier(text: string): TableIdentifier {
  try {
    return parseIdentifier(text);
  } catch (error) {
    throw new ValidationError((error as Error).message);
  }
}

/** @throws ValidationError */
export function parseRunOptions(event: unknown): RunOptions {
  const obj = objectOf(event, 'the task input');
  const table = stringOf(obj, 'table');
  tableIdentifier(table);
  const dryRun = obj.dryRun;
  if (dryRun !== undefined && typeof dryRun !== 'boolean')
    throw new ValidationError(`'dryRun' must be a boolean`);
  return {
    table,
    maxSnapshotAgeMs: optionalNumber(obj, 'maxSnapshotAgeMs'),
    minSnapshotsToKeep: optionalNumber(obj, 'minSnapshotsToKeep'),
    orphanFileAgeMs: optionalNumber(obj, 'orphanFileAgeMs'),
    maxGroupBytes: optionalNumber(obj, 'maxGroupBytes'),
    dryRun,
  };
}

/** `{ table, group }`, a Map item. @throws ValidationError */
export function parseCompactInput(event: unknown): { table: string; group: GroupRef } {
  const obj = objectOf(event, 'the compact input');
  const group = objectOf(obj.group, "'group'");
  const index = optionalNumber(group, 'index');
  if (index === undefined || !Number.isInteger(index) || index < 0) {
    throw new ValidationError("'group.index' must be a whole number");
  }
  return {
    table: parseRunOptions(obj).table,
    group: { ...(group as unknown as GroupRef), runId: stringOf(group, 'runId'), index },
  };
}

/** `{ table, plan, rewrites }`. @throws ValidationError */
export function parseCommitInput(event: unknown): {
  table: string;
  plan: PlanOutput;
  rewrites: GroupOutcome[];
} {
  const obj = objectOf(event, 'the commit input');
  const plan = objectOf(obj.plan, "'plan'");
  stringOf(plan, 'planLocation');
  const rewrites = obj.rewrites ?? [];
  if (!Array.isArray(rewrites)) throw new ValidationError("'rewrites' must be an array");
  for (const r of rewrites) {
    const o = objectOf(r, 'a rewrite result');
    if (typeof o.index !== 'number' || typeof o.written !== 'boolean') {
      throw new ValidationError('a rewrite result needs an index and whether it wrote files');
    }
  }
  return {
    table: parseRunOptions(obj).table,
    plan: plan as unknown as PlanOutput,
    rewrites: rewrites as GroupOutcome[],
  };
}
