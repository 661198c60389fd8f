/**
 * A real Kafka-protocol broker for tests: librdkafka's mock cluster, started through Debian's `kcat`
 * (`kcat -b 127.0.0.1:1 -X test.mock.num.brokers=3 -d mock -C -t <topic>`), which prints its address on
 * stderr as `bootstrap.servers=127.0.0.1:PORT`. Started by a test file's beforeAll, stopped by its PID.
 * Every auto-created topic has 4 partitions; producing to a topic creates it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants as fsConstants } from 'node:fs';
import * as path from 'node:path';

const STARTUP_TIMEOUT_MS = 20_000;
const STOP_GRACE_MS = 5_000;

export interface MockKafka {
  /** `127.0.0.1:PORT` of the mock cluster. */
  bootstrapServers: string;
  /** The kcat process the mock cluster lives in (the bench reads its CPU). */
  pid: number | undefined;
  stop(): Promise<void>;
}

/** Whether kcat is on PATH; under CI its absence is an error, elsewhere the suite skips with a message. */
export function kcatAvailable(): boolean {
  const found = (process.env.PATH ?? '').split(path.delimiter).some((directory) => {
    if (directory === '') return false;
    try {
      accessSync(path.join(directory, 'kcat'), fsConstants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
  if (!found && process.env.CI === 'true') {
    throw new Error('FATAL: kcat not found on PATH (CI=true requires it: apt-get install -y kcat)');
  }
  if (!found) {
    console.warn(
      '\n[kafka] kcat not found on PATH: Kafka integration tests skipped (apt-get install -y kcat)\n',
    );
  }
  return found;
}

/** @throws Error with kcat's stderr when it exits or prints no address within 20 s */
export async function startMockKafka(brokers = 3): Promise<MockKafka> {
  // kcat itself consumes a throwaway topic; the mock cluster lives as long as the process does.
  const child = spawn(
    'kcat',
    ['-b', '127.0.0.1:1', '-X', `test.mock.num.brokers=${brokers}`, '-d', 'mock', '-C', '-t', '__kcat_idle'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`kcat printed no bootstrap.servers within ${STARTUP_TIMEOUT_MS} ms:\n${stderr}`));
    }, STARTUP_TIMEOUT_MS);
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      // Keep only a tail: the mock logs every request at debug level, and the pipe must be drained.
      stderr = (stderr + chunk).slice(-16_000);
      const match = /bootstrap\.servers=(127\.0\.0\.1:\d+(?:,127\.0\.0\.1:\d+)*)/.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(
        new Error(`kcat exited with ${signal ?? `code ${code}`} before it printed an address:\n${stderr}`),
      );
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
  return { bootstrapServers: address, pid: child.pid, stop: () => stopChild(child) };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.kill(child.pid, 'SIGTERM');
  const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), STOP_GRACE_MS));
  if ((await Promise.race([exited, timer])) === 'timeout') {
    try {
      process.kill(child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await exited;
  }
}
