/**
 * The standing hostile REST catalog suite, transport: the proxy redirects token and catalog
 * requests to another origin, and sends huge and slow-drip bodies. Credentials never go to another origin;
 * a huge body is refused by the cap, not buffered; a slow one times out; a commit whose answer could not
 * be read is reconciled. Commit-answer misbehaviours are in rest-hostile-commits.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RestCatalog } from '../../../functions/core/catalog/rest/rest-catalog.js';
import { commitWithRetry } from '../../../functions/core/table/commit-loop.js';
import { appendChange, CONTRACT_SCHEMA } from '../../contract/catalog-contract.js';
import { action, closeHostile, FAST_RETRY, ID, setupHostile } from '../../support/rest-hostile-setup.js';

afterEach(async () => {
  await closeHostile();
  delete process.env.FLOE_REST_MAX_RESPONSE_BYTES;
});

describe('credentials never follow a redirect to another origin', () => {
  const SECRET = 'hostile-suite-client-secret-4711';

  it('the OAuth2 token request does not follow a 307, so client_secret is posted only once', async () => {
    // Prepare
    const { hostile, recorder, catalog } = await setupHostile(
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
      const { hostile, recorder, catalog } = await setupHostile(
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
    const { hostile, catalog } = await setupHostile(
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
    const { hostile, catalog } = await setupHostile({}, { maxResponseBytes: 4 * 1024 * 1024 });
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
    const { hostile, catalog } = await setupHostile();
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
    const { hostile, catalog } = await setupHostile(
      {},
      { properties: { 'rest.max-response-bytes': '100000' } },
    );
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
    const { hostile, catalog } = await setupHostile({}, { maxResponseBytes: 1024 * 1024 });
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
    const { hostile, catalog } = await setupHostile({}, { timeoutMs: 400 });
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
    const { catalog } = await setupHostile();
    await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });
    await catalog.loadTable(ID);
    await catalog.dropTable(ID);
    const recreated = await catalog.createTable(ID, { schema: CONTRACT_SCHEMA });

    // Act + Assess
    expect((await catalog.loadTable(ID)).metadata['table-uuid']).toBe(recreated.metadata['table-uuid']);
  });

  it('a slow-drip load answer times out', async () => {
    // Prepare
    const { hostile, catalog } = await setupHostile({}, { timeoutMs: 400 });
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
    const { hostile, catalog } = await setupHostile(
      { oauth: { clientId: 'floe', clientSecret: 'drip-secret-1234' } },
      { credential: 'floe:drip-secret-1234', timeoutMs: 300 },
    );
    hostile.always('token', { kind: 'slow-drip', everyMs: 50 });

    // Act + Assess
    await expect(catalog.loadTable(ID)).rejects.toThrow(/no answer within 300 ms/);
  });
});
