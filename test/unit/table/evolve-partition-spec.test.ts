import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { parseExpression } from '../../../functions/core/scan/parse-expression.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import type { Schema } from '../../../functions/core/spec/types.js';
import { evolvePartitionSpec } from '../../../functions/core/table/actions/evolve-partition-spec.js';
import { liveEntries } from '../../support/readers.js';
import { tempWarehouse } from '../../support/tables.js';

const ID = { namespace: ['shop'], name: 'events' };
const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'country', required: true, type: 'string' },
    { id: 3, name: 'ts', required: true, type: 'timestamptz' },
  ],
};
const route: TableRoute = {
  table: ID,
  topics: ['events'],
  schema: SCHEMA,
  partitionBy: 'day(ts)',
  sortBy: 'id desc',
  kafkaLineage: false,
  properties: {},
};
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64');
const batch = (from: number, to: number) => ({
  eventSource: 'aws:kafka',
  records: {
    'events-0': Array.from({ length: to - from + 1 }, (_, i) => ({
      topic: 'events',
      partition: 0,
      offset: from + i,
      timestamp: 1,
      timestampType: 'CREATE_TIME',
      value: b64({
        id: from + i,
        country: (from + i) % 2 ? 'DE' : 'FR',
        ts: `2026-11-2${(from + i) % 3}T10:00:00Z`,
      }),
      headers: [],
    })),
  },
});

describe('partition evolution and sorted writes', () => {
  let catalog: EmbeddedCatalog;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ catalog, cleanup } = await tempWarehouse());
  });
  afterEach(() => cleanup());

  it('new data uses the new spec, old files keep theirs, and both read back and prune', async () => {
    await ingestEvent({ catalog, routes: [route] }, batch(0, 9));
    const evolved = await evolvePartitionSpec(catalog, ID, 'day(ts), identity(country)');
    expect(evolved.spec.fields.map((f) => [f.name, f['field-id']])).toEqual([
      ['ts_day', 1000],
      ['country', 1001],
    ]);
    await ingestEvent({ catalog, routes: [route] }, batch(10, 19));
    const table = await catalog.loadTable(ID);
    const specs = new Set((await liveEntries(table)).map((e) => e.data_file.spec_id));
    expect(specs).toEqual(new Set([0, 1]));
    const all = await readScanRows(table, await planScan(table));
    expect(all.map((r) => Number(r.id)).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 20 }, (_, i) => i),
    );
    const filter = parseExpression("country = 'DE'");
    const plan = await planScan(table, { filter });
    const de = await readScanRows(table, plan, { filter });
    expect(de).toHaveLength(10);
    // Files of the new spec are pruned by their country partition.
    expect(plan.funnel.filesAfterPartitionPruning).toBeLessThan(plan.funnel.filesInTable);
  });

  it('sorts rows within each file by the table sort order and records its id', async () => {
    await ingestEvent({ catalog, routes: [route] }, batch(0, 29));
    const table = await catalog.loadTable(ID);
    expect(table.metadata['default-sort-order-id']).toBe(1);
    for (const { data_file: f } of await liveEntries(table)) {
      expect(f.sort_order_id).toBe(1);
      const plan = await planScan(table);
      const rows = (
        await readScanRows(table, {
          ...plan,
          tasks: plan.tasks.filter((t) => t.file.file_path === f.file_path),
        })
      ).map((r) => Number(r.id));
      expect(rows).toEqual([...rows].sort((a, b) => b - a));
    }
  });

  it('re-setting an existing spec reuses it', async () => {
    await ingestEvent({ catalog, routes: [route] }, batch(0, 1));
    await evolvePartitionSpec(catalog, ID, 'identity(country)');
    const back = await evolvePartitionSpec(catalog, ID, 'day(ts)');
    expect(back.spec['spec-id']).toBe(0);
    expect(back.table.metadata['partition-specs']).toHaveLength(2);
  });
});
