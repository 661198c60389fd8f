/** `floe ingest --mode/--identifier` create a CDC table; later ingests need no flags; scan shows the current rows. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../functions/cli/main.js';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';

describe('floe ingest --mode --identifier', () => {
  let dir: string;
  let out: string[];
  let err: string[];
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'floe-cli-cdc-'));
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
  afterEach(async () => {
    vi.restoreAllMocks();
    await rm(dir, { recursive: true, force: true });
  });

  it('creates the table with the mode and key, and later ingests read them from the table', async () => {
    // Act
    const created = await main([
      'ingest',
      'events/orders-cdc-1.json',
      '--warehouse',
      dir,
      '--table',
      'sales.orders_current',
      '--schema',
      'events/orders-cdc-schema.json',
      '--mode',
      'debezium',
      '--identifier',
      'order_id',
    ]);
    const later = await main([
      'ingest',
      'events/orders-cdc-2.json',
      '--warehouse',
      dir,
      '--table',
      'sales.orders_current',
    ]);
    out.length = 0;
    const scanned = await main(['scan', '--warehouse', dir, '--table', 'sales.orders_current', '--json']);

    // Assess
    expect([created, later, scanned]).toEqual([0, 0, 0]);
    const table = await new EmbeddedCatalog({ warehouse: dir }).loadTable({
      namespace: ['sales'],
      name: 'orders_current',
    });
    expect(table.metadata.properties['floe.mode']).toBe('debezium');
    expect(table.metadata.schemas[0]['identifier-field-ids']).toEqual([1]);
    const ids = out.map((line) => JSON.parse(line).order_id).sort((a: number, b: number) => a - b);
    expect(ids).toEqual([1, 2, 3, 5, 6, 7, 9, 11, 12, 13, 14]);
  });

  it('prints what a CDC batch did', async () => {
    await main([
      'ingest',
      'events/orders-cdc-1.json',
      'events/orders-cdc-2.json',
      '--warehouse',
      dir,
      '--table',
      'sales.oc',
      '--schema',
      'events/orders-cdc-schema.json',
      '--mode',
      'debezium',
      '--identifier',
      'order_id',
    ]);
    expect(out.join('')).toMatch(
      /orders-cdc-2\.json → sales\.oc: 15 records, 0 replayed, 7 rows in \d+ files \(\d+ bytes\), 9 keys deleted\/replaced in \d+ equality-delete files, ignored: 1 heartbeat, 3 tombstone, 0 dead-lettered; snapshot \d+/,
    );
  });

  it('refuses an unknown mode and an empty identifier as usage errors', async () => {
    const base = ['ingest', 'events/orders-cdc-1.json', '--warehouse', dir, '--table', 'sales.x'];
    expect(await main([...base, '--mode', 'merge'])).toBe(2);
    expect(err.join('')).toMatch(/--mode must be one of append, debezium, upsert, got 'merge'/);
    expect(await main([...base, '--mode', 'upsert', '--identifier', ' , '])).toBe(2);
    expect(await main([...base, '--mode', 'upsert', '--schema', 'events/orders-cdc-schema.json'])).toBe(1);
    expect(err.join('')).toMatch(/mode 'upsert' needs identifier columns/);
  });
});
