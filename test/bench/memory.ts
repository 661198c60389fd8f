/**
 * Section 5: memory of the 6 MB batch, measured in a child process so the figure is the batch's, not the
 * bench harness's: the handler bundled as the Lambda is (`bundleFloeFunction` of infra/bundle-function.ts:
 * split ESM, minified, the same banner and WebAssembly next to it), then run under plain node on one
 * cold and several warm invocations. Peak RSS is the child's own high-water mark (VmHWM; memory-child.ts
 * says why not getrusage's maxrss).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { bundleFloeFunction } from '../../infra/bundle-function.js';
import { FUNCTION_RUNTIME_ENVIRONMENT } from '../../infra/functions.js';
import { INGEST_MEMORY_MB, lambdaHeapFlags } from './ingest-lambda-heap.js';
import { makeOrderMessages, makeOrdersEvent, ORDERS_TOPIC, readOrdersSchema } from './orders-batch.js';

const run = promisify(execFile);

export interface MemorySettings {
  records: number;
  partitions: number;
  seed: number;
  /** Invocations in the child: the first is cold, the rest warm. */
  invocations: number;
}

export interface MemoryFigures {
  /** Peak RSS over all invocations with the old space capped at heap_cap_mb (MB = MiB). */
  peak_rss_mb: number;
  /** Peak RSS after the first (cold) invocation, uncapped. */
  cold_peak_rss_mb: number;
  /** Peak RSS over all invocations with V8's default heap sizing on this machine. */
  uncapped_peak_rss_mb: number;
  /**
   * Peak RSS over all invocations as a deployed function of the ingest construct's default memory runs:
   * Lambda's heap flags and AWS_LAMBDA_FUNCTION_MEMORY_SIZE (so with the heap growth the handler sets,
   * functions/handlers/heap-growth.ts). Memory the function has anyway, spent to save CPU.
   */
  lambda_peak_rss_mb: number;
  lambda_memory_mb: number;
  heap_cap_mb: number;
  /** RSS after loading the bundle, before any event. */
  baseline_rss_mb: number;
  wasm_heap_mb: number;
  /** Largest live JS heap seen after an invocation (capped run). */
  js_heap_used_mb: number;
  event_mb: number;
  invocations: number;
  target_mb: number;
}

/**
 * V8 sizes its heap from the machine's memory: on a 24 GiB machine it lets garbage pile up across warm
 * invocations (RSS keeps rising while the live heap cycles back), which a 512 MB Lambda's V8 would not.
 * The second child caps the old space, as a small Lambda's memory does, to show the batch's steady state.
 */
const HEAP_CAP_MB = 128;

interface ChildOutput {
  baseline_rss_mb: number;
  invocations: { peak_rss_mb: number; wasm_heap_mb: number; heap_used_mb: number }[];
  peak: number;
}

/** Each child its own warehouse (every child ingests the same events from offset 0). */
let children = 0;

async function runChild(
  dir: string,
  bundle: string,
  files: string[],
  nodeFlags: string[],
  progress: (line: string) => void,
  extraEnv: Record<string, string> = {},
): Promise<ChildOutput> {
  progress(`memory: running the bundle in a child process ${nodeFlags.join(' ')}`.trim());
  const { stdout } = await run(process.execPath, [...nodeFlags, bundle, ...files], {
    cwd: dir,
    maxBuffer: 1024 * 1024,
    env: {
      // as the construct runs the function (the malloc setting among them)
      ...FUNCTION_RUNTIME_ENVIRONMENT,
      PATH: process.env.PATH ?? '',
      FLOE_CATALOG: 'embedded',
      FLOE_WAREHOUSE: join(dir, `warehouse${children++}`),
      FLOE_TABLES: JSON.stringify([
        { table: 'bench.orders', topics: [ORDERS_TOPIC], schema: readOrdersSchema() },
      ]),
      POWERTOOLS_LOG_LEVEL: 'WARN',
      POWERTOOLS_METRICS_DISABLED: 'true',
      ...extraEnv,
    },
  });
  const out = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as Omit<ChildOutput, 'peak'>;
  return { ...out, peak: Math.max(...out.invocations.map((i) => i.peak_rss_mb)) };
}

export async function runMemory(
  settings: MemorySettings,
  progress: (line: string) => void,
): Promise<MemoryFigures> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-bench-memory-'));
  try {
    progress('memory: bundling the handler as deployed');
    const entry = fileURLToPath(new URL('./memory-child.ts', import.meta.url));
    await bundleFloeFunction(entry, dir);
    const bundle = join(dir, 'index.mjs');
    const messages = makeOrderMessages(settings);
    const perPartition = Math.max(...messages.map((m) => m.index)) + 1;
    const files: string[] = [];
    let eventBytes = 0;
    for (let i = 0; i < settings.invocations; i++) {
      const file = join(dir, `event-${i}.json`);
      const text = JSON.stringify(makeOrdersEvent(messages, i * perPartition));
      eventBytes = Buffer.byteLength(text);
      await writeFile(file, text);
      files.push(file);
    }
    const uncapped = await runChild(dir, bundle, files, [], progress);
    const capped = await runChild(dir, bundle, files, [`--max-old-space-size=${HEAP_CAP_MB}`], progress);
    const lambda = await runChild(dir, bundle, files, lambdaHeapFlags(INGEST_MEMORY_MB), progress, {
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(INGEST_MEMORY_MB),
    });
    return {
      peak_rss_mb: capped.peak,
      cold_peak_rss_mb: uncapped.invocations[0].peak_rss_mb,
      uncapped_peak_rss_mb: uncapped.peak,
      lambda_peak_rss_mb: lambda.peak,
      lambda_memory_mb: INGEST_MEMORY_MB,
      heap_cap_mb: HEAP_CAP_MB,
      baseline_rss_mb: uncapped.baseline_rss_mb,
      wasm_heap_mb: Math.max(...uncapped.invocations.map((i) => i.wasm_heap_mb)),
      js_heap_used_mb: Math.max(...capped.invocations.map((i) => i.heap_used_mb)),
      event_mb: eventBytes / (1024 * 1024),
      invocations: uncapped.invocations.length,
      target_mb: 256,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
