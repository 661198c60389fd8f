/**
 * kafka-serve re-encoding rows that kept no value bytes through the registry schema id they kept
 * (`_kafka.schema_id`): Confluent Avro and Protobuf records ingested by floe (the real decoder, mapping
 * and schema evolution) are served as their producers' frames, each row by its own schema id; a route
 * that renamed a field keeps no ids and serves JSON; an id the registry does not know serves JSON and
 * says so; a registry outage fails the read instead of caching JSON. And `--routes` gives kafka-serve a
 * route's own DLQ table.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { servedRoutesFrom } from '../../../functions/cli/kafka-serve-routes.js';
import { UsageError } from '../../../functions/cli/options.js';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { TransientIOError } from '../../../functions/core/errors.js';
import { parseFormatConfig } from '../../../functions/core/formats/format-config.js';
import { createSchemaRegistryClient } from '../../../functions/core/formats/schema-registry-client.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { creationRequest } from '../../../functions/core/ingest/load-or-create-table.js';
import { DeadLetterRecords } from '../../../functions/core/kafka/serve/dead-letter-records.js';
import { TableRecords } from '../../../functions/core/kafka/serve/table-records.js';
import { RegistryValueEncoding } from '../../../functions/core/kafka/serve/value-encoding.js';
import { parseMappingConfig } from '../../../functions/core/mapping/mapping-config.js';
import { hasKafkaSchemaId } from '../../../functions/core/records/kafka-lineage.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { currentSchema } from '../../../functions/core/spec/metadata.js';
import type { Row, Schema } from '../../../functions/core/spec/types.js';
import {
  type SchemaRegistryServer,
  startSchemaRegistryServer,
} from '../../support/schema-registry-server.js';
import { tempWarehouse } from '../../support/tables.js';
import { confluentFrame, producerAvroType } from '../formats/helpers.js';
import { encode, producerRoot } from '../formats/protobuf-fixtures.js';

const ID_ONLY: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [{ id: 1, name: 'id', required: true, type: 'long' }],
};

const V1 = {
  type: 'record',
  name: 'Order',
  fields: [
    { name: 'id', type: 'long' },
    { name: 'amount', type: { type: 'bytes', logicalType: 'decimal', precision: 9, scale: 2 } },
    { name: 'at', type: { type: 'long', logicalType: 'timestamp-micros' } },
    { name: 'tags', type: { type: 'array', items: 'string' } },
  ],
};
/** V1's fields as a route would declare them. */
const ORDER_COLUMNS: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'amount', required: false, type: 'decimal(9, 2)' },
    { id: 3, name: 'at', required: false, type: 'timestamptz' },
    {
      id: 4,
      name: 'tags',
      required: false,
      type: { type: 'list', 'element-id': 5, 'element-required': false, element: 'string' },
    },
  ],
};
/** V1 with an optional field added (the producer's schema evolved). */
const V2 = { ...V1, fields: [...V1.fields, { name: 'note', type: ['null', 'string'], default: null }] };
const SALE_PROTO = `syntax = "proto3"; package shop;
message Line { string sku = 1; }
message Sale { int64 id = 1; string name = 2; repeated Line lines = 3; }`;

/** An ESM event of these values on partition 0 of `topic`, from offset `first` (keys `k<i>` unless given). */
function event(topic: string, values: Uint8Array[], first = 0, keys?: string[]): unknown {
  return {
    eventSource: 'aws:kafka',
    records: {
      [`${topic}-0`]: values.map((v, i) => ({
        topic,
        partition: 0,
        offset: first + i,
        timestamp: 1_795_000_000_000 + i,
        timestampType: 'CREATE_TIME',
        key: Buffer.from(keys?.[i] ?? `k${i}`).toString('base64'),
        value: Buffer.from(v).toString('base64'),
        headers: [],
      })),
    },
  };
}

describe('kafka-serve re-encoding through the registry', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  let registry: SchemaRegistryServer;
  let logged: string[];
  beforeEach(async () => {
    wh = await tempWarehouse();
    registry = await startSchemaRegistryServer();
    logged = [];
  });
  afterEach(async () => {
    await registry.close();
    await wh.cleanup();
  });

  const route = (name: string, extra: Partial<TableRoute> = {}): TableRoute => ({
    table: { namespace: ['app'], name },
    topics: [name],
    schema: ID_ONLY,
    kafkaLineage: true,
    properties: {},
    format: parseFormatConfig({ value: 'confluent', registry: { url: registry.url, timeoutMs: 2000 } }),
    ...extra,
  });

  /** Reads as kafka-serve does: rows re-encoded through `url`'s registry, else as `{"json":…}`. */
  function served(url = registry.url) {
    const client = createSchemaRegistryClient({ url, timeoutMs: 500, maxAttempts: 1 });
    const encoding = new RegistryValueEncoding({
      registryFor: () => client,
      json: () => (row: Row) => Buffer.from(`{"json":${String(row.id)}}`),
      log: (line) => logged.push(line),
    });
    const records = new TableRecords((table: LoadedTable) => encoding.forTable(table));
    return async (name: string) => {
      const table = await wh.catalog.loadTable({ namespace: ['app'], name });
      return (await records.read(table, name, 0, 0n, 99n)).map((r) => r.value);
    };
  }

  it('serves Avro rows as their frames, each by its own schema id, and Protobuf rows too', async () => {
    // Prepare: two Avro schema versions in one topic, a Protobuf topic
    const v1 = registry.register({ schema: JSON.stringify(V1), subject: 'orders-value' });
    const v2 = registry.register({ schema: JSON.stringify(V2), subject: 'orders-value' });
    const sale = registry.register({ schema: SALE_PROTO, schemaType: 'PROTOBUF', subject: 'sales-value' });
    const dec = (n: number) => Buffer.from([n >> 8, n & 0xff]);
    const order = {
      id: 9_007_199_254_740_993n,
      amount: dec(12_345),
      at: 1_795_000_000_123_456n,
      tags: ['a'],
    };
    const avro = [
      confluentFrame(v1, producerAvroType(V1).toBuffer(order)),
      confluentFrame(
        v2,
        producerAvroType(V2).toBuffer({ ...order, id: 2n, tags: [], note: { string: 'x' } }),
      ),
      confluentFrame(v2, producerAvroType(V2).toBuffer({ ...order, id: 3n, note: null })),
    ];
    const proto = [
      confluentFrame(
        sale,
        encode(producerRoot(SALE_PROTO), 'shop.Sale', { id: '7', name: 'n', lines: [{ sku: 's' }] }),
        [1],
      ),
    ];
    const options = { catalog: wh.catalog, routes: [route('orders'), route('sales')] };
    // The first batch evolves the table (rows converted one by one); the second fits it (gathered
    // straight into columns): both paths write the schema id.
    await ingestEvent(options, event('orders', avro.slice(0, 2)));
    await ingestEvent(options, event('orders', avro.slice(2), 2));
    await ingestEvent(options, event('sales', proto));
    const fetched = registry.count('/schemas/ids/');
    // Act
    const read = served();
    const [orders, sales] = [await read('orders'), await read('sales')];
    // Assess
    expect(orders.map((v) => v?.toString('hex'))).toEqual(avro.map((f) => Buffer.from(f).toString('hex')));
    expect(sales.map((v) => v?.toString('hex'))).toEqual(proto.map((f) => Buffer.from(f).toString('hex')));
    expect(logged).toEqual([]);
    // One schema fetch per id, not per row.
    expect(registry.count('/schemas/ids/') - fetched).toBe(3);
  });

  it('rows gathered straight into columns (values that fit the table) keep their schema ids too', async () => {
    // Prepare: a schema whose values fit the declared columns as they are
    const simple = {
      type: 'record',
      name: 'Simple',
      fields: [
        { name: 'id', type: 'long' },
        { name: 'name', type: 'string' },
      ],
    };
    const id = registry.register({ schema: JSON.stringify(simple) });
    const frames = [1n, 2n].map((n) =>
      Buffer.from(confluentFrame(id, producerAvroType(simple).toBuffer({ id: n, name: `n${n}` }))),
    );
    const columns: Schema = {
      ...ID_ONLY,
      fields: [...ID_ONLY.fields, { id: 2, name: 'name', required: false, type: 'string' }],
    };
    await ingestEvent(
      { catalog: wh.catalog, routes: [route('fits', { schema: columns })] },
      event('fits', frames),
    );
    // Act
    const values = await served()('fits');
    // Assess
    expect(values).toEqual(frames);
  });

  it('keeps no schema ids for a route that renames a field: its rows are JSON', async () => {
    // Prepare
    const v1 = registry.register({ schema: JSON.stringify(V1) });
    const bytes = confluentFrame(
      v1,
      producerAvroType(V1).toBuffer({ id: 1n, amount: Buffer.from([1]), at: 0n, tags: [] }),
    );
    const renamed = route('renamed', { mapping: parseMappingConfig({ columns: { when: { from: 'at' } } }) });
    const options = { catalog: wh.catalog, routes: [renamed, route('plain')] };
    await ingestEvent(options, event('renamed', [bytes]));
    await ingestEvent(options, event('plain', [bytes]));
    // Act
    const read = served();
    const values = [await read('renamed'), await read('plain')];
    // Assess
    const schemaOf = async (name: string) =>
      currentSchema((await wh.catalog.loadTable({ namespace: ['app'], name })).metadata);
    expect(hasKafkaSchemaId(await schemaOf('renamed'))).toBe(false);
    expect(hasKafkaSchemaId(await schemaOf('plain'))).toBe(true);
    expect(values.map((v) => v.map(String))).toEqual([['{"json":1}'], [Buffer.from(bytes).toString()]]);
  });

  it('serves JSON, and says so once, for an id the registry does not know; a registry outage fails the read', async () => {
    // Prepare: ingested through one registry, served through another that never saw the schema
    const v1 = registry.register({ schema: JSON.stringify(V1) });
    const frame = (id: bigint) =>
      confluentFrame(v1, producerAvroType(V1).toBuffer({ id, amount: Buffer.from([1]), at: 0n, tags: [] }));
    await ingestEvent(
      { catalog: wh.catalog, routes: [route('orders')] },
      event('orders', [frame(1n), frame(2n)]),
    );
    const other = await startSchemaRegistryServer();
    try {
      // Act
      const values = await served(other.url)('orders');
      // Assess
      expect(values.map(String)).toEqual(['{"json":1}', '{"json":2}']);
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatch(new RegExp(`app.orders: rows of schema id ${v1} are served as JSON`));
    } finally {
      await other.close();
    }
    // Act: nothing answers
    const down = served(other.url)('orders');
    // Assess
    await expect(down).rejects.toBeInstanceOf(TransientIOError);
  });

  it('an existing table gains _kafka.schema_id at its next batch; rows from before are JSON', async () => {
    // Prepare: created by a JSON route, then fed Confluent frames
    await ingestEvent(
      { catalog: wh.catalog, routes: [route('later', { format: undefined })] },
      event('later', [Buffer.from('{"id":0}')]),
    );
    const v1 = registry.register({ schema: JSON.stringify(V1) });
    const bytes = confluentFrame(
      v1,
      producerAvroType(V1).toBuffer({ id: 1n, amount: Buffer.from([1]), at: 0n, tags: [] }),
    );
    // Act
    await ingestEvent({ catalog: wh.catalog, routes: [route('later')] }, event('later', [bytes], 1));
    // Assess
    expect((await served()('later')).map(String)).toEqual(['{"json":0}', Buffer.from(bytes).toString()]);
  });

  it('an upsert table keeps schema ids too; kafkaValue turned on after them serves the kept bytes', async () => {
    // Prepare: the upsert table's rows are its records' values; the other gains _kafka.value after schema_id
    const v1 = registry.register({ schema: JSON.stringify(V1) });
    const frame = (id: bigint, tag: string) =>
      Buffer.from(
        confluentFrame(
          v1,
          producerAvroType(V1).toBuffer({ id, amount: Buffer.from([1]), at: 0n, tags: [tag] }),
        ),
      );
    const keyed = route('keyed', { mode: 'upsert', identifierColumns: ['id'], schema: ORDER_COLUMNS });
    await ingestEvent(
      { catalog: wh.catalog, routes: [keyed] },
      event('keyed', [frame(1n, 'a'), frame(2n, 'b')], 0, ['{"id":1}', '{"id":2}']),
    );
    await ingestEvent({ catalog: wh.catalog, routes: [route('kept')] }, event('kept', [frame(1n, 'a')]));
    await ingestEvent(
      { catalog: wh.catalog, routes: [route('kept', { kafkaValue: true })] },
      event('kept', [frame(2n, 'b')], 1),
    );
    const kept = currentSchema((await wh.catalog.loadTable({ namespace: ['app'], name: 'kept' })).metadata);
    // Act
    const read = served();
    const [keyedValues, keptValues] = [await read('keyed'), await read('kept')];
    // Assess: _kafka ends schema_id, value (the order the table gained them); each row is its frame
    const lineage = kept.fields.find((f) => f.name === '_kafka')?.type as { fields: { name: string }[] };
    expect(lineage.fields.slice(-2).map((f) => f.name)).toEqual(['schema_id', 'value']);
    expect(keyedValues).toEqual([frame(1n, 'a'), frame(2n, 'b')]);
    expect(keptValues).toEqual([frame(1n, 'a'), frame(2n, 'b')]);
  });

  it('only routes that read Confluent frames into the value fields as they are create tables with schema ids', () => {
    // Prepare
    const auto = (registered: boolean) =>
      parseFormatConfig(registered ? { value: 'auto', registry: { url: registry.url } } : { value: 'auto' });
    const cases: [string, Partial<TableRoute>, boolean][] = [
      ['confluent', {}, true],
      ['auto with a registry', { format: auto(true) }, true],
      [
        'key and header columns',
        { mapping: parseMappingConfig({ key: { column: 'k' }, headers: [{ header: 'h', column: 'h' }] }) },
        true,
      ],
      ['auto without a registry', { format: auto(false) }, false],
      ['JSON', { format: undefined }, false],
      ['glue', { format: parseFormatConfig({ value: 'glue' }) }, false],
      ['debezium', { mode: 'debezium', identifierColumns: ['id'] }, false],
      ['flatten', { mapping: parseMappingConfig({ flatten: true }) }, false],
      ['exclude', { mapping: parseMappingConfig({ exclude: ['x'] }) }, false],
      ['a type rule', { mapping: parseMappingConfig({ columns: { id: { type: 'long' } } }) }, false],
      ['a value column', { mapping: parseMappingConfig({ value: { column: 'payload' } }) }, false],
      ['no lineage', { kafkaLineage: false }, false],
    ];
    // Act
    const got = cases.map(([what, extra]) => [
      what,
      hasKafkaSchemaId(creationRequest(route('t', extra)).schema),
    ]);
    // Assess
    expect(got).toEqual(cases.map(([what, , want]) => [what, want]));
  });

  it('--routes refuses a served table without a route, or whose routes name different DLQ tables', async () => {
    // Prepare
    const dir = await mkdtemp(join(tmpdir(), 'floe-routes-'));
    try {
      const file = join(dir, 'routes.json');
      await writeFile(
        file,
        JSON.stringify([
          { table: 'app.a', topics: ['a1'], dlqTable: 'errors_1' },
          { table: 'app.a', topics: ['a2'], dlqTable: 'errors_2' },
          { table: 'app.b', topics: ['b'] },
        ]),
      );
      const id = (name: string) => ({ namespace: ['app'], name });
      // Act / Assess
      await expect(servedRoutesFrom(file, [id('a')])).rejects.toThrow(UsageError);
      await expect(servedRoutesFrom(file, [id('a')])).rejects.toThrow(/app.errors_1, app.errors_2/);
      await expect(servedRoutesFrom(file, [id('c')])).rejects.toThrow(/has no route for app.c/);
      const b = await servedRoutesFrom(file, [id('b')]);
      expect(b.dlqOf(id('b'))).toEqual(id('b__dlq'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("--routes gives kafka-serve a route's own DLQ table", async () => {
    // Prepare: a route whose letters go to app.errors, and a routes file naming it
    const own = route('own', { format: undefined, dlqTable: 'errors', schemaEvolution: 'dlq' });
    await ingestEvent(
      { catalog: wh.catalog, routes: [own] },
      event('own', [Buffer.from('{"id":0}'), Buffer.from('oops')]),
    );
    const dir = await mkdtemp(join(tmpdir(), 'floe-routes-'));
    try {
      const file = join(dir, 'routes.json');
      await writeFile(file, JSON.stringify([{ table: 'app.own', topics: ['own'], dlqTable: 'errors' }]));
      const routes = await servedRoutesFrom(file, [own.table]);
      const read = (dlqOf?: typeof routes.dlqOf) =>
        new TableRecords(
          () => (row: Row) => Buffer.from(`{"json":${String(row.id)}}`),
          new DeadLetterRecords((id) => wh.catalog.loadTable(id), dlqOf),
        );
      const table = await wh.catalog.loadTable(own.table);
      // Act
      const followed = await read(routes.dlqOf).read(table, 'own', 0, 0n, 9n);
      const defaulted = await read().read(table, 'own', 0, 0n, 9n);
      // Assess
      expect(routes.dlqOf(own.table)).toEqual({ namespace: ['app'], name: 'errors' });
      expect(followed.map((r) => String(r.value))).toEqual(['{"json":0}', 'oops']);
      expect(defaulted.map((r) => String(r.value))).toEqual(['{"json":0}']);
      expect(routes.describe()[0]).toMatch(
        /^app.own: dead letters from app.errors; rows without _kafka.value as JSON$/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
