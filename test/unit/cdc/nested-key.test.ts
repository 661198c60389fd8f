/** A key nested in a required struct: delete files carry the struct path, and reads apply them. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { keySchema } from '../../../functions/core/cdc/write-changes.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { parseSchema } from '../../../functions/core/spec/schema.js';
import type { Row } from '../../../functions/core/spec/types.js';
import { liveEntries } from '../../support/readers.js';
import { tempWarehouse } from '../../support/tables.js';

const SCHEMA = parseSchema({
  type: 'struct',
  'schema-id': 0,
  fields: [
    {
      id: 1,
      name: 'pk',
      required: true,
      type: {
        type: 'struct',
        fields: [
          { id: 2, name: 'tenant', required: true, type: 'string' },
          { id: 3, name: 'n', required: true, type: 'int' },
          { id: 4, name: 'label', required: false, type: 'string' },
        ],
      },
    },
    { id: 5, name: 'v', required: false, type: 'string' },
  ],
});

describe('nested identifier columns', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(() => wh.cleanup());

  it('cuts the schema down to the key columns and the structs holding them', () => {
    expect(keySchema(SCHEMA, new Set([2, 3]))).toEqual({
      type: 'struct',
      'schema-id': 0,
      fields: [
        {
          id: 1,
          name: 'pk',
          required: true,
          type: {
            type: 'struct',
            fields: [
              { id: 2, name: 'tenant', required: true, type: 'string' },
              { id: 3, name: 'n', required: true, type: 'int' },
            ],
          },
        },
      ],
    });
  });

  it.each(['position', 'equality'] as const)(
    'upserts and deletes by a key inside a struct (%s deletes)',
    async (deleteMode) => {
      // Prepare
      const route: TableRoute = {
        table: { namespace: ['kv'], name: `nested_${deleteMode}` },
        topics: ['nested'],
        schema: SCHEMA,
        partitionBy: 'pk.tenant',
        mode: 'upsert',
        identifierColumns: ['pk.tenant', 'pk.n'],
        kafkaLineage: false,
        properties: { 'floe.delete-mode': deleteMode },
      };
      const record = (offset: number, tenant: string, n: number, v: string | null) => ({
        topic: 'nested',
        partition: 0,
        offset,
        timestamp: 0,
        timestampType: 'CREATE_TIME',
        key: Buffer.from(JSON.stringify({ pk: { tenant, n } })).toString('base64'),
        value:
          v === null
            ? null
            : Buffer.from(JSON.stringify({ pk: { tenant, n, label: v }, v })).toString('base64'),
        headers: [],
      });
      const batch = (records: ReturnType<typeof record>[]) => ({
        eventSource: 'aws:kafka',
        records: { 'nested-0': records },
      });

      // Act
      await ingestEvent(
        { catalog: wh.catalog, routes: [route] },
        batch([record(0, 'a', 1, 'one'), record(1, 'a', 2, 'two'), record(2, 'b', 1, 'b-one')]),
      );
      await ingestEvent(
        { catalog: wh.catalog, routes: [route] },
        batch([record(3, 'a', 1, 'one v2'), record(4, 'b', 1, null)]),
      );

      // Assess
      const table = await wh.catalog.loadTable(route.table);
      const rows = await readScanRows(table, await planScan(table));
      expect(rows.map((r) => `${(r.pk as Row).tenant}/${(r.pk as Row).n}=${r.v}`).sort()).toEqual([
        'a/1=one v2',
        'a/2=two',
      ]);
      const content = deleteMode === 'equality' ? 2 : 1;
      const deletes = (await liveEntries(table)).filter((e) => e.data_file.content === content);
      // Equality deletes carry the key; position deletes the rows' places, in the rows' partitions.
      const ids = deleteMode === 'equality' ? [2, 3] : undefined;
      expect(deletes.map((e) => [e.data_file.equality_ids ?? undefined, e.data_file.partition])).toEqual(
        expect.arrayContaining([
          [ids, { 'pk.tenant': 'a' }],
          [ids, { 'pk.tenant': 'b' }],
        ]),
      );
    },
  );
});
