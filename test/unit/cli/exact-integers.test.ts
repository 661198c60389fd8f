/**
 * 64-bit ids and values stay exact wherever the CLI prints them: `inspect` (its table and --json) showed
 * a live file's snapshot id rounded through a double (2329700923261474300 for 2329700923261474291), and
 * `scan --json` turned longs past 2^53 into strings.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../functions/cli/main.js';
import { parseJsonLossless } from '../../../functions/core/spec/json-codec.js';

/** Not a double: Number(ID) is 2329700923261474300. */
const ID = 2329700923261474291n;
const ROUNDED = '2329700923261474300';

const SCHEMA = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'n', required: false, type: 'long' },
    {
      id: 3,
      name: 'inner',
      required: false,
      type: { type: 'struct', fields: [{ id: 4, name: 'big', required: false, type: 'long' }] },
    },
  ],
};

function eventWith(value: string): unknown {
  return {
    eventSource: 'aws:kafka',
    records: {
      'big-0': [
        {
          topic: 'big',
          partition: 0,
          offset: 5,
          timestamp: 1_795_265_681_903,
          timestampType: 'CREATE_TIME',
          value: Buffer.from(value).toString('base64'),
          headers: [],
        },
      ],
    },
  };
}

describe('exact 64-bit integers in the CLI output', () => {
  let dir: string;
  let out: string[];
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'floe-cli-exact-'));
    out = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      out.push(String(chunk));
      return true;
    });
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    // Snapshot ids are 63 random bits (newSnapshotId); pin the one snapshot's id to a value a double
    // cannot hold, so the test does not depend on luck.
    const real = crypto.getRandomValues.bind(crypto);
    vi.spyOn(crypto, 'getRandomValues').mockImplementation(<T extends ArrayBufferView | null>(array: T) => {
      if (array instanceof BigUint64Array) {
        array[0] = ID;
        return array;
      }
      return real(array as Exclude<T, null> & Uint8Array) as T;
    });
    await writeFile(join(dir, 'schema.json'), JSON.stringify(SCHEMA));
    await writeFile(
      join(dir, 'event.json'),
      JSON.stringify(eventWith(`{"id": ${ID}, "n": 1, "inner": {"big": ${ID}}}`)),
    );
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await rm(dir, { recursive: true, force: true });
  });

  const table = () => ['--warehouse', join(dir, 'wh'), '--table', 't.big'];
  async function run(args: string[]): Promise<string> {
    out.length = 0;
    expect(await main(args)).toBe(0);
    return out.join('');
  }

  it('inspect prints the live files’ snapshot ids exactly, in its table and in --json', async () => {
    // Prepare
    await run(['ingest', join(dir, 'event.json'), ...table(), '--schema', join(dir, 'schema.json')]);

    // Act
    const json = parseJsonLossless(await run(['inspect', ...table(), '--json'])) as {
      metadata: { 'current-snapshot-id': bigint };
      files: { snapshot: unknown; records: unknown; seq: unknown }[];
    };
    const text = await run(['inspect', ...table()]);

    // Assess
    expect(json.metadata['current-snapshot-id']).toBe(ID);
    expect(json.files.map((f) => f.snapshot)).toEqual([ID]);
    expect(json.files[0].records).toBe(1);
    const liveFiles = text.slice(text.indexOf('live files'));
    expect(liveFiles).toContain(String(ID));
    expect(text).not.toContain(ROUNDED);
  });

  it('scan --json writes longs past 2^53 as exact JSON numbers, small ones as before', async () => {
    // Prepare
    await run(['ingest', join(dir, 'event.json'), ...table(), '--schema', join(dir, 'schema.json')]);

    // Act
    const line = (await run(['scan', ...table(), '--json'])).trim();
    const text = await run(['scan', ...table()]);

    // Assess
    const row = parseJsonLossless(line) as Record<string, unknown>;
    expect(row.id).toBe(ID);
    expect(row.n).toBe(1);
    expect(row.inner).toEqual({ big: ID });
    expect(line).toContain(`"id":${ID},`);
    expect(text).toContain(`${ID} | 1 | {"big":${ID}}`);
    expect(text).not.toContain(ROUNDED);
  });
});
