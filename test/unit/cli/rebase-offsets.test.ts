/**
 * `floe rebase-offsets`: its own --help, clear usage errors (exit 2), and a rebase of a table and its
 * dead-letter table that leaves the committed state empty for the topic's partitions.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../functions/cli/main.js';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { readCommittedState } from '../../../functions/core/table/source-offsets.js';
import { jsonEvent } from '../../support/json-event.js';
import { tempWarehouse } from '../../support/tables.js';

const ROUTE: TableRoute = {
  table: { namespace: ['app'], name: 'events' },
  topics: ['ev'],
  kafkaLineage: true,
  properties: {},
  schema: {
    type: 'struct',
    'schema-id': 0,
    fields: [{ id: 1, name: 'id', required: true, type: 'long' }],
  },
};

describe('floe rebase-offsets', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  let out: string[];
  let err: string[];
  beforeEach(async () => {
    wh = await tempWarehouse();
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
    await wh.cleanup();
  });

  it('prints its own usage', async () => {
    expect(await main(['rebase-offsets', '--help'])).toBe(0);
    expect(out.join('')).toMatch(
      /floe rebase-offsets <catalog> --table NS\.NAME --topic T \[--partitions 0,1/,
    );
  });

  it('exits 2 naming what is missing or malformed', async () => {
    // Act
    const noTopic = await main(['rebase-offsets', '--warehouse', wh.dir, '--table', 'app.events']);
    const badPartitions = await main([
      'rebase-offsets',
      '--warehouse',
      wh.dir,
      '--table',
      'app.events',
      '--topic',
      'ev',
      '--partitions',
      '1,-2',
    ]);
    // Assess
    expect(noTopic).toBe(2);
    expect(badPartitions).toBe(2);
    expect(err.join('')).toContain('rebase-offsets needs --topic T');
    expect(err.join('')).toContain("--partitions takes partition numbers separated by commas, got '-2'");
  });

  it('moves the chosen partitions of the table and of its DLQ table to a closed epoch', async () => {
    // Prepare: partitions 0 and 1 committed; a record that does not fit dead-lettered from partition 1
    const options = { catalog: wh.catalog, routes: [ROUTE] };
    await ingestEvent(options, jsonEvent('ev', [{ id: 1 }, { id: 2 }], { partition: 0 }));
    await ingestEvent(options, jsonEvent('ev', [{ id: 3 }, 'not json'], { partition: 1 }));
    // Act
    const code = await main([
      'rebase-offsets',
      '--warehouse',
      wh.dir,
      '--table',
      'app.events',
      '--topic',
      'ev',
      '--partitions',
      '1',
    ]);
    // Assess
    expect(code, err.join('')).toBe(0);
    expect(out.join('')).toContain('app.events: ev partitions 1 (now epoch 2; 0-1 moved aside)');
    expect(out.join('')).toContain('app.events__dlq: ev partitions 1 (now epoch 2; 1-1 moved aside)');
    const catalog = new EmbeddedCatalog({ warehouse: wh.dir });
    const table = await catalog.loadTable(ROUTE.table);
    const state = readCommittedState(table.metadata);
    expect(state.offsets.get('ev')).toEqual(new Map([[0, [[0n, 1n]]]]));
    expect(
      state.epochs
        .get('ev')
        ?.get(1)
        ?.map((e) => [e.epoch, e.ranges]),
    ).toEqual([[1, '0-1']]);
    expect(currentSnapshot(table.metadata)!.summary.operation).toBe('replace');
    const dlq = readCommittedState(
      (await catalog.loadTable({ namespace: ['app'], name: 'events__dlq' })).metadata,
    );
    expect(dlq.offsets.get('ev')?.has(1)).toBe(false);
  });
});
