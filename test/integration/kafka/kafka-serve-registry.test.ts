/**
 * `floe kafka-serve --routes` re-encoding through the registry, end to end: Confluent Avro records
 * (two schema versions) are backfilled from one mock cluster through the in-process registry by a
 * route that does not keep the value bytes (so the table holds only columns and `_kafka.schema_id`),
 * and one record that is not a frame goes to the route's own DLQ table (`dlqTable`). kafka-serve stands
 * in front of a second cluster whose offsets below COLD_BELOW hold filler (`--cold-below`), so a record
 * kcat reads there came from the table: its value must be the producer's frame, byte for byte, and the
 * dead letter's its own bytes, from the route's DLQ table named in the same routes file.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../../functions/cli/main.js';
import { kcatAvailable, type MockKafka, startMockKafka } from '../../support/kafka-broker.js';
import {
  type SchemaRegistryServer,
  startSchemaRegistryServer,
} from '../../support/schema-registry-server.js';
import { confluentFrame, producerAvroType } from '../../unit/formats/helpers.js';
import { exitOf, type FloeProcess, kafkaClient, makeWarehouse, SCHEMA, spawnFloe } from './kafka-kit.js';

const COLD_BELOW = 6;
const V1 = {
  type: 'record',
  name: 'Order',
  fields: [
    { name: 'id', type: 'long' },
    { name: 'name', type: ['null', 'string'] },
    { name: 'amount', type: { type: 'bytes', logicalType: 'decimal', precision: 9, scale: 2 } },
    { name: 'at', type: { type: 'long', logicalType: 'timestamp-millis' } },
  ],
};
const V2 = {
  ...V1,
  fields: [...V1.fields, { name: 'tags', type: { type: 'array', items: 'string' }, default: [] }],
};
/** The record at this offset is not a Confluent frame: a dead letter in the route's own DLQ table. */
const DEAD = 3;

describe.skipIf(!kcatAvailable())('floe kafka-serve: rows re-encoded through the registry', () => {
  let first: MockKafka;
  let second: MockKafka;
  let registry: SchemaRegistryServer;
  let serve: FloeProcess;
  const topic = `orders-${randomUUID()}`;
  const values: Buffer[] = [];

  beforeAll(async () => {
    [first, second, registry] = await Promise.all([
      startMockKafka(1),
      startMockKafka(1),
      startSchemaRegistryServer(),
    ]);
    const v1 = registry.register({ schema: JSON.stringify(V1), subject: `${topic}-value` });
    const v2 = registry.register({ schema: JSON.stringify(V2), subject: `${topic}-value` });
    for (let i = 0; i < COLD_BELOW; i++) {
      const order = { id: BigInt(i) * 3_000_000_000_000_001n, name: i % 2 ? null : { string: `n${i}` } };
      const at = 1_795_000_000_000n + BigInt(i);
      // Minimal two's complement, as Java's BigDecimal writes decimals (floe writes them so).
      const amount = Buffer.from([i + 1, 0x10]);
      values.push(
        i === DEAD
          ? Buffer.from([0xff, 0x00, i])
          : i < 2
            ? Buffer.from(confluentFrame(v1, producerAvroType(V1).toBuffer({ ...order, amount, at })))
            : Buffer.from(
                confluentFrame(v2, producerAvroType(V2).toBuffer({ ...order, amount, at, tags: ['t'] })),
              ),
      );
    }
    const { dir, schemaFile } = await makeWarehouse();
    const routes = join(dirname(schemaFile), 'routes.json');
    await writeFile(
      routes,
      JSON.stringify([
        {
          table: 'app.orders',
          topics: [topic],
          schema: SCHEMA,
          format: { value: 'confluent', registry: { url: registry.url } },
          dlqTable: 'app.order_errors',
        },
      ]),
    );
    const producer = kafkaClient(first.bootstrapServers).producer({ allowAutoTopicCreation: true });
    const filler = kafkaClient(second.bootstrapServers).producer({ allowAutoTopicCreation: true });
    await Promise.all([producer.connect(), filler.connect()]);
    await producer.send({
      topic,
      acks: -1,
      messages: values.map((value, i) => ({ partition: 0, key: `k${i}`, value })),
    });
    await filler.send({
      topic,
      acks: -1,
      messages: values.map((_, i) => ({ partition: 0, key: 'filler', value: `filler-${i}` })),
    });
    await Promise.all([producer.disconnect(), filler.disconnect()]);
    // In this process (a child would cost another start-up); kafka-serve runs as the CLI does, until a signal.
    const quiet = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const code = await main([
      'backfill',
      '--bootstrap-servers',
      first.bootstrapServers,
      '--topic',
      topic,
      '--warehouse',
      dir,
      '--routes',
      routes,
      '--from',
      'earliest',
      '--to',
      'latest',
    ]).finally(() => quiet.mockRestore());
    expect(code).toBe(0);
    serve = spawnFloe([
      'kafka-serve',
      '--warehouse',
      dir,
      '--routes',
      routes,
      '--table',
      'app.orders',
      '--bootstrap-servers',
      second.bootstrapServers,
      '--port',
      '0',
      '--cold-below',
      `0:${COLD_BELOW}`,
    ]);
    await serve.waitFor(/Kafka endpoint 127\.0\.0\.1:\d+/, 1, 30_000);
  });
  afterAll(async () => {
    serve?.child.kill('SIGTERM');
    if (serve) await exitOf(serve, 10_000).catch(() => undefined);
    await Promise.all([first?.stop(), second?.stop(), registry?.close()]);
  });

  it("kcat reads the producer's Avro frames and the dead letter from the route's own DLQ table", async () => {
    // Prepare
    const endpoint = /Kafka endpoint (127\.0\.0\.1:\d+)/.exec(serve.output())?.[1] ?? '';
    // Act
    const { stdout } = await promisify(execFile)(
      'kcat',
      [
        '-C',
        '-b',
        endpoint,
        '-t',
        topic,
        '-p',
        '0',
        '-o',
        'beginning',
        '-c',
        String(COLD_BELOW),
        '-e',
        '-q',
        '-f',
        '%o %k %s\\n',
      ],
      // latin1: one character per byte, so frames compare byte for byte.
      { timeout: 30_000, encoding: 'latin1' },
    );
    // Assess
    // Frames may hold newline bytes: compared whole, not line by line.
    expect(stdout).toBe(values.map((v, i) => `${i} k${i} ${v.toString('latin1')}\n`).join(''));
    expect(serve.output()).toContain(
      'app.orders: dead letters from app.order_errors; rows without _kafka.value re-encoded',
    );
  });
});
