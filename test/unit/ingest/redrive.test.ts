import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import {
  addOffsets,
  decodeOffsetSet,
  encodeOffsetSet,
  redriveDeadLetters,
} from '../../../functions/core/ingest/redrive.js';
import { parseMappingConfig } from '../../../functions/core/mapping/mapping-config.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { currentSchema } from '../../../functions/core/spec/metadata.js';
import type { Schema } from '../../../functions/core/spec/types.js';
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
// Policy dlq: a record missing the required column is dead-lettered instead of relaxing the column.
const route: TableRoute = {
  table: ID,
  topics: ['orders'],
  schema: SCHEMA,
  kafkaLineage: false,
  properties: {},
  schemaEvolution: 'dlq',
};

const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64');
const record = (offset: number, value: unknown) => ({
  topic: 'orders',
  partition: 0,
  offset,
  timestamp: 1_700_000_000_000,
  timestampType: 'CREATE_TIME',
  value: b64(value),
  headers: [],
});

describe('dead-letter redrive', () => {
  let catalog: EmbeddedCatalog;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ catalog, cleanup } = await tempWarehouse());
    // Prepare: one good record, one missing a required column, one that is not JSON at all.
    await ingestEvent(
      { catalog, routes: [route] },
      {
        eventSource: 'aws:kafka',
        records: {
          'orders-0': [record(1, { id: 1, country: 'DE' }), record(2, { id: 2 }), record(3, '{oops')],
        },
      },
    );
  });
  afterEach(() => cleanup());

  async function ids(): Promise<number[]> {
    const table = await catalog.loadTable(ID);
    return (await readScanRows(table, await planScan(table))).map((r) => Number(r.id)).sort();
  }

  it('re-ingests fixed dead letters exactly once; the still-broken one stays', async () => {
    // Fix: country becomes optional.
    const table = await catalog.loadTable(ID);
    const evolved: Schema = { ...currentSchema(table.metadata), 'schema-id': 1 };
    evolved.fields = evolved.fields.map((f) => (f.name === 'country' ? { ...f, required: false } : f));
    await catalog.commitTable(
      ID,
      [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }],
      [
        { action: 'add-schema', schema: evolved },
        { action: 'set-current-schema', 'schema-id': -1 },
      ],
    );
    // Act
    const first = await redriveDeadLetters({ catalog, table: ID });
    const second = await redriveDeadLetters({ catalog, table: ID });
    // Assess
    expect(first).toMatchObject({ selected: 2, redriven: 1, alreadyRedriven: 0 });
    expect(first.stillFailing).toHaveLength(1);
    expect(first.stillFailing[0]).toMatchObject({ offset: 3n });
    expect(first.stillFailing[0].error).toContain('not valid JSON');
    expect(second).toMatchObject({ selected: 2, redriven: 0, alreadyRedriven: 1 });
    expect(await ids()).toEqual([1, 2]);
  });

  it('leaves a repeated offset alone: its first occurrence is in the table already', async () => {
    // Prepare: a batch holding offset 5 twice (the repeat is a `duplicate` dead letter)
    await ingestEvent(
      { catalog, routes: [route] },
      {
        eventSource: 'aws:kafka',
        records: { 'orders-0': [record(5, { id: 5, country: 'FR' }), record(5, { id: 5, country: 'FR' })] },
      },
    );
    // Act
    const report = await redriveDeadLetters({ catalog, table: ID });
    // Assess: only the two dead letters of before are selected
    expect(report).toMatchObject({ selected: 2, redriven: 0 });
    expect(await ids()).toEqual([1, 5]);
  });

  it('redrives nothing while the cause is not fixed', async () => {
    const report = await redriveDeadLetters({ catalog, table: ID });
    expect(report).toMatchObject({ selected: 2, redriven: 0 });
    // The same reason ingestion gives (policy dlq: the column would have to become optional).
    expect(report.stillFailing.map((f) => f.error).join()).toContain('country: required → optional');
    expect(await ids()).toEqual([1]);
  });

  it("applies the route's fixed mapping: a default fills the missing column", async () => {
    const fixed: TableRoute = {
      ...route,
      mapping: parseMappingConfig({ columns: { country: { default: 'unknown' } } }, 'mapping'),
    };
    const report = await redriveDeadLetters({ catalog, table: ID, route: fixed });
    expect(report).toMatchObject({ selected: 2, redriven: 1 });
    const table = await catalog.loadTable(ID);
    const rows = await readScanRows(table, await planScan(table));
    expect(rows.find((r) => r.id === 2n)).toMatchObject({ country: 'unknown' });
  });

  it('evolves the schema in the same commit when the policy allows it', async () => {
    const evolving: TableRoute = { ...route, schemaEvolution: 'evolve' };
    const report = await redriveDeadLetters({ catalog, table: ID, route: evolving });
    expect(report).toMatchObject({ selected: 2, redriven: 1 });
    const table = await catalog.loadTable(ID);
    const schema = currentSchema(table.metadata);
    expect(schema.fields.find((f) => f.name === 'country')?.required).toBe(false);
    expect(table.metadata.snapshots?.length).toBe(2);
    expect(await ids()).toEqual([1, 2]);
  });

  it('refuses a CDC table, saying why', async () => {
    await expect(
      redriveDeadLetters({ catalog, table: ID, route: { ...route, mode: 'upsert' } }),
    ).rejects.toThrow(/redrive re-ingests dead letters of append tables only|conflicts/);
  });
});

describe('redriven offset sets', () => {
  it('merge adjacent ranges and round-trip', () => {
    const set = addOffsets(decodeOffsetSet(undefined), [
      { topic: 't', partition: 0, offset: 5n },
      { topic: 't', partition: 0, offset: 3n },
      { topic: 't', partition: 0, offset: 4n },
      { topic: 't', partition: 1, offset: 9n },
    ]);
    expect(encodeOffsetSet(set)).toBe('{"t":{"0":"3-5","1":"9-9"}}');
    expect(decodeOffsetSet(encodeOffsetSet(set))).toEqual(set);
  });

  it('still read in the format of before ranges text (arrays of string pairs)', () => {
    const set = decodeOffsetSet('{"t":{"0":[["3","5"],["6","6"]],"1":[["9","9"]]}}');
    expect(encodeOffsetSet(set)).toBe('{"t":{"0":"3-6","1":"9-9"}}');
  });
});

describe('dead-letter redrive of headers', () => {
  it('keeps a null header value null through the DLQ and back (not an empty byte string)', async () => {
    const { catalog, cleanup } = await tempWarehouse();
    try {
      // Prepare: a dead letter (country missing) whose headers hold a null and an empty value.
      const lineaged: TableRoute = { ...route, kafkaLineage: true };
      const headers = [{ gone: null }, { empty: [] }];
      await ingestEvent(
        { catalog, routes: [lineaged] },
        { eventSource: 'aws:kafka', records: { 'orders-0': [{ ...record(1, { id: 1 }), headers }] } },
      );
      const fixed: TableRoute = {
        ...lineaged,
        mapping: parseMappingConfig({ columns: { country: { default: 'unknown' } } }, 'mapping'),
      };
      // Act
      const report = await redriveDeadLetters({ catalog, table: ID, route: fixed });
      // Assess
      expect(report).toMatchObject({ selected: 1, redriven: 1 });
      const table = await catalog.loadTable(ID);
      const [row] = await readScanRows(table, await planScan(table));
      const lineage = row._kafka as { headers: { key: string; value: Uint8Array | null }[] };
      expect(lineage.headers.map((h) => [h.key, h.value === null ? null : h.value.length])).toEqual([
        ['gone', null],
        ['empty', 0],
      ]);
    } finally {
      await cleanup();
    }
  });
});
