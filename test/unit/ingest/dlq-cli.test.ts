/** `floe dlq redrive --routes FILE`: the table's route (here a mapping default) fixes the dead letters. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../functions/cli/main.js';

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');
const record = (offset: number, value: unknown) => ({
  topic: 'orders',
  partition: 0,
  offset,
  timestamp: 1_700_000_000_000,
  timestampType: 'CREATE_TIME',
  value: b64(value),
  headers: [],
});

describe('floe dlq redrive', () => {
  let dir: string;
  let out: string[];
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'floe-cli-dlq-'));
    out = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      out.push(String(chunk));
      return true;
    });
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const schema = {
      type: 'struct',
      'schema-id': 0,
      fields: [
        { id: 1, name: 'id', required: true, type: 'long' },
        { id: 2, name: 'country', required: true, type: 'string' },
      ],
    };
    await writeFile(join(dir, 'schema.json'), JSON.stringify(schema));
    const event = {
      eventSource: 'aws:kafka',
      records: { 'orders-0': [record(1, { id: 1, country: 'DE' }), record(2, { id: 2 })] },
    };
    await writeFile(join(dir, 'event.json'), JSON.stringify(event));
    const code = await main([
      'ingest',
      join(dir, 'event.json'),
      '--warehouse',
      join(dir, 'wh'),
      '--table',
      'shop.orders',
      '--schema',
      join(dir, 'schema.json'),
      '--schema-evolution',
      'dlq',
    ]);
    expect(code).toBe(0);
    out = [];
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await rm(dir, { recursive: true, force: true });
  });

  const redrive = (...extra: string[]) =>
    main(['dlq', 'redrive', '--warehouse', join(dir, 'wh'), '--table', 'shop.orders', ...extra]);

  it("applies the table's route from the routes file", async () => {
    const routes = [
      {
        table: 'shop.orders',
        topics: ['orders'],
        schemaEvolution: 'dlq',
        mapping: { columns: { country: { default: 'unknown' } } },
      },
    ];
    await writeFile(join(dir, 'routes.json'), JSON.stringify(routes));
    expect(await redrive('--routes', join(dir, 'routes.json'))).toBe(0);
    expect(out.join('')).toMatch(/1 dead letter\(s\) selected: 1 redriven in snapshot \d+/);
    out = [];
    await main(['scan', '--warehouse', join(dir, 'wh'), '--table', 'shop.orders', '--json']);
    expect(out.join('')).toContain('"unknown"');
  });

  it('leaves them while nothing is fixed, with the reason', async () => {
    expect(await redrive()).toBe(0);
    expect(out.join('')).toContain('0 redriven');
    expect(out.join('')).toContain('orders-0@2: needs a schema change (country: required → optional)');
  });

  it('names the routes a routes file has when the table has none', async () => {
    await writeFile(join(dir, 'routes.json'), JSON.stringify([{ table: 'shop.other', topics: ['x'] }]));
    const code = await redrive('--routes', join(dir, 'routes.json'));
    expect(code).not.toBe(0);
  });
});
