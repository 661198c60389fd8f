/**
 * The CLI's last resort (exit-guard.ts): a process still alive after its command names what is open
 * and exits with the command's code, never before its output reached its reader, and the guard itself
 * keeps nothing alive. One case runs in a child process, for what only a real exit shows (the code,
 * every byte of a large output through a pipe); the others in process, with the guard's seams.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dropLeftovers, exitWhenStuck } from '../../../functions/cli/exit-guard.js';
import { PINNED_NODE, REPO_ROOT } from '../../support/floe-cli.js';

const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('exitWhenStuck', () => {
  it('names what keeps the process alive and exits with the command code', async () => {
    // Prepare: a server left listening (what a leaked socket looks like)
    const leaked = createServer();
    leaked.listen(0, '127.0.0.1');
    await once(leaked, 'listening');
    let text = '';
    const exited = new Promise<number>((resolve) => {
      // Act
      exitWhenStuck(3, {
        afterMs: 10,
        report: (t, done) => {
          text = t;
          done();
        },
        exit: resolve,
      });
    });

    // Assess
    expect(await exited).toBe(3);
    expect(text).toMatch(/^floe: bug: .*still open: .*TCPServerWrap/);
    leaked.close();
  });

  it('waits while output is still on its way to its reader', async () => {
    // Prepare: output pending at the first two checks
    let checks = 0;
    const exited = new Promise<number>((resolve) => {
      // Act
      exitWhenStuck(0, {
        afterMs: 5,
        writing: () => ++checks <= 2,
        report: (_, done) => done(),
        exit: resolve,
      });
    });

    // Assess: it exited at the third check, the first with nothing left to write
    await exited;
    expect(checks).toBe(3);
  });

  it('keeps nothing alive itself', async () => {
    // Prepare
    const before = timeouts();
    let exitedWith: number | undefined;

    // Act
    exitWhenStuck(0, { afterMs: 60_000, exit: (code) => (exitedWith = code) });

    // Assess: its timer is not one that holds the event loop
    expect(timeouts()).toBe(before);
    expect(exitedWith).toBeUndefined();
  });

  // Last: what a command declares stays declared for the process.
  it('says what a command knowingly left running instead of a bug report, and exits at once', async () => {
    // Prepare: a command that dropped reads it could not end
    dropLeftovers('floe serve: stopped; 1 Kafka read(s) are dropped');
    let text = '';
    const exited = new Promise<number>((resolve) => {
      // Act: the guard as runCli arms it (its default wait would be seconds)
      exitWhenStuck(0, {
        report: (t, done) => {
          text = t;
          done();
        },
        exit: resolve,
      });
    });

    // Assess
    expect(await exited).toBe(0);
    expect(text).toBe('floe serve: stopped; 1 Kafka read(s) are dropped\n');
  });

  it('in a real process: every byte of a large output through a pipe, then the report and the code', async () => {
    // Prepare: a process that leaks a listening server after writing 2 MB to stdout (a pipe)
    const guard = join(REPO_ROOT, 'functions/cli/exit-guard.ts');
    const script = `
      import { createServer } from 'node:net';
      import { exitWhenStuck } from ${JSON.stringify(guard)};
      createServer().listen(0, '127.0.0.1');
      process.stdout.write('x'.repeat(2 * 1024 * 1024));
      exitWhenStuck(4, { afterMs: 100 });
    `;
    const child = spawn(PINNED_NODE, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdoutBytes = 0;
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });

    // Act
    const [code] = (await once(child, 'exit')) as [number | null];

    // Assess
    expect(code).toBe(4);
    expect(stdoutBytes).toBe(2 * 1024 * 1024);
    expect(stderr).toMatch(/floe: bug: .*still open: .*TCPServerWrap.*code 4/);
  }, 30_000);
});
