/**
 * The standing hostile REST catalog suite, commits: a proxy in front of the in-process REST
 * server (loopback only, as rest-catalog.test.ts) answers commits with another table's metadata, the
 * unchanged metadata, the snapshot added but `main` not moved, or 500s before or after the commit landed.
 * Whatever it does, every batch is either committed once (its rows in the table) or fails loudly: never
 * reported committed while absent. Transport misbehaviours are in rest-hostile-transport.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CommitStateUnknownError } from '../../../functions/core/errors.js';
import { commitWithRetry } from '../../../functions/core/table/commit-loop.js';
import { appendChange, CONTRACT_SCHEMA } from '../../contract/catalog-contract.js';
import { EO_SCHEMA, expectedKeys, type OffsetRange } from '../../support/esm-batches.js';
import type { HostileRoute, Misbehaviour } from '../../support/hostile-rest-server.js';
import type { RestCatalog } from '../../../functions/core/catalog/rest/rest-catalog.js';
import {
  action,
  closeHostile,
  errorChain,
  FAST_RETRY,
  ID,
  ingestBatch,
  keysIn,
  OTHER,
  setupHostile,
} from '../../support/rest-hostile-setup.js';
import { seededRandom } from '../../support/seeded-random.js';

afterEach(() => closeHostile());

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
      const { hostile, catalog } = await setupHostile();
      expect((await ingestBatch(catalog, first)).committed).toBe(true);
      await catalog.createTable(OTHER, { schema: EO_SCHEMA });
      hostile.next('commit', misbehaviour);

      // Act
      const outcome = await ingestBatch(catalog, second);
      const again = await ingestBatch(catalog, third);

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
      const { hostile, catalog } = await setupHostile();
      expect((await ingestBatch(catalog, first)).committed).toBe(true);
      await catalog.createTable(OTHER, { schema: EO_SCHEMA });
      hostile.always('commit', misbehaviour);

      // Act
      const outcome = await ingestBatch(catalog, second);

      // Assess: not reported committed, retryable (the ESM redelivers), and the redelivery lands once
      expect(outcome.committed).toBe(false);
      expect(outcome.error).toBeInstanceOf(CommitStateUnknownError);
      expect(errorChain(outcome.error)).toMatch(/answered success, but/);
      expect(await keysIn(catalog)).toEqual(expectedKeys(first).sort());
      hostile.reset();
      expect((await ingestBatch(catalog, second)).committed).toBe(true);
      expect(await keysIn(catalog)).toEqual(expectedKeys([...first, ...second]).sort());
    },
  );
});

describe('a random run of misbehaviours, with redelivery (an ESM retries a failed batch)', () => {
  it.each([1, 2, 3])('seed %i: every batch ends up in the table exactly once', async (seed) => {
    // Prepare
    const { hostile, recorder, catalog } = await setupHostile({}, { timeoutMs: 500 });
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
        committed = (await ingestBatch(catalog, batch)).committed;
        if (committed) {
          // reported committed: its rows must be there now, not only eventually
          hostile.reset();
          const keys = await keysIn(catalog);
          for (const key of expectedKeys(batch)) if (!keys.includes(key)) lies.push(key);
        }
      }
      hostile.reset();
      if (!committed) committed = (await ingestBatch(catalog, batch)).committed;
      expect(committed).toBe(true);
    }

    // Assess: no batch was reported committed while absent; every row once; no request left the origin
    expect(lies).toEqual([]);
    expect(await keysIn(catalog)).toEqual(expectedKeys(batches.flat()).sort());
    expect(recorder.requests).toEqual([]);
  });
});

describe('commit answers are checked for what the change did', () => {
  async function tableWithTwoSnapshots() {
    const env = await setupHostile();
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
    expect(errorChain(await attempt.catch((e: unknown) => e))).toMatch(
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
    expect(errorChain(await attempt.catch((e: unknown) => e))).toMatch(/is not the schema just added/);
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
    const { hostile, catalog } = await setupHostile();
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
