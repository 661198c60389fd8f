/**
 * Section 1 again, in a node process of its own started with the V8 heap flags Lambda's Node.js
 * bootstrap gives a function of the ingest construct's default memory (1024 MB, infra/ingest.ts):
 * `node --expose-gc --max-semi-space-size=<memory / 10 / 2> --max-old-space-size=<memory - memory / 10>`.
 * The section's own figures (and the targets) stay those of the bench's process, V8's defaults,
 * as they have been measured from the start; this one says what a deployed function pays.
 *
 * They differed: with a 922 MiB old space V8 grows the old generation by ≤ 1.9× between mark-compacts
 * (4× with the defaults on this machine), and a batch adds ~40 MiB to it (the event's objects caught
 * live by a scavenge, large objects), so a deployed function ran a mark-compact every batch, where the
 * default heap runs one every ~4. The handler now sets V8's growth for the function's memory at a cold
 * start (functions/handlers/heap-growth.ts); the child gets AWS_LAMBDA_FUNCTION_MEMORY_SIZE as Lambda
 * sets it, so it measures that.
 */
import { heapGrowingPercent } from '../../functions/handlers/heap-growth.js';
import { runSectionInChild } from './child-section.js';
import type { IngestFigures, IngestSettings } from './ingest-throughput.js';

/** The ingest function's memory when the construct is not told otherwise (infra/ingest.ts). */
export const INGEST_MEMORY_MB = 1024;

/** The heap flags Lambda's Node.js bootstrap derives from a function's memory. */
export function lambdaHeapFlags(memoryMb: number): string[] {
  const newSpace = Math.floor(memoryMb / 10);
  return [
    '--expose-gc',
    `--max-semi-space-size=${Math.floor(newSpace / 2)}`,
    `--max-old-space-size=${memoryMb - newSpace}`,
  ];
}

/** What the report keeps of the child's figures. */
export interface LambdaHeapIngest {
  memory_mb: number;
  node_flags: string[];
  /** The V8 heap growth the handler set at its cold start (heap-growth.ts), undefined: V8's own. */
  heap_growing_percent: number | undefined;
  floe_cpu_ms: number;
  floe_wall_ms: number;
  duckdb_cpu_ms: number;
  duckdb_event_cpu_ms: number;
  cpu_ratio: number;
  cpu_ratio_same_input: number;
  gc_share: number;
  phases_cpu_ms: IngestFigures['phases_cpu_ms'];
}

export async function runIngestInLambdaHeap(
  settings: IngestSettings,
  progress: (line: string) => void,
): Promise<LambdaHeapIngest> {
  const flags = lambdaHeapFlags(INGEST_MEMORY_MB);
  progress(`ingest: a child node with Lambda's heap flags for ${INGEST_MEMORY_MB} MB (${flags.join(' ')})`);
  const env = { AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(INGEST_MEMORY_MB) };
  const f = await runSectionInChild<IngestFigures>('ingest', settings, { nodeFlags: flags, env });
  return {
    memory_mb: INGEST_MEMORY_MB,
    node_flags: flags,
    heap_growing_percent: heapGrowingPercent({ ...process.env, ...env }),
    floe_cpu_ms: f.floe.cpu_ms,
    floe_wall_ms: f.floe.wall_ms,
    duckdb_cpu_ms: f.duckdb.cpu_ms,
    duckdb_event_cpu_ms: f.duckdb_event.cpu_ms,
    cpu_ratio: f.cpu_ratio,
    cpu_ratio_same_input: f.cpu_ratio_same_input,
    gc_share: f.gc_share,
    phases_cpu_ms: f.phases_cpu_ms,
  };
}
