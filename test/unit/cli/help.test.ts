/**
 * Every command's own `--help` and `floe help <command>`: its usage, its flags, an example, and the
 * catalog options for the commands that take a catalog; from a module that imports nothing, so help
 * prints before any of floe's core loads.
 */
import { readFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HELP_COMMANDS } from '../../../functions/cli/help.js';
import { KAFKA_CONNECTION_FLAGS } from '../../../functions/cli/kafka-options.js';
import { main } from '../../../functions/cli/main.js';

describe('floe <command> --help', () => {
  let out: string[];
  let err: string[];
  beforeEach(() => {
    out = [];
    err = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      out.push(String(chunk));
      return true;
    });
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      err.push(String(chunk));
      return true;
    });
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  async function helpOf(args: string[]): Promise<{ code: number; text: string }> {
    out.length = 0;
    const code = await main(args);
    return { code, text: out.join('') };
  }

  it.each([...HELP_COMMANDS])('%s: its own usage, an example, the same as floe help %s', async (command) => {
    // Act
    const own = await helpOf([command, '--help']);
    const short = await helpOf([command, '-h']);
    const viaHelp = await helpOf(['help', command]);

    // Assess
    expect(own.code).toBe(0);
    expect(own.text).toMatch(new RegExp(`^usage: floe ${command} `));
    expect(own.text).toMatch(/\nexample:\n {2}floe /);
    expect(own.text).not.toContain('commands:\n  ingest <event.json...>'); // not the global usage
    expect(short).toEqual(own);
    expect(viaHelp).toEqual(own);
    expect(own.text.includes('catalog options (every command but demo)')).toBe(command !== 'demo');
  });

  it('scan --live has the live read help, maintain a task before --help still gets maintain', async () => {
    expect((await helpOf(['scan', '--live', '--help'])).text).toMatch(
      /^usage: floe scan <catalog> --table NS\.NAME --live/,
    );
    expect((await helpOf(['maintain', 'compact', '--help'])).text).toMatch(
      /^usage: floe maintain all\|convert-equality-deletes\|compact/,
    );
  });

  it('lists every Kafka connection flag for the commands that take them', async () => {
    for (const command of ['run', 'backfill', 'redrive-failed', 'replay', 'serve']) {
      const { text } = await helpOf([command, '--help']);
      for (const flag of Object.keys(KAFKA_CONNECTION_FLAGS)) expect(text, command).toContain(`--${flag}`);
    }
  });

  it('an unknown command asked about is a usage error listing the commands', async () => {
    expect(await main(['help', 'nope'])).toBe(2);
    expect(err.join('')).toMatch(/unknown command 'nope' \(commands: ingest, scan, .*rebase-offsets\)/);
    err.length = 0;
    expect(await main(['nope', '--help'])).toBe(2);
    expect(err.join('')).toMatch(/unknown command 'nope'/);
  });

  it('a usage error points at the command its own help', async () => {
    expect(await main(['inspect', '--no-such-flag'])).toBe(2);
    expect(err.join('')).toMatch(/\(floe inspect --help lists its flags\)/);
  });

  it('the help texts import nothing (help must not load the core)', async () => {
    const source = await readFile(new URL('../../../functions/cli/help.ts', import.meta.url), 'utf8');
    expect(source).not.toMatch(/^\s*import\s/m);
  });
});
