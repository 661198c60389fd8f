/**
 * Runs one bundled function (an asset folder `cdk synth` wrote) under AWS's Node.js runtime interface
 * client, npm `aws-lambda-ric` — the client of Lambda's managed runtimes — against a loopback Runtime API
 * (lambda-runtime-api.ts). The process gets what Lambda gives a function: its handler, task root, the
 * variables the client reads, and the environment the synthesized template gives it; it runs on the
 * pinned Node 22 (`node_modules/.bin/node`), the major of the `nodejs22.x` runtime, not the machine's.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type InvokeOptions, type InvokeResult, LambdaRuntimeApi } from './lambda-runtime-api.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The pinned Node 22 (the `node` devDependency), resolved so no PATH lookup can pick Node 20. */
export const PINNED_NODE = realpathSync(path.join(REPO_ROOT, 'node_modules', '.bin', 'node'));
const RIC_ENTRY = path.join(REPO_ROOT, 'node_modules', 'aws-lambda-ric', 'index.mjs');
const OUTPUT_TAIL_CHARS = 64_000;

/** A function as the template describes it. */
export interface FunctionSpec {
  /** The function's name (its logical id in the template). */
  name: string;
  /** The asset folder holding index.mjs. */
  assetDir: string;
  /** `index.<export>`. */
  handler: string;
  memorySize: number;
  timeoutSeconds: number;
  /** The template's environment, resolved to plain strings. */
  environment: Record<string, string>;
}

export interface RicProcess {
  readonly runtime: LambdaRuntimeApi;
  readonly pid: number;
  /** `performance.now()` when the process was spawned. */
  readonly spawnedAt: number;
  /** `performance.now()` of the first /next poll: the end of the function's init. */
  readonly initDone: Promise<number>;
  invoke(event: unknown, options?: InvokeOptions): Promise<InvokeResult>;
  /** Resident set size of the process now, in MiB (from /proc). */
  rssMb(): number;
  /** What the function wrote on stdout and stderr (its log lines), the last 64 KB. */
  output(): string;
  /** Stops the process by its PID and closes the Runtime API. */
  stop(): Promise<void>;
}

/**
 * Spawns the runtime client for `fn`. `env` adds to (and overrides) the template's environment: the
 * endpoints of the local services and their dummy credentials.
 */
export async function startRic(fn: FunctionSpec, env: Record<string, string> = {}): Promise<RicProcess> {
  const runtime = await LambdaRuntimeApi.start(`arn:aws:lambda:us-east-1:111122223333:function:${fn.name}`);
  const spawnedAt = performance.now();
  const child = spawn(PINNED_NODE, [RIC_ENTRY, fn.handler], {
    cwd: fn.assetDir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      // Nothing from the test process leaks in but PATH and the time zone: a function sees its template.
      PATH: process.env.PATH ?? '',
      TZ: 'UTC',
      LANG: 'en_US.UTF-8',
      ...fn.environment,
      AWS_LAMBDA_RUNTIME_API: runtime.address,
      _HANDLER: fn.handler,
      LAMBDA_TASK_ROOT: fn.assetDir,
      LAMBDA_RUNTIME_DIR: path.dirname(RIC_ENTRY),
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
      AWS_LAMBDA_FUNCTION_NAME: fn.name,
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memorySize),
      AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${fn.name}`,
      AWS_LAMBDA_LOG_STREAM_NAME: `2026/12/01/[$LATEST]${runtime.address.replace(/\W/g, '')}`,
      ...env,
    },
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', (code, signal) => runtime.failPending(`function process exited (${signal ?? code})`));
  const initDone = runtime.polled(1).then(() => performance.now());
  if (child.pid === undefined) throw new Error(`could not spawn ${PINNED_NODE} for ${fn.name}`);
  const pid = child.pid;
  return {
    runtime,
    pid,
    spawnedAt,
    initDone,
    invoke: (event, options) => runtime.invoke(event, { timeoutMs: fn.timeoutSeconds * 1000, ...options }),
    rssMb: () => rssOf(pid),
    output: () => output,
    stop: async () => {
      await stopProcess(child, exited);
      await runtime.close();
    },
  };
}

function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1]);
  return kb / 1024;
}

/** SIGTERM by PID, SIGKILL after 5 s. */
async function stopProcess(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 5_000).unref());
  if ((await Promise.race([exited, timer])) === 'timeout') {
    child.kill('SIGKILL');
    await exited;
  }
}
