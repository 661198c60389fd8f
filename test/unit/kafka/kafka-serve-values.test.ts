/**
 * kafka-serve's values: a route's `kafkaValue` keeps each record's original bytes in `_kafka.value`
 * (JSON as written, a Confluent Avro frame, a CDC table's change event), served byte for byte; a table
 * without them serves its rows re-encoded; a table turning it on later gains the field under a new id.
 * Dead letters are served from the DLQ table at their own offsets, and a letter redriven into the table
 * is served once, from the table.
 */
import { readFileSync } from 'node:fs';
import avro from 'avsc';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../functions/cli/main.js';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { parseFormatConfig } from '../../../functions/core/formats/format-config.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { creationRequest } from '../../../functions/core/ingest/load-or-create-table.js';
import { redriveDeadLetters } from '../../../functions/core/ingest/redrive.js';
import { DeadLetterRecords } from '../../../functions/core/kafka/serve/dead-letter-records.js';
import { TableRecords } from '../../../functions/core/kafka/serve/table-records.js';
import { parseMappingConfig } from '../../../functions/core/mapping/mapping-config.js';
import { parseRoutes, type TableRoute } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { currentSchema, currentSnapshot } from '../../../functions/core/spec/metadata.js';
import type { Row, Schema, StructType } from '../../../functions/core/spec/types.js';
import { duckdbQuery, liveEntries, sqlString } from '../../support/readers.js';
import { startSchemaRegistryServer } from '../../support/schema-registry-server.js';
import { tempWarehouse } from '../../support/tables.js';
import { confluentFrame } from '../formats/helpers.js';

const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'name', required: true, type: 'string' },
  ],
};

function route(name: string, extra: Partial<TableRoute> = {}): TableRoute {
  return {
    table: { namespace: ['app'], name },
    topics: [name],
    schema: SCHEMA,
    kafkaLineage: true,
    properties: {},
    ...extra,
  };
}

/** An ESM event of these value bytes on partition 0 of `topic`, from `firstOffset` (keys `k<offset>`). */
function bytesEvent(
  topic: string,
  values: (Uint8Array | string)[],
  firstOffset = 0,
  keys = values.map((_, i) => `k${firstOffset + i}`),
): unknown {
  return {
    eventSource: 'aws:kafka',
    records: {
      [`${topic}-0`]: values.map((v, i) => ({
        topic,
        partition: 0,
        offset: firstOffset + i,
        timestamp: 1_795_000_000_000 + firstOffset + i,
        timestampType: 'CREATE_TIME',
        key: Buffer.from(keys[i]).toString('base64'),
        value: Buffer.from(v).toString('base64'),
        headers: [{ h: [0xff, 0x00] }],
      })),
    },
  };
}

/** The table's current `_kafka` struct. */
function lineageStruct(schema: StructType): StructType {
  return schema.fields.find((f) => f.name === '_kafka')?.type as StructType;
}

/** Reads as kafka-serve does: values re-encoded as `{"id":…}` when the row kept no bytes. */
function servedRecords(catalog: EmbeddedCatalog, withLetters: boolean): TableRecords {
  return new TableRecords(
    () => (row: Row) => Buffer.from(JSON.stringify({ id: String(row.id), name: row.name })),
    withLetters ? new DeadLetterRecords((id) => catalog.loadTable(id)) : undefined,
  );
}

describe('kafka-serve values', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  beforeEach(async () => {
    wh = await tempWarehouse();
  });
  afterEach(async () => {
    await wh.cleanup();
  });

  it('serves the bytes a kafkaValue route kept, byte for byte: JSON as written (fast and row mapping), an upsert table, a Confluent Avro frame', async () => {
    // Prepare: JSON texts a re-encoding would change (spacing, key order, escapes, digits)
    const texts = ['{ "name" : "a\\u00e9",  "id": 1 }', '{"id":9007199254740993,"name":"b"}\n'];
    const KEYS = ['{"id":1}', '{"id":9007199254740993}'];
    const registry = await startSchemaRegistryServer();
    try {
      const avroSchema = {
        type: 'record',
        name: 'Row',
        fields: [
          { name: 'id', type: 'long' },
          { name: 'name', type: 'string' },
        ],
      };
      const schemaId = registry.register({ schema: JSON.stringify(avroSchema) });
      const type = avro.Type.forSchema(avroSchema as avro.Schema);
      const frames = [1, 2].map((id) =>
        confluentFrame(schemaId, type.toBuffer({ id, name: `n\u0000${id}` })),
      );
      const routes = [
        route('fast', { kafkaValue: true }),
        route('rows', {
          kafkaValue: true,
          mapping: parseMappingConfig({ columns: { name: { type: 'string' } } }),
        }),
        route('keyed', { kafkaValue: true, mode: 'upsert', identifierColumns: ['id'] }),
        route('avro', {
          kafkaValue: true,
          format: parseFormatConfig({ value: 'confluent', registry: { url: registry.url } }),
        }),
        route('plain'),
      ];
      const options = { catalog: wh.catalog, routes };
      for (const name of ['fast', 'rows', 'keyed', 'plain'])
        await ingestEvent(options, bytesEvent(name, texts, 0, name === 'keyed' ? KEYS : undefined));
      await ingestEvent(options, bytesEvent('avro', frames));
      const records = servedRecords(wh.catalog, false);
      const served = async (name: string) => {
        const table = await wh.catalog.loadTable({ namespace: ['app'], name });
        return (await records.read(table, name, 0, 0n, 9n)).map((r) => r.value);
      };
      // Act
      const [fast, rows, keyed, avroValues, plain] = await Promise.all(
        ['fast', 'rows', 'keyed', 'avro', 'plain'].map(served),
      );
      // Assess
      const raw = texts.map((t) => Buffer.from(t));
      expect(fast).toEqual(raw);
      expect(rows).toEqual(raw);
      expect(keyed).toEqual(raw);
      expect(avroValues).toEqual(frames.map((f) => Buffer.from(f)));
      expect(plain.map(String)).toEqual(['{"id":"1","name":"aé"}', '{"id":"9007199254740993","name":"b"}']);
    } finally {
      await registry.close();
    }
  });

  it('turning kafkaValue on adds _kafka.value under a new id; rows from before are served re-encoded', async () => {
    // Prepare
    const options = { catalog: wh.catalog, routes: [route('later')] };
    await ingestEvent(options, bytesEvent('later', ['{ "id": 1, "name": "a" }']));
    const before = await wh.catalog.loadTable({ namespace: ['app'], name: 'later' });
    // Act
    await ingestEvent(
      { ...options, routes: [route('later', { kafkaValue: true })] },
      bytesEvent('later', ['{ "id": 2, "name": "b" }'], 1),
    );
    // Assess
    const after = await wh.catalog.loadTable({ namespace: ['app'], name: 'later' });
    const value = lineageStruct(currentSchema(after.metadata)).fields.at(-1);
    expect(value).toEqual({
      id: before.metadata['last-column-id'] + 1,
      name: 'value',
      required: false,
      type: 'binary',
    });
    expect(currentSchema(after.metadata)['schema-id']).toBeGreaterThan(
      currentSchema(before.metadata)['schema-id'],
    );
    const served = await servedRecords(wh.catalog, false).read(after, 'later', 0, 0n, 9n);
    expect(served.map((r) => String(r.value))).toEqual(['{"id":"1","name":"a"}', '{ "id": 2, "name": "b" }']);
    // A reader no one here wrote sees the bytes under the new field id.
    const newest = (await liveEntries(after)).find(
      (e) => e.snapshot_id === currentSnapshot(after.metadata)?.['snapshot-id'],
    );
    const file = newest?.data_file.file_path ?? '';
    const path = sqlString(file.startsWith('file:') ? new URL(file).pathname : file);
    const [duck] = await duckdbQuery(`select hex(_kafka.value) as v from read_parquet(${path})`);
    const ids = await duckdbQuery(`select field_id from parquet_schema(${path}) where name = 'value'`);
    expect(duck.v).toBe(Buffer.from('{ "id": 2, "name": "b" }').toString('hex').toUpperCase());
    expect(ids.map((r) => Number(r.field_id))).toContain(value?.id);
  });

  it('a table created with floe.kafka-value (the --kafka-value flag) keeps values; kafkaValue without lineage is refused', () => {
    // Act
    const created = creationRequest(route('flag', { properties: { 'floe.kafka-value': 'true' } }));
    const plain = creationRequest(route('flag'));
    // Assess
    expect(lineageStruct(created.schema).fields.map((f) => f.name)).toContain('value');
    expect(created.properties['floe.kafka-value']).toBe('true');
    expect(lineageStruct(plain.schema).fields.map((f) => f.name)).not.toContain('value');
    expect(() =>
      parseRoutes([{ table: 'app.x', topics: ['x'], kafkaValue: true, kafkaLineage: false }]),
    ).toThrow(/routes\[0\]\.kafkaValue/);
  });

  it('floe ingest --kafka-value creates a table that keeps the bytes; later ingests without the flag keep them too', async () => {
    // Prepare
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const flags = ['--warehouse', wh.dir, '--table', 'sales.orders'];
    // partition/offset → the value bytes sent
    const sent = new Map(
      ['events/orders-batch-1.json', 'events/orders-batch-2.json'].flatMap((file) =>
        Object.values(
          (
            JSON.parse(readFileSync(file, 'utf8')) as {
              records: Record<string, { partition: number; offset: number; value: string }[]>;
            }
          ).records,
        ).flatMap((records) =>
          records.map((r) => [`${r.partition}/${r.offset}`, Buffer.from(r.value, 'base64').toString()]),
        ),
      ),
    );
    try {
      // Act
      const codes = [
        await main([
          'ingest',
          'events/orders-batch-1.json',
          ...flags,
          '--schema',
          'events/orders.schema.json',
          '--kafka-value',
        ]),
        await main(['ingest', 'events/orders-batch-2.json', ...flags]),
      ];
      // Assess
      expect(codes).toEqual([0, 0]);
    } finally {
      vi.restoreAllMocks();
    }
    const table = await new EmbeddedCatalog({ warehouse: wh.dir }).loadTable({
      namespace: ['sales'],
      name: 'orders',
    });
    expect(table.metadata.properties?.['floe.kafka-value']).toBe('true');
    const rows = await readScanRows(table, await planScan(table));
    expect(rows.length).toBeGreaterThan(200);
    for (const row of rows) {
      const lineage = row._kafka as Row;
      const kept = Buffer.from(lineage.value as Uint8Array).toString();
      expect(kept).toBe(sent.get(`${lineage.partition}/${lineage.offset}`));
    }
  });

  it('serves dead letters at their offsets in offset order, and a redriven letter once, from the table', async () => {
    // Prepare: offset 1 lacks a required column (dead-lettered under policy dlq, redrivable once the
    // column is optional); offset 2 is not UTF-8 at all; offsets 3-4 land in a second file, whose
    // offset 5 is not JSON.
    const dlqRoute = route('letters', { schemaEvolution: 'dlq' });
    const options = { catalog: wh.catalog, routes: [dlqRoute] };
    const notText = Uint8Array.from([0xff, 0xfe, 0x00, 0x80]);
    await ingestEvent(options, bytesEvent('letters', ['{"id":0,"name":"a"}', '{ "id": 1 }', notText]));
    await ingestEvent(
      options,
      bytesEvent('letters', ['{"id":3,"name":"c"}', '{"id":4,"name":"d"}', 'not json'], 3),
    );
    const id = dlqRoute.table;
    const records = servedRecords(wh.catalog, true);
    // Act
    const all = await records.read(await wh.catalog.loadTable(id), 'letters', 0, 0n, 9n);
    const enough = await records.read(await wh.catalog.loadTable(id), 'letters', 0, 0n, 9n, 1);
    const withoutLetters = await servedRecords(wh.catalog, false).read(
      await wh.catalog.loadTable(id),
      'letters',
      0,
      0n,
      9n,
    );
    // Assess
    expect(all.map((r) => [r.offset, r.key?.toString(), r.timestampMs])).toEqual(
      [0, 1, 2, 3, 4, 5].map((o) => [BigInt(o), `k${o}`, BigInt(1_795_000_000_000 + o)]),
    );
    expect(all[1].value).toEqual(Buffer.from('{ "id": 1 }'));
    expect(all[2].value).toEqual(Buffer.from(notText));
    expect(all[2].headers).toEqual([{ key: 'h', value: Buffer.from([0xff, 0x00]) }]);
    expect(enough.map((r) => r.offset)).toEqual([0n, 1n, 2n]);
    expect(withoutLetters.map((r) => r.offset)).toEqual([0n, 3n, 4n]);

    // Prepare: the fix (name optional), then the redrive
    const table = await wh.catalog.loadTable(id);
    const evolved: Schema = { ...currentSchema(table.metadata), 'schema-id': 1 };
    evolved.fields = evolved.fields.map((f) => (f.name === 'name' ? { ...f, required: false } : f));
    await wh.catalog.commitTable(
      id,
      [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }],
      [
        { action: 'add-schema', schema: evolved },
        { action: 'set-current-schema', 'schema-id': -1 },
      ],
    );
    const redrive = await redriveDeadLetters({ catalog: wh.catalog, table: id, route: dlqRoute });
    expect(redrive.redriven).toBe(1);
    // Act
    const afterRedrive = await records.read(await wh.catalog.loadTable(id), 'letters', 0, 0n, 9n);
    // Assess: offset 1 once, as the table's row (re-encoded), not the letter's bytes
    expect(afterRedrive.map((r) => r.offset)).toEqual([0n, 1n, 2n, 3n, 4n, 5n]);
    expect(String(afterRedrive[1].value)).toBe('{"id":"1","name":null}');
    expect(afterRedrive[2].value).toEqual(Buffer.from(notText));
  });
});
