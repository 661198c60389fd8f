/**
 * `floe verify --deep` after `floe dlq redrive`: a redriven letter becomes a live row at its offset and
 * stays in the dead-letter table; neither is a finding.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { redriveDeadLetters } from '../../../functions/core/ingest/redrive.js';
import { dlqIdentifier } from '../../../functions/core/records/dead-letters.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { currentSchema } from '../../../functions/core/spec/metadata.js';
import type { Schema } from '../../../functions/core/spec/types.js';
import { verifyTable } from '../../../functions/core/verify/verify-table.js';
import { tempWarehouse } from '../../support/tables.js';

const ID = { namespace: ['shop'], name: 'orders' };
const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'country', required: true, type: 'string' },
  ],
};
const route: TableRoute = {
  table: ID,
  topics: ['orders'],
  schema: SCHEMA,
  kafkaLineage: true,
  properties: {},
  schemaEvolution: 'dlq',
};

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');
const record = (offset: number, value: unknown) => ({
  topic: 'orders',
  partition: 0,
  offset,
  timestamp: 1_700_000_000_000,
  timestampType: 'CREATE_TIME',
  value: b64(value),
  headers: [],
});

describe('floe verify after a redrive', () => {
  let catalog: EmbeddedCatalog;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ catalog, cleanup } = await tempWarehouse());
  });
  afterEach(() => cleanup());

  it('passes: the redriven row and its letter hold one offset', async () => {
    // Prepare: offset 2 misses a required column (dead-lettered); the column is relaxed; redrive
    await ingestEvent(
      { catalog, routes: [route] },
      {
        eventSource: 'aws:kafka',
        records: {
          'orders-0': [
            record(1, { id: 1, country: 'DE' }),
            record(2, { id: 2 }),
            record(3, { id: 3, country: 'FR' }),
          ],
        },
      },
    );
    const before = await catalog.loadTable(ID);
    const evolved: Schema = { ...currentSchema(before.metadata), 'schema-id': 1 };
    evolved.fields = evolved.fields.map((f) => (f.name === 'country' ? { ...f, required: false } : f));
    await catalog.commitTable(
      ID,
      [
        {
          type: 'assert-current-schema-id',
          'current-schema-id': currentSchema(before.metadata)['schema-id'],
        },
      ],
      [
        { action: 'add-schema', schema: evolved },
        { action: 'set-current-schema', 'schema-id': -1 },
      ],
    );
    expect(await redriveDeadLetters({ catalog, table: ID })).toMatchObject({ redriven: 1 });
    // Act
    const report = await verifyTable(await catalog.loadTable(ID), {
      deep: true,
      deadLetters: await catalog.loadTable(dlqIdentifier(ID)),
    });
    const dlqReport = await verifyTable(await catalog.loadTable(dlqIdentifier(ID)), { deep: true });
    // Assess
    expect(report.findings).toEqual([]);
    expect(report.counts['rows-read']).toBe(3n);
    expect(dlqReport.findings).toEqual([]);
  });
});
