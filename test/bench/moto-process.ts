/**
 * A moto server of the bench's own (S3, DynamoDB, S3 Tables) on a free loopback port, stopped by its
 * PID — the same recipe as test/integration/global-setup.ts, which is written for Vitest's setup hook.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { S3TablesClient } from '@aws-sdk/client-s3tables';
import { findFreePort } from '../support/free-port.js';

const STARTUP_TIMEOUT_MS = 30_000;
const REGION = 'us-east-1';
const CREDENTIALS = { accessKeyId: 'test', secretAccessKey: 'test' };

export interface MotoServer {
  endpoint: string;
  pid: number;
  s3(): S3Client;
  dynamodb(): DynamoDBClient;
  s3tables(): S3TablesClient;
  createBucket(prefix: string): Promise<string>;
  stop(): Promise<void>;
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

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  // Keep the event loop alive until moto is gone (the child was unref'd so it never holds the bench).
  child.ref();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  signalGroup(child, 'SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), 5_000);
  });
  const outcome = await Promise.race([exited, timeout]);
  clearTimeout(timer);
  if (outcome === 'timeout') {
    signalGroup(child, 'SIGKILL');
    await exited;
  }
}

/**
 * Starts `moto_server`; undefined when it is not on PATH or does not come up (the caller reports the
 * moto sections as skipped).
 */
export async function startMoto(): Promise<MotoServer | undefined> {
  const port = await findFreePort();
  const endpoint = `http://127.0.0.1:${port}`;
  let child: ChildProcess;
  try {
    child = spawn('moto_server', ['-H', '127.0.0.1', '-p', String(port)], {
      stdio: ['ignore', 'ignore', 'ignore'],
      detached: true,
    });
  } catch {
    return undefined;
  }
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  child.once('error', () => {
    exited = true;
  });
  child.unref();
  const killOnExit = () => signalGroup(child, 'SIGKILL');
  process.once('exit', killOnExit);
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (!(await answers(`${endpoint}/moto-api/`))) {
    if (exited || Date.now() > deadline) {
      await stopChild(child);
      process.removeListener('exit', killOnExit);
      return undefined;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // The SDK's default chain must never reach a real account from the bench.
  process.env.AWS_ACCESS_KEY_ID = CREDENTIALS.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = CREDENTIALS.secretAccessKey;
  process.env.AWS_REGION = REGION;
  const config = { endpoint, region: REGION, credentials: CREDENTIALS };
  const s3 = () => new S3Client({ ...config, forcePathStyle: true });
  return {
    endpoint,
    pid: child.pid ?? -1,
    s3,
    dynamodb: () => new DynamoDBClient(config),
    s3tables: () => new S3TablesClient(config),
    async createBucket(prefix) {
      const name = `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
      await s3().send(new CreateBucketCommand({ Bucket: name }));
      return name;
    },
    async stop() {
      process.removeListener('exit', killOnExit);
      await stopChild(child);
    },
  };
}

export { oneRequestAtATime } from '../support/one-request-at-a-time.js';
