import { describe, expect, it } from 'vitest';
import type { RawRecord } from '../../../functions/core/records/esm-event.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { mapHotset } from '../../../functions/core/live/map-hotset.js';
import { newTableMetadata } from '../../../functions/core/spec/metadata.js';

const SCHEMA = {
  type: 'struct' as const,
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' as const },
    { id: 2, name: 'name', required: false, type: 'string' as const },
  ],
};

const metadata = () => newTableMetadata({ location: '/wh/app/t', schema: SCHEMA });

const record = (offset: number, value: string | null, key: string | null = null): RawRecord => ({
  topic: 't',
  partition: 0,
  offset: BigInt(offset),
  timestamp: 1_700_000_000_000 + offset,
  timestampType: 'CREATE_TIME',
  key: key === null ? null : Buffer.from(key),
  value: value === null ? null : Buffer.from(value),
  headers: [],
});

const route = (extra: Partial<TableRoute> = {}): TableRoute => ({
  table: { namespace: ['app'], name: 't' },
  topics: ['t'],
  kafkaLineage: false,
  properties: {},
  ...extra,
});

describe('mapHotset: the tail through the table’s own route, into memory only', () => {
  it('maps append records to rows and leaves out what ingestion would dead-letter, by reason', async () => {
    const md = metadata();
    const mapped = await mapHotset(md, route(), 'append', 'evolve', [
      record(0, '{"id":1,"name":"a"}'),
      record(1, '{not json'),
      record(2, '{"id":2}'),
    ]);
    expect(mapped.mode).toBe('append');
    if (mapped.mode !== 'append') return;
    expect(mapped.rows.map((r) => r.id)).toEqual([1n, 2n]);
    expect(mapped.leftOut.total).toBe(1);
    expect(mapped.leftOut.byStage).toEqual({ decode: 1 });
    expect(mapped.leftOut.examples[0].record).toBe('t-0@1');
  });

  it('evolves the view’s schema for a new field, without changing the table', async () => {
    const md = metadata();
    const before = JSON.stringify(md, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
    const mapped = await mapHotset(md, route(), 'append', 'evolve', [record(0, '{"id":1,"extra":"x"}')]);
    expect(mapped.schema.fields.map((f) => f.name)).toContain('extra');
    expect(mapped.schemaChanges).not.toBe('');
    expect(mapped.schemaUpdates.length).toBeGreaterThan(0);
    expect(JSON.stringify(md, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).toBe(before);
  });

  it('leaves out records needing a change under policy block instead of failing the view', async () => {
    const mapped = await mapHotset(metadata(), route(), 'append', 'block', [
      record(0, '{"id":1}'),
      record(1, '{"id":2,"extra":"x"}'),
    ]);
    if (mapped.mode !== 'append') throw new Error('append expected');
    expect(mapped.rows.map((r) => r.id)).toEqual([1n]);
    expect(mapped.leftOut.byStage).toEqual({ schema: 1 });
  });

  it('collapses upsert changes per key in offset order (a tombstone deletes)', async () => {
    const mapped = await mapHotset(metadata(), route({ identifierColumns: ['id'] }), 'upsert', 'evolve', [
      record(0, '{"id":1,"name":"a"}', '1'),
      record(1, '{"id":2,"name":"b"}', '2'),
      record(2, '{"id":1,"name":"a2"}', '1'),
      record(3, null, '2'),
    ]);
    if (mapped.mode === 'append') throw new Error('upsert expected');
    expect(mapped.finals.map((f) => [f.key.values[0], f.row?.name ?? null])).toEqual([
      [1n, 'a2'],
      [2n, null],
    ]);
    expect(mapped.leftOut.total).toBe(0);
  });
});
