/**
 * `floe` against a REST catalog (the in-process test server, OAuth2 client credentials and a static
 * bearer token), as a child process: ingest with a dead letter and a replay, scan, inspect, maintain,
 * and dlq redrive (exactly once). The rows are checked with DuckDB over the live Parquet files too.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RestCatalog } from '../../../functions/core/catalog/rest/rest-catalog.js';
import { parseJsonLossless } from '../../../functions/core/spec/json-codec.js';
import { duckdbQuery, liveEntries, sqlString } from '../../support/readers.js';
import { RestCatalogServer } from '../../support/rest-catalog-server.js';
import { runCli, runCliOk } from './run-cli.js';

const TABLE = 'shop.orders';
const TOKEN = 'static-token-for-the-cli';

const SCHEMA = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'country', required: true, type: 'string' },
  ],
};

function eventOf(values: [offset: number, value: Record<string, unknown>][]): unknown {
  return {
    eventSource: 'aws:kafka',
    records: {
      'orders-0': values.map(([offset, value]) => ({
        topic: 'orders',
        partition: 0,
        offset,
        timestamp: 1_795_265_681_903 + offset,
        timestampType: 'CREATE_TIME',
        value: Buffer.from(JSON.stringify(value)).toString('base64'),
        headers: [],
      })),
    },
  };
}

interface Inspected {
  metadataLocation: string;
  metadata: { snapshots: { 'snapshot-id': bigint }[] };
  files: { content: string; snapshot: bigint; path: string }[];
}

describe('floe CLI on a REST catalog', () => {
  let dir: string;
  let server: RestCatalogServer;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'floe-cli-rest-'));
    server = await RestCatalogServer.start({
      warehouse: join(dir, 'server-warehouse'),
      oauth: { clientId: 'floe-cli', clientSecret: 's3cret' },
      bearerTokens: [TOKEN],
    });
    await writeFile(join(dir, 'schema.json'), JSON.stringify(SCHEMA));
    // offset 2 lacks the required country: under schemaEvolution dlq it is dead-lettered
    await writeFile(
      join(dir, 'b1.json'),
      JSON.stringify(
        eventOf([
          [1, { id: 1, country: 'DE' }],
          [2, { id: 2 }],
        ]),
      ),
    );
    await writeFile(
      join(dir, 'b2.json'),
      JSON.stringify(
        eventOf([
          [3, { id: 3, country: 'FR' }],
          [4, { id: 4, country: 'DE' }],
        ]),
      ),
    );
    await writeFile(
      join(dir, 'b3.json'),
      JSON.stringify(
        eventOf([
          [5, { id: 5, country: 'IT' }],
          [6, { id: 6, country: 'DE' }],
        ]),
      ),
    );
    const routes = [
      {
        table: TABLE,
        topics: ['orders'],
        schemaEvolution: 'dlq',
        mapping: { columns: { country: { default: 'unknown' } } },
      },
    ];
    await writeFile(join(dir, 'routes.json'), JSON.stringify(routes));
  });
  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const withToken = () => ['--uri', server.uri, '--token', TOKEN, '--table', TABLE];
  const scanIds = async (): Promise<{ id: number; country: string }[]> => {
    // the catalog from a deployed function's variables, the token on the command line
    const scanned = await runCliOk(['scan', '--token', TOKEN, '--table', TABLE, '--json'], {
      FLOE_CATALOG: 'rest',
      FLOE_REST_URI: server.uri,
    });
    return scanned.stdout
      .trim()
      .split('\n')
      .map((line) => {
        const row = JSON.parse(line) as { id: number; country: string };
        return { id: row.id, country: row.country };
      })
      .sort((a, b) => a.id - b.id);
  };
  const inspect = async (): Promise<Inspected> =>
    parseJsonLossless((await runCliOk(['inspect', ...withToken(), '--json'])).stdout) as Inspected;
  /** (id, country) of every row of the live DataFiles, as DuckDB reads them. */
  const duckDbRows = async (): Promise<{ id: number; country: string }[]> => {
    const catalog = new RestCatalog({ uri: server.uri, token: TOKEN });
    const table = await catalog.loadTable({ namespace: ['shop'], name: 'orders' });
    const paths = (await liveEntries(table)).map((e) => sqlString(e.data_file.file_path));
    const rows = await duckdbQuery(`select id, country from read_parquet([${paths.join(',')}]) order by id`);
    return rows.map((r) => ({ id: Number(r.id), country: String(r.country) }));
  };

  it('ingests, scans, inspects, maintains and redrives dead letters exactly once', async () => {
    // Act: ingest with OAuth2 client credentials, then more batches and a replay with a bearer token
    const first = await runCliOk([
      'ingest',
      join(dir, 'b1.json'),
      '--uri',
      server.uri,
      '--credential',
      'floe-cli:s3cret',
      '--table',
      TABLE,
      '--schema',
      join(dir, 'schema.json'),
      '--schema-evolution',
      'dlq',
    ]);
    const more = await runCliOk([
      'ingest',
      join(dir, 'b2.json'),
      join(dir, 'b3.json'),
      join(dir, 'b1.json'),
      ...withToken(),
    ]);

    // Assess: what the CLI reported and what the server saw
    expect(first.stdout).toMatch(/b1\.json → shop\.orders: 2 records, .*1 dead-lettered; snapshot \d+/);
    expect(server.tokenRequests.length).toBeGreaterThanOrEqual(1);
    expect(server.tokenRequests[0].get('client_id')).toBe('floe-cli');
    expect(more.stdout).toMatch(/b2\.json → shop\.orders: 2 records, 0 replayed, 2 rows .*; snapshot \d+/);
    expect(more.stdout).toMatch(/b1\.json → shop\.orders: 2 records, 2 replayed, .*replay skipped/);
    const want = [
      { id: 1, country: 'DE' },
      { id: 3, country: 'FR' },
      { id: 4, country: 'DE' },
      { id: 5, country: 'IT' },
      { id: 6, country: 'DE' },
    ];
    expect(await scanIds()).toEqual(want);
    expect(await duckDbRows()).toEqual(want);
    const before = await inspect();
    const snapshotIds = before.metadata.snapshots.map((s) => s['snapshot-id']);
    expect(snapshotIds).toHaveLength(3);
    expect(before.files.filter((f) => f.content === 'data')).toHaveLength(3);
    for (const f of before.files) expect(snapshotIds).toContain(f.snapshot);

    // Act: maintenance compacts the three small files, expires the old snapshots
    const maintained = await runCliOk([
      'maintain',
      'all',
      ...withToken(),
      '--older-than',
      '0',
      '--retain-last',
      '1',
    ]);

    // Assess
    expect(maintained.stdout).toMatch(/commit: committed/);
    const after = await inspect();
    expect(after.files.filter((f) => f.content === 'data')).toHaveLength(1);
    expect(after.metadataLocation).not.toBe(before.metadataLocation);
    expect(await scanIds()).toEqual(want);
    expect(await duckDbRows()).toEqual(want);

    // Act: the route's default fixes the dead letter; a second redrive finds it already done
    const redriven = await runCliOk(['dlq', 'redrive', ...withToken(), '--routes', join(dir, 'routes.json')]);
    const again = await runCliOk(['dlq', 'redrive', ...withToken(), '--routes', join(dir, 'routes.json')]);

    // Assess
    expect(redriven.stdout).toMatch(/1 dead letter\(s\) selected: 1 redriven in snapshot \d+/);
    expect(again.stdout).toMatch(/0 redriven, 1 already redriven before, 0 still failing/);
    const fixed = [...want, { id: 2, country: 'unknown' }].sort((a, b) => a.id - b.id);
    expect(await scanIds()).toEqual(fixed);
    expect(await duckDbRows()).toEqual(fixed);

    // Act: partition evolution through the catalog
    const altered = await runCliOk(['alter', ...withToken(), '--partition-by', 'bucket(4, id)']);

    // Assess
    expect(altered.stdout).toMatch(/new data is partitioned by spec 1: bucket\(4, id\)/);
    const evolved = (await inspect()) as Inspected & { metadata: { 'default-spec-id': number } };
    expect(evolved.metadata['default-spec-id']).toBe(1);
  });

  it('fails with the server’s refusal when no credential is given', async () => {
    // Act
    const result = await runCli(['scan', '--uri', server.uri, '--table', TABLE]);

    // Assess
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^floe: .*401/m);
  });
});
