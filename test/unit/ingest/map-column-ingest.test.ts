/**
 * A table with a map column through the real ingest path: the gathered-columns fast paths hold no
 * maps, so such a batch must take the row path (it used to fail the batch with "gathered rows hold
 * no maps", again on every redelivery).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { tempWarehouse } from '../../support/tables.js';

let catalog: EmbeddedCatalog;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ catalog, cleanup } = await tempWarehouse());
});
afterAll(() => cleanup());

it('ingests records into a table with a map column', async () => {
  const route: TableRoute = {
    table: { namespace: ['maps'], name: 'events' },
    topics: ['events'],
    schema: {
      type: 'struct',
      'schema-id': 0,
      fields: [
        { id: 1, name: 'id', required: true, type: 'long' },
        {
          id: 2,
          name: 'attributes',
          required: false,
          type: {
            type: 'map',
            'key-id': 3,
            key: 'string',
            'value-id': 4,
            value: 'int',
            'value-required': false,
          },
        },
      ],
    },
    kafkaLineage: true,
    properties: {},
  };
  const values = [{ id: 1, attributes: { a: 1, b: 2 } }, { id: 2 }, { id: 3, attributes: {} }];
  const event = {
    eventSource: 'aws:kafka',
    records: {
      'events-0': values.map((v, offset) => ({
        topic: 'events',
        partition: 0,
        offset,
        timestamp: 1_795_168_800_000,
        timestampType: 'CREATE_TIME',
        value: Buffer.from(JSON.stringify(v)).toString('base64'),
        headers: [],
      })),
    },
  };
  const report = await ingestEvent({ catalog, routes: [route] }, event);
  expect(report.tables[0].rowsWritten).toBe(3);
  const table = await catalog.loadTable(route.table);
  const rows = await readScanRows(table, await planScan(table));
  expect(rows.map((r) => [r.id, r.attributes])).toEqual([
    [
      1n,
      new Map([
        ['a', 1],
        ['b', 2],
      ]),
    ],
    [2n, null],
    [3n, new Map()],
  ]);
});
