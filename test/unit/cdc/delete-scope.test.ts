import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { planDeleteScope } from '../../../functions/core/cdc/delete-scope.js';
import { parsePartitionExpression } from '../../../functions/core/spec/partition-spec.js';
import type { Schema, TableIdentifier } from '../../../functions/core/spec/types.js';
import { commitWithRetry } from '../../../functions/core/table/commit-loop.js';
import { prepareSnapshot } from '../../../functions/core/table/snapshot-producer.js';
import { fakeDataFile, tempWarehouse } from '../../support/tables.js';

const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  'identifier-field-ids': [1],
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'region', required: true, type: 'string' },
  ],
};
const ID: TableIdentifier = { namespace: ['db'], name: 'scoped' };

describe('planDeleteScope', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(() => wh.cleanup());

  const create = (partitionBy?: string) =>
    wh.catalog.createTable(ID, {
      schema: SCHEMA,
      partitionSpec: partitionBy ? parsePartitionExpression(partitionBy, SCHEMA) : undefined,
    });

  it('writes deletes with the default spec when the table is unpartitioned', async () => {
    const scope = await planDeleteScope(await create(), [1]);
    expect(scope).toMatchObject({ kind: 'unpartitioned', spec: { 'spec-id': 0 }, preUpdates: [] });
  });

  it('writes deletes per partition when the key decides the partition', async () => {
    const scope = await planDeleteScope(await create('bucket(8, id)'), [1]);
    expect(scope).toMatchObject({ kind: 'partitioned', spec: { 'spec-id': 0 }, preUpdates: [] });
  });

  it('adds an unpartitioned spec (not the default) when the key does not decide the partition', async () => {
    // Prepare
    const table = await create('region');

    // Act
    const scope = await planDeleteScope(table, [1]);

    // Assess
    expect(scope.kind).toBe('unpartitioned');
    expect(scope.spec).toEqual({ 'spec-id': 1, fields: [] });
    expect(scope.preUpdates).toEqual([{ action: 'add-spec', spec: { 'spec-id': 1, fields: [] } }]);
    expect(scope.preRequirements).toEqual([
      { type: 'assert-last-assigned-partition-id', 'last-assigned-partition-id': 1000 },
      { type: 'assert-default-spec-id', 'default-spec-id': 0 },
    ]);
    const after = await wh.catalog.commitTable(ID, scope.preRequirements, scope.preUpdates);
    expect(after.metadata['default-spec-id']).toBe(0);
    expect(await planDeleteScope(after, [1])).toMatchObject({ spec: { 'spec-id': 1 }, preUpdates: [] });
  });

  it('goes unpartitioned when live data files are of another spec (the key no longer finds them)', async () => {
    // Prepare: data written unpartitioned, then the table evolves to bucket(8, id)
    const table = await create();
    await commitWithRetry(wh.catalog, ID, {
      prepare: (base) =>
        prepareSnapshot(base, {
          operation: 'append',
          addedDataFiles: [fakeDataFile(table, 'old')],
          addedDeleteFiles: [],
        }),
    });
    const bucketed = { ...parsePartitionExpression('bucket(8, id)', SCHEMA), 'spec-id': 1 };
    const evolved = await wh.catalog.commitTable(
      ID,
      [],
      [
        { action: 'add-spec', spec: bucketed },
        { action: 'set-default-spec', 'spec-id': 1 },
      ],
    );

    // Act
    const scope = await planDeleteScope(evolved, [1]);

    // Assess
    expect(scope).toMatchObject({ kind: 'unpartitioned', spec: { 'spec-id': 0 }, preUpdates: [] });
  });
});
