/**
 * The standing hostile REST catalog suite (issue 20): a proxy in front of the in-process REST server
 * (loopback only, as rest-catalog.test.ts) answers commits with another table's metadata or the unchanged
 * metadata, redirects token and catalog requests to another origin, sends huge and slow-drip bodies, and
 * fails with 500 before or after a commit landed. What must hold whatever it does:
 * - exactly once: every batch is either committed once (its rows in the table) or fails loudly;
 *   never reported committed while absent;
 * - credentials never go to another origin;
 * - a huge body is refused by the cap, not buffered; a slow one times out.
 */
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { RestCatalog, type RestCatalogOptions } from '../../../functions/core/catalog/rest/rest-catalog.js';
import { CommitStateUnknownError } from '../../../functions/core/errors.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { type CommitAction, commitWithRetry } from '../../../functions/core/table/commit-loop.js';
import { appendChange, CONTRACT_SCHEMA } from '../../contract/catalog-contract.js';
import { EO_SCHEMA, eoRoute, esmEvent, expectedKeys, type OffsetRange } from '../../support/esm-batches.js';
import { readKeysWithFloe } from '../../support/exactly-once-checks.js';
import {
  type HostileRoute,
  HostileRestServer,
  type Misbehaviour,
  startRecorder,
} from '../../support/hostile-rest-server.js';
import { RestCatalogServer, type RestCatalogServerOptions } from '../../support/rest-catalog-server.js';
import { seededRandom } from '../../support/seeded-random.js';

const ID = { namespace: ['db'], name: 'events' };
const OTHER = { namespace: ['db'], name: 'other' };
const FAST_RETRY = { numRetries: 2, minWaitMs: 1, maxWaitMs: 2 };

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
  delete process.env.FLOE_REST_MAX_RESPONSE_BYTES;
});

async function setup(
  serverOptions: Omit<RestCatalogServerOptions, 'warehouse'> = {},
  clientOptions: Partial<RestCatalogOptions> = {},
) {
  const warehouse = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-hostile-'));
  const upstream = await RestCatalogServer.start({ warehouse, ...serverOptions });
  const hostile = await HostileRestServer.start(upstream.uri);
  const recorder = await startRecorder();
  cleanups.push(async () => {
    await hostile.close();
    await recorder.close();
    await upstream.close();
    await fs.rm(warehouse, { recursive: true, force: true });
  });
  const catalog = new RestCatalog({ uri: hostile.uri, ...clientOptions });
  return { upstream, hostile, recorder, catalog };
}

/** Ingests a batch; what floe reports and what the table then holds. */
async function ingest(catalog: RestCatalog, ranges: OffsetRange[]) {
  try {
    const report = await ingestEvent({ catalog, routes: [eoRoute(ID, retryProps())] }, esmEvent(ranges));
    return { committed: report.tables[0].status === 'committed', error: undefined };
  } catch (error) {
    return { committed: false, error };
  }
}

const retryProps = () => ({
  'commit.retry.num-retries': '2',
  'commit.retry.min-wait-ms': '1',
  'commit.retry.max-wait-ms': '2',
});

/** The messages of an error and its causes, joined: the loop's "gave up" names the last failure as its cause. */
function chain(error: unknown): string {
  const out: string[] = [];
  for (let e = error; e instanceof Error; e = e.cause) out.push(e.message);
  return out.join(' <- ');
}

async function keysIn(catalog: RestCatalog): Promise<string[]> {
  return readKeysWithFloe(await catalog.loadTable(ID));
}

describe('a hostile REST catalog cannot make a batch vanish', () => {
  const first: OffsetRange[] = [{ partition: 0, first: 0, count: 4 }];
  const second: OffsetRange[] = [{ partition: 0, first: 4, count: 4 }];
  const third: OffsetRange[] = [{ partition: 0, first: 8, count: 4 }];

  it.each([
    ['another table’s metadata', { kind: 'other-table', table: OTHER.name }],
    ['the unchanged metadata (a stale 200)', { kind: 'stale' }],
    ['the snapshot added but main not moved', { kind: 'drop-ref' }],
    ['500 before acting', { kind: 'status-before', status: 500 }],
    ['500 after the commit landed', { kind: 'status-after', status: 500 }],
    ['502 after the commit landed', { kind: 'status-after', status: 502 }],
  ] as const)(
    'a commit answered with %s once: each batch committed exactly once',
    async (_, misbehaviour) => {
      // Prepare
      const { hostile, catalog } = await setup();
      expect((await ingest(catalog, first)).committed).toBe(true);
      await catalog.createTable(OTHER, { schema: EO_SCHEMA });
      hostile.next('commit', misbehaviour);

      // Act
      const outcome = await ingest(catalog, second);
      const again = await ingest(catalog, third);

      // Assess: reported committed means in the table, once
      expect(outcome.error).toBeUndefined();
      expect([outcome.committed, again.committed]).toEqual([true, true]);
      expect(await keysIn(catalog)).toEqual(expectedKeys([...first, ...second, ...third]).sort());
    },
  );

  it.each([
    ['another table’s metadata', { kind: 'other-table', table: OTHER.name }],
    ['the unchanged metadata (a stale 200)', { kind: 'stale' }],
    ['the snapshot added but main not moved', { kind: 'drop-ref' }],
  ] as const)(
    'a catalog that always answers commits with %s fails the batch loudly',
    async (_, misbehaviour) => {
      // Prepare
      const { hostile, catalog } = await setup();
      expect((await ingest(catalog, first)).committed).toBe(true);
      await catalog.createTable(OTHER, { schema: EO_SCHEMA });
      hostile.always('commit', misbehaviour);

      // Act
      const outcome = await ingest(catalog, second);

      // Assess: not reported committed, retryable (the ESM redelivers), and the redelivery lands once
      expect(outcome.committed).toBe(false);
      expect(outcome.error).toBeInstanceOf(CommitStateUnknownError);
      expect(chain(outcome.error)).toMatch(/answered success, but/);
      expect(await keysIn(catalog)).toEqual(expectedKeys(first).sort());
      hostile.reset();
      expect((await ingest(catalog, second)).committed).toBe(true);
      expect(await keysIn(catalog)).toEqual(expectedKeys([...first, ...second]).sort());
    },
  );
});

describe('a random run of misbehaviours, with redelivery (an ESM retries a failed batch)', () => {
  it.each([1, 2, 3])('seed %i: every batch ends up in the table exactly once', async (seed) => {
    // Prepare
    const { hostile, recorder, catalog } = await setup({}, { timeoutMs: 500 });
    await catalog.createTable(OTHER, { schema: EO_SCHEMA });
    const random = seededRandom(seed);
    const menu: [HostileRoute, Misbehaviour][] = [
      ['commit', { kind: 'other-table', table: OTHER.name }],
      ['commit', { kind: 'stale' }],
      ['commit', { kind: 'drop-ref' }],
      ['commit', { kind: 'status-before', status: 500 }],
      ['commit', { kind: 'status-after', status: 500 }],
      ['commit', { kind: 'status-after', status: 504 }],
      ['commit', { kind: 'huge', bytes: 80 * 1024 * 1024 }],
      ['commit', { kind: 'slow-drip', everyMs: 100 }],
      ['commit', { kind: 'redirect', to: recorder.uri }],
      ['load', { kind: 'other-table', table: OTHER.name }],
      ['load', { kind: 'huge', bytes: 80 * 1024 * 1024, declare: true }],
      ['load', { kind: 'status-before', status: 503 }],
    ];
    const batches: OffsetRange[][] = Array.from({ length: 8 }, (_, i) => [
      { partition: i % 2, first: Math.floor(i / 2) * 3, count: 3 },
    ]);

    // Act: each batch is delivered until it is reported committed (at most 6 times), with 0-2
    // misbehaviours queued before each delivery
    const lies: string[] = [];
    for (const batch of batches) {
      let committed = false;
      for (let delivery = 0; delivery < 6 && !committed; delivery++) {
        for (let n = Math.floor(random() * 3); n > 0; n--) {
          const [route, misbehaviour] = menu[Math.floor(random() * menu.length)];
          hostile.next(route, misbehaviour);
        }
        committed = (await ingest(catalog, batch)).committed;
        if (committed) {
          // reported committed: its rows must be there now, not only eventually
          hostile.reset();
          const keys = await keysIn(catalog);
          for (const key of expectedKeys(batch)) if (!keys.includes(key)) lies.push(key);
        }
      }
      hostile.reset();
      if (!committed) committed = (await ingest(catalog, batch)).committed;
      expect(committed).toBe(true);
    }

    // Assess: no batch was reported committed while absent; every row once; no request left the origin
    expect(lies).toEqual([]);
    expect(await keysIn(catalog)).toEqual(expectedKeys(batches.flat()).sort());
    expect(recorder.requests).toEqual([]);
  });
});

/** A commit through the one commit loop of a hand-made change. */
function action(prepare: (base: LoadedTable) => ReturnType<CommitAction['prepare']>): CommitAction {
  return { prepare: (base) => prepare(base) };
}

describe('commit answers are checked for what the change did', () => {
  async function tableWithTwoSnapshots() {
    const env = await setup();
    let base = await env.catalog.createTable(ID, { schema: CONTRACT_SCHEMA });
    for (let i = 0; i < 2; i++) {
      const change = appendChange(base);
      base = await env.catalog.commitTable(ID, change.requirements, change.updates);
    }
    return { ...env, base };
  }

  it('an expiry answered with the unchanged metadata is not taken as done (files would be deleted)', async () => {
    // Prepare
    const { hostile, catalog, base } = await tableWithTwoSnapshots();
    const oldest = base.metadata.snapshots[0]['snapshot-id'];
    hostile.always('commit', { kind: 'stale' });
    const expire = action(async (b) => ({
      requirements: [{ type: 'assert-table-uuid', uuid: b.metadata['table-uuid'] }],
      updates: [{ action: 'remove-snapshots', 'snapshot-ids': [oldest] }],
    }));

    // Act
    const attempt = commitWithRetry(catalog, ID, expire, { retry: FAST_RETRY });

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(CommitStateUnknownError);
    expect(chain(await attempt.catch((e: unknown) => e))).toMatch(
      /removed by this commit are still in the answer/,
    );
  });

  it('a schema change answered with the unchanged metadata is not taken as done', async () => {
    // Prepare
    const { hostile, catalog, base } = await tableWithTwoSnapshots();
    hostile.always('commit', { kind: 'stale' });
    const schema = {
      ...CONTRACT_SCHEMA,
      'schema-id': 1,
      fields: [
        ...CONTRACT_SCHEMA.fields,
        { id: 99, name: 'added', required: false, type: 'string' as const },
      ],
    };
    const evolve = action(async (b) => ({
      requirements: [
        { type: 'assert-table-uuid', uuid: b.metadata['table-uuid'] },
        { type: 'assert-current-schema-id', 'current-schema-id': b.metadata['current-schema-id'] },
      ],
      updates: [
        { action: 'add-schema', schema, 'last-column-id': 99 },
        { action: 'set-current-schema', 'schema-id': -1 },
      ],
    }));
    expect(base.metadata['current-schema-id']).toBe(0);

    // Act
    const attempt = commitWithRetry(catalog, ID, evolve, { retry: FAST_RETRY });

    // Assess
    expect(chain(await attempt.catch((e: unknown) => e))).toMatch(/is not the schema just added/);
    hostile.reset();
    const done = await commitWithRetry(catalog, ID, evolve, { retry: FAST_RETRY });
    expect(done.table.metadata.schemas.at(-1)?.fields.at(-1)?.name).toBe('added');
  });

  it('an append answered with the snapshot but main not moved is not taken as done', async () => {
    // Prepare: a server that adds the snapshot and leaves main where it was
    const { catalog, base } = await tableWithTwoSnapshots();
    const change = appendChange(base);
    const lying = Object.create(catalog) as RestCatalog;
    lying.commitTable = async (id, requirements, updates) => {
      const table = await catalog.commitTable(id, requirements, updates);
      const previous = base.metadata.refs.main;
      return { ...table, metadata: { ...table.metadata, refs: { main: previous } } };
    };

    // Act
    const attempt = commitWithRetry(
      lying,
      ID,
      action(async () => change),
      { retry: FAST_RETRY },
    );

    // Assess: the commit really landed, so reconciliation finds it and reports it committed once
    const result = await attempt;
    expect(result).toMatchObject({ status: 'committed', unknownOutcomes: 1, attempts: 1 });
    expect(result.table.metadata.refs.main['snapshot-id']).toBe(change.snapshot['snapshot-id']);
  });

  it('a load answered with another table’s metadata is refused once', async () => {
    // Prepare
    const { hostile, catalog } = await setup();
    await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });
    const other = await catalog.createTable(OTHER, { schema: CONTRACT_SCHEMA });
    await catalog.loadTable(ID);
    hostile.next('load', { kind: 'other-table', table: OTHER.name });

    // Act
    const attempt = catalog.loadTable(ID);

    // Assess
    await expect(attempt).rejects.toThrow(
      new RegExp(`table-uuid ${other.metadata['table-uuid']}, but db.events had table-uuid`),
    );
    await expect(attempt).rejects.toMatchObject({ retryable: true });
  });
});

describe('credentials never follow a redirect to another origin', () => {
  const SECRET = 'hostile-suite-client-secret-4711';

  it('the OAuth2 token request does not follow a 307, so client_secret is posted only once', async () => {
    // Prepare
    const { hostile, recorder, catalog } = await setup(
      { oauth: { clientId: 'floe', clientSecret: SECRET } },
      { credential: `floe:${SECRET}` },
    );
    hostile.next('token', { kind: 'redirect', to: recorder.uri });

    // Act
    const attempt = catalog.loadTable(ID);

    // Assess
    await expect(attempt).rejects.toThrow(/token requests never follow redirects/);
    expect(recorder.requests).toEqual([]);
  });

  it.each([['load'], ['config'], ['commit']] as const)(
    'a %s redirected to another origin is refused (no Authorization leaves)',
    async (route) => {
      // Prepare
      const { hostile, recorder, catalog } = await setup(
        { bearerTokens: ['static-token-0815'] },
        { token: 'static-token-0815' },
      );
      if (route !== 'config') await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });
      const base = route === 'commit' ? await catalog.loadTable(ID) : undefined;
      hostile.next(route, { kind: 'redirect', to: recorder.uri });

      // Act
      const attempt =
        route === 'commit' && base
          ? commitWithRetry(
              catalog,
              ID,
              action(async (b) => appendChange(b)),
              { retry: FAST_RETRY },
            )
          : route === 'config'
            ? new RestCatalog({ uri: hostile.uri, token: 'static-token-0815' }).loadTable(ID) // config first
            : catalog.loadTable(ID);

      // Assess
      await expect(attempt).rejects.toThrow(/another origin/);
      expect(recorder.requests).toEqual([]);
    },
  );

  it('a same-origin redirect is followed, authorized again for its target', async () => {
    // Prepare
    const { hostile, catalog } = await setup(
      { bearerTokens: ['static-token-0815'] },
      { token: 'static-token-0815' },
    );
    await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });
    hostile.next('load', { kind: 'redirect', to: hostile.uri });

    // Act
    const table = await catalog.loadTable(ID);

    // Assess
    expect(table.identifier).toEqual(ID);
    const loads = hostile.requests.filter((r) => r.method === 'GET' && r.url.includes('/tables/events'));
    expect(loads.map((r) => r.headers.authorization)).toEqual([
      'Bearer static-token-0815',
      'Bearer static-token-0815',
    ]);
  });
});

describe('huge and slow answers are bounded', () => {
  const HUGE = 1_200_000_000; // the 1.2 GB table-load answer that took a process to 13.7 GB RSS

  it('a 1.2 GB chunked load answer is refused at the cap, not buffered', async () => {
    // Prepare
    const { hostile, catalog } = await setup({}, { maxResponseBytes: 4 * 1024 * 1024 });
    await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });
    hostile.next('load', { kind: 'huge', bytes: HUGE });
    const rssBefore = process.memoryUsage().rss;

    // Act
    const attempt = catalog.loadTable(ID);

    // Assess
    await expect(attempt).rejects.toThrow(/larger than the limit of 4194304 bytes.*rest\.max-response-bytes/);
    expect(hostile.hugeBytesSent).toBeLessThan(64 * 1024 * 1024);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(256 * 1024 * 1024);
  });

  it('a declared Content-Length over the cap is refused before reading (default cap: 64 MiB)', async () => {
    // Prepare
    const { hostile, catalog } = await setup();
    await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });
    hostile.next('load', { kind: 'huge', bytes: HUGE, declare: true });

    // Act
    const attempt = catalog.loadTable(ID);

    // Assess
    await expect(attempt).rejects.toThrow(/Content-Length 1200000000.*limit of 67108864 bytes/);
    expect(hostile.hugeBytesSent).toBeLessThan(64 * 1024 * 1024);
  });

  it('the cap is configurable as rest.max-response-bytes and FLOE_REST_MAX_RESPONSE_BYTES', async () => {
    // Prepare
    const { hostile, catalog } = await setup({}, { properties: { 'rest.max-response-bytes': '100000' } });
    await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });
    process.env.FLOE_REST_MAX_RESPONSE_BYTES = '120000';
    const byEnv = new RestCatalog({ uri: hostile.uri });
    hostile.next('load', { kind: 'huge', bytes: 150_000 }, 2);

    // Act + Assess
    await expect(catalog.loadTable(ID)).rejects.toThrow(/limit of 100000 bytes/);
    await expect(byEnv.loadTable(ID)).rejects.toThrow(/limit of 120000 bytes.*FLOE_REST_MAX_RESPONSE_BYTES/);
    expect(
      () => new RestCatalog({ uri: hostile.uri, properties: { 'rest.max-response-bytes': 'lots' } }),
    ).toThrow(/rest.max-response-bytes must be a positive whole number/);
  });

  it('a commit answered with a huge body is an unknown outcome, reconciled: committed once', async () => {
    // Prepare
    const { hostile, catalog } = await setup({}, { maxResponseBytes: 1024 * 1024 });
    await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });
    hostile.next('commit', { kind: 'huge', bytes: HUGE });
    let change: ReturnType<typeof appendChange> | undefined;

    // Act
    const result = await commitWithRetry(
      catalog,
      ID,
      action(async (b) => {
        change = appendChange(b);
        return change;
      }),
      { retry: FAST_RETRY },
    );

    // Assess: the huge answer did not land (it was not forwarded); the retry did, once
    expect(result).toMatchObject({ status: 'committed', unknownOutcomes: 1, attempts: 2 });
    expect(result.table.metadata.snapshots).toHaveLength(1);
    expect(hostile.hugeBytesSent).toBeLessThan(64 * 1024 * 1024);
  });

  it('a commit whose answer drips in too slowly is an unknown outcome, reconciled: committed once', async () => {
    // Prepare
    const { hostile, catalog } = await setup({}, { timeoutMs: 400 });
    await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });
    hostile.next('commit', { kind: 'slow-drip', everyMs: 50 });

    // Act
    const result = await commitWithRetry(
      catalog,
      ID,
      action(async (b) => appendChange(b)),
      {
        retry: FAST_RETRY,
      },
    );

    // Assess
    expect(result).toMatchObject({ status: 'committed', unknownOutcomes: 1, attempts: 2 });
    expect(result.table.metadata.snapshots).toHaveLength(1);
  });

  it('a table dropped and recreated through this client is not refused as another table', async () => {
    // Prepare
    const { catalog } = await setup();
    await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });
    await catalog.loadTable(ID);
    await catalog.dropTable(ID);
    const recreated = await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });

    // Act + Assess
    expect((await catalog.loadTable(ID)).metadata['table-uuid']).toBe(recreated.metadata['table-uuid']);
  });

  it('a slow-drip load answer times out', async () => {
    // Prepare
    const { hostile, catalog } = await setup({}, { timeoutMs: 400 });
    await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });
    hostile.always('load', { kind: 'slow-drip', everyMs: 50 });
    const started = Date.now();

    // Act
    const attempt = catalog.loadTable(ID);

    // Assess: three tries (loads are retried), each cut at 400 ms
    await expect(attempt).rejects.toThrow(/no answer within 400 ms/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('a slow-drip token answer times out', async () => {
    // Prepare
    const { hostile, catalog } = await setup(
      { oauth: { clientId: 'floe', clientSecret: 'drip-secret-1234' } },
      { credential: 'floe:drip-secret-1234', timeoutMs: 300 },
    );
    hostile.always('token', { kind: 'slow-drip', everyMs: 50 });

    // Act + Assess
    await expect(catalog.loadTable(ID)).rejects.toThrow(/no answer within 300 ms/);
  });
});
