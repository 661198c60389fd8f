/**
 * REST-specific behaviour against the in-process test server (loopback only, so unit tests): commit
 * outcomes under injected faults, strictness, idempotency keys, namespaces and prefixes.
 */
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TableUpdate } from '../../../functions/core/catalog/requirements-updates.js';
import { RestCatalog, type RestCatalogOptions } from '../../../functions/core/catalog/rest/rest-catalog.js';
import { RestCatalogError } from '../../../functions/core/catalog/rest/rest-errors.js';
import {
  CommitFailedError,
  CommitStateUnknownError,
  NoSuchTableError,
  TableAlreadyExistsError,
} from '../../../functions/core/errors.js';
import { stringifyJson } from '../../../functions/core/spec/json-codec.js';
import { appendChange, CONTRACT_SCHEMA } from '../../contract/catalog-contract.js';
import { RestCatalogServer, type RestCatalogServerOptions } from '../../support/rest-catalog-server.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ID = { namespace: ['db'], name: 'events' };

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function setup(
  serverOptions: Omit<RestCatalogServerOptions, 'warehouse'> = {},
  clientOptions: Partial<RestCatalogOptions> = {},
) {
  const warehouse = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-rest-'));
  const server = await RestCatalogServer.start({ warehouse, ...serverOptions });
  cleanups.push(async () => {
    await server.close();
    await fs.rm(warehouse, { recursive: true, force: true });
  });
  const catalog = new RestCatalog({ uri: server.uri, ...clientOptions });
  const base = await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });
  return { server, catalog, base };
}

const commitRequests = (server: RestCatalogServer) =>
  server.requests.filter((r) => r.method === 'POST' && r.url.endsWith(`/tables/${ID.name}`));

describe('RestCatalog commit outcomes', () => {
  it.each([500, 502, 504, 503] as const)(
    'maps HTTP %i before applying to CommitStateUnknownError',
    async (status) => {
      // Prepare
      const { server, catalog, base } = await setup();
      server.failNextCommit({ status });
      const change = appendChange(base);

      // Act
      const attempt = catalog.commitTable(ID, change.requirements, change.updates);

      // Assess
      await expect(attempt).rejects.toBeInstanceOf(CommitStateUnknownError);
      expect((await catalog.loadTable(ID)).metadata.snapshots).toEqual([]);
    },
  );

  it.each([500, 502, 504])(
    'maps HTTP %i after the commit landed to CommitStateUnknownError, and it did land',
    async (status) => {
      // Prepare
      const { server, catalog, base } = await setup();
      server.failNextCommit({ status: status as 500, afterApply: true });
      const change = appendChange(base);

      // Act
      const attempt = catalog.commitTable(ID, change.requirements, change.updates);

      // Assess
      await expect(attempt).rejects.toBeInstanceOf(CommitStateUnknownError);
      const loaded = await catalog.loadTable(ID);
      expect(loaded.metadata.snapshots.map((s) => s['snapshot-id'])).toEqual([
        change.snapshot['snapshot-id'],
      ]);
      expect(commitRequests(server)).toHaveLength(1); // no idempotency support: never resent
    },
  );

  it('maps a 409 to CommitFailedError', async () => {
    // Prepare
    const { server, catalog, base } = await setup();
    server.failNextCommit({ status: 409 });
    const change = appendChange(base);

    // Act / Assess
    await expect(catalog.commitTable(ID, change.requirements, change.updates)).rejects.toBeInstanceOf(
      CommitFailedError,
    );
  });

  it('maps a timeout after sending to CommitStateUnknownError', async () => {
    // Prepare: the server applies the commit only after the client gave up
    const { server, base } = await setup();
    const impatient = new RestCatalog({ uri: server.uri, timeoutMs: 150 });
    server.failNextCommit({ delayMs: 500 });
    const change = appendChange(base);

    // Act
    const attempt = impatient.commitTable(ID, change.requirements, change.updates);

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(CommitStateUnknownError);
    await expect(attempt).rejects.toThrow(/no answer within 150 ms/);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await impatient.loadTable(ID)).metadata.snapshots).toHaveLength(1); // it landed after all
  });

  it('maps a refused connection to CommitFailedError: the request never left', async () => {
    // Prepare
    const { server, catalog, base } = await setup();
    await catalog.properties(); // config is cached; now the server goes away
    await server.close();
    // let the client notice its pooled connection closed (a request on it would be "maybe sent")
    await new Promise((resolve) => setTimeout(resolve, 50));
    const change = appendChange(base);

    // Act
    const attempt = catalog.commitTable(ID, change.requirements, change.updates);

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(CommitFailedError);
    await expect(attempt).rejects.toThrow(/never reached the server/);
  });

  it('maps a commit to a missing table to NoSuchTableError', async () => {
    // Prepare
    const { catalog, base } = await setup();
    const change = appendChange(base);

    // Act / Assess
    await expect(
      catalog.commitTable({ namespace: ['db'], name: 'nope' }, change.requirements, change.updates),
    ).rejects.toBeInstanceOf(NoSuchTableError);
  });
});

describe('RestCatalog strictness', () => {
  it('gets a non-retryable 400 for an unknown update type, and nothing changes', async () => {
    // Prepare
    const { server, catalog } = await setup();
    const bogus = [{ action: 'frobnicate-table', level: 11 }] as unknown as TableUpdate[];

    // Act
    const attempt = catalog.commitTable(ID, [], bogus);

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(RestCatalogError);
    await expect(attempt).rejects.toMatchObject({
      status: 400,
      retryable: false,
      type: 'BadRequestException',
    });
    await expect(attempt).rejects.toThrow(/unknown update action 'frobnicate-table'/);
    expect(server.countRequests('POST', '/tables/events')).toBe(1);
  });

  it('gets a 400 for an unknown requirement type and for a malformed update', async () => {
    // Prepare
    const { catalog } = await setup();

    // Act
    const unknownRequirement = catalog.commitTable(ID, [{ type: 'assert-mood', mood: 'good' } as never], []);
    const malformed = catalog.commitTable(ID, [], [{ action: 'set-properties', updates: { n: 1 } } as never]);

    // Assess
    await expect(unknownRequirement).rejects.toMatchObject({ status: 400 });
    await expect(unknownRequirement).rejects.toThrow(/unknown requirement type 'assert-mood'/);
    await expect(malformed).rejects.toMatchObject({ status: 400 });
  });

  it('sends requirements and updates exactly as given, with the identifier', async () => {
    // Prepare
    const { server, catalog, base } = await setup();
    const change = appendChange(base);

    // Act
    await catalog.commitTable(ID, change.requirements, change.updates);

    // Assess
    const sent = commitRequests(server)[0].body;
    expect(sent).toBe(
      stringifyJson({ identifier: ID, requirements: change.requirements, updates: change.updates }),
    );
    expect(sent).toContain(`"snapshot-id":${change.snapshot['snapshot-id']}`); // exact, not rounded
  });

  it('answers TableAlreadyExistsError for a second create', async () => {
    // Prepare
    const { catalog } = await setup();

    // Act / Assess
    await expect(catalog.createTable(ID, { schema: CONTRACT_SCHEMA })).rejects.toBeInstanceOf(
      TableAlreadyExistsError,
    );
  });
});

describe('RestCatalog idempotency keys', () => {
  it('resends a commit with an unknown outcome with the same UUIDv7 key, and it lands once', async () => {
    // Prepare
    const { server, catalog, base } = await setup({ idempotency: true });
    server.failNextCommit({ status: 502, afterApply: true });
    const change = appendChange(base);

    // Act
    const committed = await catalog.commitTable(ID, change.requirements, change.updates);

    // Assess
    const keys = commitRequests(server).map((r) => r.headers['idempotency-key']);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(UUID_V7);
    expect(keys[1]).toBe(keys[0]);
    expect(committed.metadata.snapshots.map((s) => s['snapshot-id'])).toEqual([
      change.snapshot['snapshot-id'],
    ]);
    expect((await catalog.loadTable(ID)).metadata.snapshots).toHaveLength(1);
  });

  it('uses a new key for every commit and for creates', async () => {
    // Prepare
    const { server, catalog, base } = await setup({ idempotency: true });
    const first = appendChange(base);
    const afterFirst = await catalog.commitTable(ID, first.requirements, first.updates);
    const second = appendChange(afterFirst);

    // Act
    await catalog.commitTable(ID, second.requirements, second.updates);

    // Assess
    const keys = commitRequests(server).map((r) => r.headers['idempotency-key']);
    expect(new Set(keys).size).toBe(2);
    const createKey = server.requests.find((r) => r.method === 'POST' && r.url.endsWith('/tables'))?.headers[
      'idempotency-key'
    ];
    expect(createKey).toMatch(UUID_V7);
  });

  it('reports a 409 after an unknown try as unknown, never as failed', async () => {
    // Prepare: the first try lands but its answer is lost; both resends then collide with it
    const { server, catalog, base } = await setup({ idempotency: true });
    server.failNextCommit({ status: 504, afterApply: true });
    server.failNextCommit({ status: 409 });
    server.failNextCommit({ status: 409 });
    const change = appendChange(base);

    // Act
    const attempt = catalog.commitTable(ID, change.requirements, change.updates);

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(CommitStateUnknownError);
    expect(commitRequests(server)).toHaveLength(3);
    expect((await catalog.loadTable(ID)).metadata.snapshots).toHaveLength(1);
  });

  it('sends no key and never resends when the server does not advertise support', async () => {
    // Prepare
    const { server, catalog, base } = await setup({ idempotency: false });
    server.failNextCommit({ status: 500 });
    const change = appendChange(base);

    // Act
    await expect(catalog.commitTable(ID, change.requirements, change.updates)).rejects.toBeInstanceOf(
      CommitStateUnknownError,
    );

    // Assess
    expect(commitRequests(server)).toHaveLength(1);
    expect(commitRequests(server)[0].headers['idempotency-key']).toBeUndefined();
  });
});

describe('RestCatalog paths and config', () => {
  it('uses the config prefix and joins namespace levels with %1F', async () => {
    // Prepare
    const warehouse = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-rest-'));
    const server = await RestCatalogServer.start({ warehouse, prefix: 'wh-1' });
    cleanups.push(async () => {
      await server.close();
      await fs.rm(warehouse, { recursive: true, force: true });
    });
    const catalog = new RestCatalog({ uri: server.uri, warehouse: 's3://bucket/wh' });
    const id = { namespace: ['a', 'b c'], name: 'tbl' };

    // Act
    await catalog.createTable(id, { schema: CONTRACT_SCHEMA });
    const listed = await catalog.listTables(['a', 'b c']);
    const exists = await catalog.tableExists(id);

    // Assess
    expect(server.requests[0].url).toBe('/v1/config?warehouse=s3%3A%2F%2Fbucket%2Fwh');
    expect(
      server.requests.some(
        (r) =>
          r.url === '/v1/wh-1/namespaces/a%1Fb%20c/tables/tbl?snapshots=all' ||
          r.url === '/v1/wh-1/namespaces/a%1Fb%20c/tables/tbl',
      ),
    ).toBe(true);
    expect(listed).toEqual([id]);
    expect(exists).toBe(true);
    expect((await catalog.properties())['floe.test']).toBe('default');
    expect(await catalog.namespaceExists(['a', 'b c'])).toBe(true);
    expect(await catalog.namespaceExists(['a'])).toBe(false);
    expect((await catalog.loadNamespace(['a', 'b c'])).namespace).toEqual(['a', 'b c']);
    await expect(catalog.loadNamespace(['a'])).rejects.toMatchObject({ status: 404 });
  });

  it('falls back to GET for table existence when the server does not list HEAD', async () => {
    // Prepare
    const { server, catalog } = await setup({
      endpoints: ['GET /v1/{prefix}/namespaces/{namespace}/tables/{table}', 'POST /v1/{prefix}/namespaces'],
    });

    // Act
    const exists = await catalog.tableExists(ID);
    const missing = await catalog.tableExists({ namespace: ['db'], name: 'nope' });

    // Assess
    expect([exists, missing]).toEqual([true, false]);
    expect(server.countRequests('HEAD')).toBe(0);
  });
});
