/**
 * The catalog contract: what every Catalog (embedded, S3 Tables, REST) must do the same way. Each catalog's
 * test file calls `describeCatalogContract` with a factory; the factory runs once per suite and every test
 * uses its own table, so a shared backend (moto, the test REST server) is fine.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Catalog, LoadedTable } from '../../functions/core/catalog/catalog.js';
import type { TableRequirement, TableUpdate } from '../../functions/core/catalog/requirements-updates.js';
import { CommitFailedError, NoSuchTableError, TableAlreadyExistsError } from '../../functions/core/errors.js';
import type { Schema, Snapshot, TableIdentifier } from '../../functions/core/spec/types.js';

export interface CatalogUnderTest {
  catalog: Catalog;
  cleanup(): Promise<void>;
}

export interface CatalogContractOptions {
  /** Where the suite creates its tables. @default ['contract'] */
  namespace?: string[];
}

export const CONTRACT_SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'payload', required: false, type: 'string' },
  ],
};

/**
 * A snapshot id like Iceberg Java's: 63 random bits, so almost always beyond 2^53, where a catalog that
 * goes through JS numbers anywhere would round it.
 */
export function newSnapshotId(): bigint {
  return BigInt.asUintN(63, randomBytes(8).readBigUInt64BE()) | (1n << 60n);
}

/** `add-snapshot` + `set-snapshot-ref main` for an append on top of `base`, plus the requirements to guard it. */
export function appendChange(
  base: LoadedTable,
  extra: Record<string, unknown> = {},
  snapshotId: bigint = newSnapshotId(),
): { snapshot: Snapshot; requirements: TableRequirement[]; updates: TableUpdate[] } {
  const md = base.metadata;
  const parent = md.refs.main?.['snapshot-id'];
  const snapshot: Snapshot = {
    'snapshot-id': snapshotId,
    ...(parent === undefined ? {} : { 'parent-snapshot-id': parent }),
    'sequence-number': md['last-sequence-number'] + 1,
    'timestamp-ms': Math.max(Date.now(), md['last-updated-ms'] + 1),
    'manifest-list': `${md.location}/metadata/snap-${snapshotId}-1-${snapshotId}.avro`,
    summary: { operation: 'append', 'added-records': '1', 'floe.batch-id': `batch-${snapshotId}` },
    'schema-id': md['current-schema-id'],
    ...extra,
  };
  return {
    snapshot,
    requirements: [
      { type: 'assert-table-uuid', uuid: md['table-uuid'] },
      { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': parent ?? null },
    ],
    updates: [
      { action: 'add-snapshot', snapshot },
      { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': snapshotId },
    ],
  };
}

let tableCounter = 0;

/** Registers the contract tests for one catalog. */
export function describeCatalogContract(
  name: string,
  makeCatalog: () => Promise<CatalogUnderTest>,
  options: CatalogContractOptions = {},
): void {
  const namespace = options.namespace ?? ['contract'];

  describe(`catalog contract: ${name}`, () => {
    let subject: CatalogUnderTest | undefined;
    const catalog = (): Catalog => {
      if (!subject) throw new Error('the catalog factory did not run');
      return subject.catalog;
    };
    const newId = (): TableIdentifier => ({
      namespace,
      name: `t_${process.pid}_${++tableCounter}_${randomInt(1e9)}`,
    });

    beforeAll(async () => {
      subject = await makeCatalog();
    });
    afterAll(async () => {
      await subject?.cleanup();
    });

    it('creates, loads, lists and reports a table as existing', async () => {
      // Prepare
      const id = newId();
      const missing = newId();

      // Act
      const created = await catalog().createTable(id, {
        schema: CONTRACT_SCHEMA,
        properties: { owner: 'contract' },
      });
      const loaded = await catalog().loadTable(id);
      const listed = await catalog().listTables(namespace);

      // Assess
      expect(loaded.metadata['table-uuid']).toBe(created.metadata['table-uuid']);
      expect(loaded.metadataLocation).toBe(created.metadataLocation);
      expect(loaded.metadataLocation).toMatch(/\.metadata\.json$/);
      expect(loaded.metadata.schemas[0].fields.map((f) => f.name)).toEqual(['id', 'payload']);
      expect(loaded.metadata.properties.owner).toBe('contract');
      expect(loaded.metadata.snapshots).toEqual([]);
      expect(loaded.identifier).toEqual(id);
      expect(await catalog().tableExists(id)).toBe(true);
      expect(await catalog().tableExists(missing)).toBe(false);
      expect(listed.map((t) => t.name)).toContain(id.name);
      expect(listed.map((t) => t.name)).not.toContain(missing.name);
    });

    it('refuses to create a table twice and to load a missing one', async () => {
      // Prepare
      const id = newId();
      await catalog().createTable(id, { schema: CONTRACT_SCHEMA });

      // Act / Assess
      await expect(catalog().createTable(id, { schema: CONTRACT_SCHEMA })).rejects.toBeInstanceOf(
        TableAlreadyExistsError,
      );
      await expect(catalog().loadTable(newId())).rejects.toBeInstanceOf(NoSuchTableError);
    });

    it('appends snapshots guarded by assert-ref-snapshot-id and moves main', async () => {
      // Prepare
      const id = newId();
      const created = await catalog().createTable(id, { schema: CONTRACT_SCHEMA });

      // Act
      const first = appendChange(created);
      const afterFirst = await catalog().commitTable(id, first.requirements, first.updates);
      const second = appendChange(afterFirst);
      const afterSecond = await catalog().commitTable(id, second.requirements, second.updates);
      const loaded = await catalog().loadTable(id);

      // Assess
      expect(loaded.metadataLocation).toBe(afterSecond.metadataLocation);
      expect(loaded.metadata.refs.main['snapshot-id']).toBe(second.snapshot['snapshot-id']);
      expect(loaded.metadata['current-snapshot-id']).toBe(second.snapshot['snapshot-id']);
      expect(loaded.metadata.snapshots.map((s) => s['snapshot-id'])).toEqual([
        first.snapshot['snapshot-id'],
        second.snapshot['snapshot-id'],
      ]);
      expect(loaded.metadata.snapshots[1]['parent-snapshot-id']).toBe(first.snapshot['snapshot-id']);
      expect(loaded.metadata['last-sequence-number']).toBe(2);
      expect(loaded.metadata['snapshot-log'].map((e) => e['snapshot-id'])).toEqual([
        first.snapshot['snapshot-id'],
        second.snapshot['snapshot-id'],
      ]);
      expect(loaded.metadata.snapshots[1].summary['floe.batch-id']).toBe(
        `batch-${second.snapshot['snapshot-id']}`,
      );
    });

    it('rejects a commit whose ref requirement went stale, leaving the table as it was', async () => {
      // Prepare: two writers read the same base; the first one commits
      const id = newId();
      const base = await catalog().createTable(id, { schema: CONTRACT_SCHEMA });
      const winner = appendChange(base);
      const loser = appendChange(base);
      await catalog().commitTable(id, winner.requirements, winner.updates);
      const before = await catalog().loadTable(id);

      // Act
      const attempt = catalog().commitTable(id, loser.requirements, loser.updates);

      // Assess
      await expect(attempt).rejects.toBeInstanceOf(CommitFailedError);
      const after = await catalog().loadTable(id);
      expect(after.metadataLocation).toBe(before.metadataLocation);
      expect(after.metadata.snapshots.map((s) => s['snapshot-id'])).toEqual([winner.snapshot['snapshot-id']]);
    });

    it('commits on the base it is given, and refuses that base once it is stale', async () => {
      // Prepare: two writers hold the same base; the first commits on it
      const id = newId();
      const base = await catalog().createTable(id, { schema: CONTRACT_SCHEMA });
      const winner = appendChange(base);
      const loser = appendChange(base);
      const committed = await catalog().commitTable(id, winner.requirements, winner.updates, base);

      // Act: the second commits on the now stale base it was given
      const attempt = catalog().commitTable(id, loser.requirements, loser.updates, base);

      // Assess: refused, nothing changed; the winner's returned table is a valid base for the next commit
      await expect(attempt).rejects.toBeInstanceOf(CommitFailedError);
      const after = await catalog().loadTable(id);
      expect(after.metadataLocation).toBe(committed.metadataLocation);
      expect(after.metadata.snapshots.map((s) => s['snapshot-id'])).toEqual([winner.snapshot['snapshot-id']]);
      const next = appendChange(committed);
      await catalog().commitTable(id, next.requirements, next.updates, committed);
      expect((await catalog().loadTable(id)).metadata.snapshots).toHaveLength(2);
    });

    it('says whether a table it handed out is still current (when it can check cheaply)', async () => {
      const cat = catalog();
      if (!cat.isCurrent) return; // optional: callers load instead
      const id = newId();
      const base = await cat.createTable(id, { schema: CONTRACT_SCHEMA });
      expect(await cat.isCurrent(base)).toBe(true);
      expect(await cat.isCurrent(await cat.loadTable(id))).toBe(true);
      const change = appendChange(base);
      const committed = await cat.commitTable(id, change.requirements, change.updates, base);
      expect(await cat.isCurrent(base)).toBe(false);
      expect(await cat.isCurrent(committed)).toBe(true);
    });

    it.each([
      ['reading the table', false],
      ['given the base', true],
    ])('lets exactly one of two racing commits on the same base land (%s)', async (_, given) => {
      // Prepare
      const id = newId();
      const base = await catalog().createTable(id, { schema: CONTRACT_SCHEMA });
      const a = appendChange(base);
      const b = appendChange(base);
      const hint = given ? base : undefined;

      // Act
      const results = await Promise.allSettled([
        catalog().commitTable(id, a.requirements, a.updates, hint),
        catalog().commitTable(id, b.requirements, b.updates, hint),
      ]);

      // Assess
      const fulfilled = results.filter((r) => r.status === 'fulfilled');
      const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(fulfilled).toHaveLength(1);
      expect(rejected).toHaveLength(1);
      expect(rejected[0].reason).toBeInstanceOf(CommitFailedError);
      const loaded = await catalog().loadTable(id);
      expect(loaded.metadata.snapshots).toHaveLength(1);
    });

    it('rejects a commit for another table incarnation (assert-table-uuid)', async () => {
      // Prepare
      const id = newId();
      const base = await catalog().createTable(id, { schema: CONTRACT_SCHEMA });
      const change = appendChange(base);
      const requirements: TableRequirement[] = [
        { type: 'assert-table-uuid', uuid: '00000000-0000-4000-8000-000000000000' },
        ...change.requirements.filter((r) => r.type !== 'assert-table-uuid'),
      ];

      // Act / Assess
      await expect(catalog().commitTable(id, requirements, change.updates)).rejects.toBeInstanceOf(
        CommitFailedError,
      );
      expect((await catalog().loadTable(id)).metadata.snapshots).toEqual([]);
    });

    it('evolves the schema under assert-current-schema-id and assert-last-assigned-field-id', async () => {
      // Prepare
      const id = newId();
      await catalog().createTable(id, { schema: CONTRACT_SCHEMA });
      const evolved: Schema = {
        ...CONTRACT_SCHEMA,
        'schema-id': 1,
        fields: [...CONTRACT_SCHEMA.fields, { id: 3, name: 'added', required: false, type: 'int' }],
      };
      const requirements: TableRequirement[] = [
        { type: 'assert-current-schema-id', 'current-schema-id': 0 },
        { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': 2 },
      ];
      const updates: TableUpdate[] = [
        { action: 'add-schema', schema: evolved },
        { action: 'set-current-schema', 'schema-id': -1 },
      ];

      // Act
      await catalog().commitTable(id, requirements, updates);
      const loaded = await catalog().loadTable(id);
      const again = catalog().commitTable(id, requirements, updates);

      // Assess
      expect(loaded.metadata['current-schema-id']).toBe(1);
      expect(loaded.metadata['last-column-id']).toBe(3);
      expect(loaded.metadata.schemas.map((s) => s['schema-id'])).toEqual([0, 1]);
      await expect(again).rejects.toBeInstanceOf(CommitFailedError);
    });

    it('keeps 64-bit snapshot ids exact (2^53 + 1 and 2^63 - 1)', async () => {
      // Prepare
      const id = newId();
      const base = await catalog().createTable(id, { schema: CONTRACT_SCHEMA });
      const first = appendChange(base, {}, 9007199254740993n);
      const afterFirst = await catalog().commitTable(id, first.requirements, first.updates);
      const second = appendChange(afterFirst, {}, 9223372036854775807n);

      // Act
      await catalog().commitTable(id, second.requirements, second.updates);
      const loaded = await catalog().loadTable(id);

      // Assess
      expect(loaded.metadata.snapshots.map((s) => s['snapshot-id'])).toEqual([
        9007199254740993n,
        9223372036854775807n,
      ]);
      expect(loaded.metadata.snapshots[1]['parent-snapshot-id']).toBe(9007199254740993n);
      expect(loaded.metadata.refs.main['snapshot-id']).toBe(9223372036854775807n);
      expect(loaded.metadata['current-snapshot-id']).toBe(9223372036854775807n);
    });

    it('records every replaced metadata file in the metadata-log', async () => {
      // Prepare
      const id = newId();
      let table = await catalog().createTable(id, { schema: CONTRACT_SCHEMA });
      const replaced: string[] = [];

      // Act
      for (let i = 0; i < 3; i++) {
        replaced.push(table.metadataLocation);
        const change = appendChange(table);
        table = await catalog().commitTable(id, change.requirements, change.updates);
      }
      const loaded = await catalog().loadTable(id);

      // Assess
      expect(loaded.metadata['metadata-log'].map((e) => e['metadata-file'])).toEqual(replaced);
      expect(new Set([...replaced, loaded.metadataLocation]).size).toBe(4); // every version is a new file
    });

    it('keeps fields it does not know through commits', async () => {
      // Prepare
      const id = newId();
      const schema: Schema = {
        ...CONTRACT_SCHEMA,
        'x-contract-schema': 'kept',
        fields: [
          { ...CONTRACT_SCHEMA.fields[0], 'x-contract-field': { nested: [1, 2] } },
          CONTRACT_SCHEMA.fields[1],
        ],
      };
      const base = await catalog().createTable(id, { schema });
      const change = appendChange(base, { 'x-contract-snapshot': { engine: 'floe', n: 7 } });
      await catalog().commitTable(id, change.requirements, change.updates);
      const props: TableUpdate[] = [{ action: 'set-properties', updates: { 'x.key': 'v' } }];

      // Act: one more commit that does not touch those objects
      await catalog().commitTable(id, [], props);
      const loaded = await catalog().loadTable(id);

      // Assess
      expect(loaded.metadata.schemas[0]['x-contract-schema']).toBe('kept');
      expect(loaded.metadata.schemas[0].fields[0]['x-contract-field']).toEqual({ nested: [1, 2] });
      expect(loaded.metadata.snapshots[0]['x-contract-snapshot']).toEqual({ engine: 'floe', n: 7 });
      expect(loaded.metadata.properties['x.key']).toBe('v');
    });
  });
}
