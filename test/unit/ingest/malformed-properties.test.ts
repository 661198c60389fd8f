/**
 * A batch for a table whose properties floe cannot honour fails whole, with a non-retryable error naming
 * the property: nothing is committed and nothing is dead-lettered (the records are not at fault), so the
 * redelivered batch lands once the property is fixed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type LakeError, ValidationError } from '../../../functions/core/errors.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { parseRoutes } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import type { TableIdentifier } from '../../../functions/core/spec/types.js';
import { tempWarehouse } from '../../support/tables.js';

const ID: TableIdentifier = { namespace: ['a'], name: 't' };
const SCHEMA = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'n', required: false, type: 'long' },
  ],
};

function event(offsets: number[]) {
  const record = (offset: number) => ({
    topic: 't',
    partition: 0,
    offset,
    timestamp: 1_795_000_000_000,
    timestampType: 'CREATE_TIME',
    value: Buffer.from(JSON.stringify({ id: offset, n: offset * 10 })).toString('base64'),
    headers: [],
  });
  return { eventSource: 'aws:kafka', records: { 't-0': offsets.map(record) } };
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('ingest into a table with a malformed property', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(() => wh.cleanup());

  it.each([
    {
      mode: 'append',
      property: 'write.avro.compression-codec',
      value: 'snappy',
      says: 'table property write.avro.compression-codec: must be one of gzip, uncompressed',
    },
    {
      mode: 'append',
      property: 'commit.retry.num-retries',
      value: 'abc',
      says: 'table property commit.retry.num-retries: must be an integer ≥ 0, got "abc"',
    },
    {
      mode: 'upsert',
      property: 'write.parquet.compression-codec',
      value: 'brotli',
      says: 'table property write.parquet.compression-codec: must be one of zstd, snappy, gzip, uncompressed',
    },
    {
      mode: 'upsert',
      property: 'commit.manifest-merge.enabled',
      value: 'yes',
      says: 'table property commit.manifest-merge.enabled: must be true or false, got "yes"',
    },
  ])(
    '$mode, $property=$value: the batch fails, not retryable, nothing committed or dead-lettered; fixed, it lands',
    async ({ mode, property, value, says }) => {
      // Prepare: floe creates the table from the route, with the property
      const routes = parseRoutes([
        {
          table: 'a.t',
          topics: ['t'],
          schema: SCHEMA,
          mode,
          ...(mode === 'upsert' ? { identifierColumns: ['id'] } : {}),
          properties: { [property]: value },
        },
      ]);

      // Act
      const error = await failure(ingestEvent({ catalog: wh.catalog, routes }, event([0, 1, 2])));

      // Assess
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as LakeError).retryable).toBe(false);
      expect((error as Error).message).toContain(says);
      const table = await wh.catalog.loadTable(ID);
      expect(currentSnapshot(table.metadata)).toBeUndefined();
      await expect(wh.catalog.loadTable({ namespace: ['a'], name: 't__dlq' })).rejects.toThrow();

      // Act: the user fixes the property (as their engine would), the batch is redelivered
      await wh.catalog.commitTable(ID, [], [{ action: 'remove-properties', removals: [property] }]);
      const report = await ingestEvent({ catalog: wh.catalog, routes }, event([0, 1, 2]));

      // Assess: every record landed
      expect(report.tables[0].rowsWritten).toBe(3);
      const fixed = await wh.catalog.loadTable(ID);
      const rows = await readScanRows(fixed, await planScan(fixed));
      expect(rows.map((r) => r.id).sort()).toEqual([0n, 1n, 2n]);
    },
  );

  it('floe.mode=merge stored with the table: the batch fails naming it', async () => {
    // Prepare: the table exists with a mode floe does not have (set by hand or another tool)
    await wh.catalog.createTable(ID, { schema: SCHEMA as never, properties: { 'floe.mode': 'merge' } });
    const routes = parseRoutes([{ table: 'a.t', topics: ['t'] }]);

    // Act
    const error = await failure(ingestEvent({ catalog: wh.catalog, routes }, event([0])));

    // Assess
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toContain(
      'table property floe.mode: must be one of append, debezium, upsert, got "merge"',
    );
    expect(currentSnapshot((await wh.catalog.loadTable(ID)).metadata)).toBeUndefined();
  });
});
