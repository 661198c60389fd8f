/**
 * Runs `floe` as a user does: a child process (the bundled CLI, test/support/floe-cli.ts) under the
 * pinned Node 22 (Node 20 lacks JSON.rawJSON), with only the environment given here — no FLOE_* or AWS_* variable of
 * the test process leaks in, so each test says exactly which endpoint and catalog the CLI sees.
 *
 * Asynchronous on purpose: the REST catalog server of a test runs in the test process and must keep
 * answering while the CLI runs.
 */
import { spawn } from 'node:child_process';

import { floeNodeArgs, PINNED_NODE, REPO_ROOT } from '../../support/floe-cli.js';

/** A CLI run that takes longer is stuck (a start is ~1 s, on a busy shared machine ~10 s). */
const RUN_TIMEOUT_MS = 120_000;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  args: string[];
  /** When the process was spawned and when it exited (epoch ms). */
  startedAt: number;
  endedAt: number;
}

/** The environment of a CLI run against the given AWS endpoint (moto): dummy credentials, one region. */
export function awsEnv(endpoint: string): Record<string, string> {
  return {
    AWS_ENDPOINT_URL: endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    // no instance metadata lookups on a machine that is not EC2
    AWS_EC2_METADATA_DISABLED: 'true',
  };
}

/** Runs `floe <args>`; resolves with its exit code and output (never rejects for a non-zero exit). */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const startedAt = Date.now();
    const child = spawn(PINNED_NODE, [...floeNodeArgs(), ...args], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, args, startedAt, endedAt: Date.now() });
    });
  });
}

/** Runs `floe <args>` and throws with its output unless it exits with 0. */
export async function runCliOk(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const result = await runCli(args, env);
  if (result.code !== 0) {
    throw new Error(
      `floe ${args.join(' ')} exited with ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`,
    );
  }
  return result;
}
