/** `floe ingest --mode/--identifier` create a CDC table; later ingests need no flags; scan shows the current rows. */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../functions/cli/main.js';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { liveEntries } from '../../support/readers.js';

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
      /orders-cdc-2\.json → sales\.oc: 15 records, 0 replayed, 7 rows in \d+ files \(\d+ bytes\), \d+ rows deleted\/replaced in \d+ position-delete files, ignored: 1 heartbeat, 3 tombstone, 0 dead-lettered; snapshot \d+/,
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

  describe('--routes FILE (the FLOE_TABLES JSON)', () => {
    const schema = () => JSON.parse(readFileSync('events/orders-cdc-schema.json', 'utf8'));

    it('ingests through every route of the file, as the Lambda does', async () => {
      // Arrange: the CDC orders table, plus an append table of the same topic's raw change events.
      const routes = join(dir, 'routes.json');
      await writeFile(
        routes,
        JSON.stringify([
          {
            table: 'sales.orders_current',
            topics: ['shop.public.orders', '__debezium-heartbeat.shop'],
            schema: schema(),
            mode: 'debezium',
            identifierColumns: ['order_id'],
          },
          {
            table: 'sales.order_events',
            topics: ['shop.public.orders'],
            schema: {
              type: 'struct',
              'schema-id': 0,
              fields: [{ id: 1, name: 'op', required: false, type: 'string' }],
            },
            when: { field: 'op', in: ['c', 'u', 'd'] },
          },
          {
            table: 'sales.heartbeats',
            topics: ['__debezium-heartbeat.shop'],
            schema: { type: 'struct', 'schema-id': 0, fields: [] },
          },
        ]),
      );

      // Act
      const code = await main(['ingest', 'events/orders-cdc-1.json', '--warehouse', dir, '--routes', routes]);

      // Assess
      expect(code).toBe(0);
      const text = out.join('');
      expect(text).toMatch(/→ sales\.orders_current: .* keys deleted\/replaced/);
      // 11 of the topic's records are c/u/d changes; the others (snapshot reads, tombstones) are only
      // the CDC table's.
      expect(text).toMatch(/→ sales\.order_events: \d+ records, 0 replayed, 11 rows in /);
      const catalog = new EmbeddedCatalog({ warehouse: dir });
      const current = await catalog.loadTable({ namespace: ['sales'], name: 'orders_current' });
      expect(current.metadata.properties['floe.mode']).toBe('debezium');
      await expect(catalog.loadTable({ namespace: ['sales'], name: 'order_events' })).resolves.toBeDefined();
    });

    it('refuses route flags beside it, and says what in the file is wrong', async () => {
      // Arrange
      const routes = join(dir, 'routes.json');
      await writeFile(
        routes,
        JSON.stringify([
          {
            table: 'sales.oc',
            topics: ['shop.public.orders'],
            mode: 'debezium',
            mapping: { headers: [{ header: 'h' }] },
          },
        ]),
      );
      const base = ['ingest', 'events/orders-cdc-1.json', '--warehouse', dir, '--routes', routes];

      // Act / Assess
      expect(await main([...base, '--table', 'sales.oc'])).toBe(2);
      expect(err.join('')).toMatch(/--routes describes the tables itself; leave out --table/);
      expect(await main(base)).toBe(1);
      expect(err.join('')).toMatch(/routes\[0\]\.mapping\.headers: not applied to debezium\/upsert tables/);
    });
  });

  it('--delete-mode equality keeps floe.delete-mode with the table; a later batch writes equality deletes', async () => {
    // Act
    const args = (file: string) => ['ingest', file, '--warehouse', dir, '--table', 'sales.oc_eq'];
    const created = await main([
      ...args('events/orders-cdc-1.json'),
      '--schema',
      'events/orders-cdc-schema.json',
      '--mode',
      'debezium',
      '--identifier',
      'order_id',
      '--delete-mode',
      'equality',
    ]);
    const later = await main(args('events/orders-cdc-2.json'));

    // Assess
    expect([created, later]).toEqual([0, 0]);
    const catalog = new EmbeddedCatalog({ warehouse: dir });
    const table = await catalog.loadTable({ namespace: ['sales'], name: 'oc_eq' });
    expect(table.metadata.properties?.['floe.delete-mode']).toBe('equality');
    expect(out.join('')).toMatch(/keys deleted\/replaced in [1-9]\d* equality-delete files/);
  });

  it('--delete-mode refuses a mode it does not know, before anything is written', async () => {
    // Act
    const code = await main([
      'ingest',
      'events/orders-cdc-1.json',
      '--warehouse',
      dir,
      '--table',
      'sales.oc_bad',
      '--mode',
      'debezium',
      '--identifier',
      'order_id',
      '--delete-mode',
      'merge',
    ]);

    // Assess
    expect(code).not.toBe(0);
    expect(err.join('')).toMatch(/--delete-mode must be one of position, equality, got 'merge'/);
  });

  it('--format-version 3 creates a v3 table; a later batch deletes replaced rows with deletion vectors', async () => {
    // Act
    const args = (file: string) => ['ingest', file, '--warehouse', dir, '--table', 'sales.oc_v3'];
    const created = await main([
      ...args('events/orders-cdc-1.json'),
      '--schema',
      'events/orders-cdc-schema.json',
      '--mode',
      'debezium',
      '--identifier',
      'order_id',
      '--format-version',
      '3',
    ]);
    const later = await main(args('events/orders-cdc-2.json'));

    // Assess
    expect([created, later]).toEqual([0, 0]);
    const catalog = new EmbeddedCatalog({ warehouse: dir });
    const table = await catalog.loadTable({ namespace: ['sales'], name: 'oc_v3' });
    expect(table.metadata['format-version']).toBe(3);
    expect(table.metadata.properties?.['format-version']).toBeUndefined();
    const deletes = (await liveEntries(table)).filter((e) => e.data_file.content === 1);
    expect(deletes.length).toBeGreaterThan(0);
    expect(deletes.every((e) => e.data_file.file_format === 'PUFFIN')).toBe(true);
  });

  it('--format-version refuses a version floe does not write, before anything is written', async () => {
    // Act
    const code = await main([
      'ingest',
      'events/orders-cdc-1.json',
      '--warehouse',
      dir,
      '--table',
      'sales.oc_v4',
      '--schema',
      'events/orders-cdc-schema.json',
      '--format-version',
      '4',
    ]);

    // Assess
    expect(code).not.toBe(0);
    expect(err.join('')).toMatch(/--format-version must be 2 or 3, got '4'/);
  });
});
