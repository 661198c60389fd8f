import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants as fsConstants } from 'node:fs';
import * as path from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildFloeCli, FLOE_CLI_BUNDLE } from '../support/floe-cli.js';
import { findFreePort } from '../support/free-port.js';

/**
 * Integration-test services: one moto server (S3, DynamoDB, S3 Tables) for the whole run.
 *
 * - `AWS_ENDPOINT_URL` set (a user's LocalStack): that endpoint is used and nothing is started.
 * - `moto_server` on PATH: started on a free loopback port, stopped by its PID in teardown.
 * - neither: under CI (`CI=true`) the run fails loudly; elsewhere an empty endpoint is provided and the
 *   suites that need it skip themselves (test/integration/moto.ts, `describeWithMoto`).
 */

declare module 'vitest' {
  export interface ProvidedContext {
    /** Base URL of the S3/DynamoDB endpoint for tests, or '' when none is available. */
    motoEndpoint: string;
    /** True when this setup started the server itself (so `/moto-api/reset` exists). */
    motoManaged: boolean;
  }
}

const STARTUP_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5_000;
/** moto logs every request on stderr: keep only a tail for error messages, but always drain the pipe. */
const STDERR_TAIL_CHARS = 16_000;
const START_ATTEMPTS = 3;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await buildFloeCli();
  process.env.FLOE_TEST_CLI = FLOE_CLI_BUNDLE;
  const external = process.env.AWS_ENDPOINT_URL;
  if (external) {
    console.info(`[integration] using AWS_ENDPOINT_URL=${external} (moto not started)`);
    project.provide('motoEndpoint', external.replace(/\/+$/, ''));
    project.provide('motoManaged', false);
    return async () => undefined;
  }

  if (!isOnPath('moto_server')) {
    const message = 'moto_server not found on PATH: integration tests skipped';
    if (process.env.CI === 'true') {
      throw new Error(
        `FATAL: ${message.replace('skipped', 'cannot run')} (CI=true requires moto server 5.x)`,
      );
    }
    console.warn(`\n[integration] ${message}. Install moto[server] or set AWS_ENDPOINT_URL.\n`);
    project.provide('motoEndpoint', '');
    project.provide('motoManaged', false);
    return async () => undefined;
  }

  const server = await startMotoWithRetries();
  console.info(`[integration] moto_server pid ${server.child.pid} on ${server.endpoint}`);
  project.provide('motoEndpoint', server.endpoint);
  project.provide('motoManaged', true);
  // If vitest dies without teardown, do not leave moto behind.
  const killOnExit = () => killGroup(server.child, 'SIGKILL');
  process.once('exit', killOnExit);
  return async () => {
    process.removeListener('exit', killOnExit);
    await stopMoto(server.child);
  };
}

interface MotoServer {
  child: ChildProcess;
  endpoint: string;
}

/** moto could not start; `exitedEarly` when it died at once (e.g. its port was taken meanwhile). */
class MotoStartError extends Error {
  constructor(
    message: string,
    readonly exitedEarly: boolean,
  ) {
    super(message);
  }
}

/**
 * A free port can be taken between probing it and moto binding it: when moto dies at once, try another
 * port; a server that hangs is not retried (that would only triple the wait).
 */
async function startMotoWithRetries(): Promise<MotoServer> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startMoto(await findFreePort());
    } catch (error) {
      if (!(error instanceof MotoStartError && error.exitedEarly) || attempt >= START_ATTEMPTS) throw error;
    }
  }
}

/** @throws Error with moto's stderr when it exits early or does not answer within 30 s */
async function startMoto(port: number): Promise<MotoServer> {
  const endpoint = `http://127.0.0.1:${port}`;
  // detached: moto gets its own process group, so teardown can signal it and anything it forked.
  const child = spawn('moto_server', ['-H', '127.0.0.1', '-p', String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let stderrTail = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderrTail = (stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
  });
  let exit: string | undefined;
  child.once('exit', (code, signal) => {
    exit = `exited with ${signal ?? `code ${code}`}`;
  });
  child.once('error', (error) => {
    exit = `could not be spawned: ${error.message}`;
  });
  child.unref();

  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exit !== undefined) {
      throw new MotoStartError(`moto_server on port ${port} ${exit}. stderr:\n${stderrTail}`, true);
    }
    if (await answers(`${endpoint}/moto-api/`)) return { child, endpoint };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stopMoto(child);
  throw new MotoStartError(
    `moto_server on port ${port} did not answer GET /moto-api/ within ${STARTUP_TIMEOUT_MS / 1000} s. stderr:\n${stderrTail}`,
    false,
  );
}

async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

/** SIGTERM, then SIGKILL if it is still alive after 5 s. */
async function stopMoto(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  killGroup(child, 'SIGTERM');
  const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), STOP_GRACE_MS));
  if ((await Promise.race([exited, timer])) === 'timeout') {
    killGroup(child, 'SIGKILL');
    await exited;
  }
}

/** Signals the process group led by the child (it was spawned detached), by its PID. */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

function isOnPath(command: string): boolean {
  for (const directory of (process.env.PATH ?? '').split(path.delimiter)) {
    if (directory === '') continue;
    try {
      accessSync(path.join(directory, command), fsConstants.X_OK);
      return true;
    } catch {
      // not in this directory
    }
  }
  return false;
}
