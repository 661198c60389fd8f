/**
 * The merged view of an upsert (CDC) table on the mock broker: updates, deletes (tombstones) and new
 * keys in the Kafka tail are applied over the cold rows — in `floe scan --live` and through
 * `floe serve --live`, whose live snapshot names the replaced cold rows with position deletes (the
 * table's default delete mode; no equality delete), read by floe's REST client + scan and by DuckDB
 * over the served files. After the next commit the view is unchanged and the table itself holds the
 * same rows. The equality-mode tail is covered by test/unit/live/live-tail-deletes.test.ts.
 */
import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kcatAvailable, type MockKafka, startMockKafka } from '../../support/kafka-broker.js';
import { duckdbLiveRows, duckdbQuery, liveEntries, sqlString } from '../../support/readers.js';
import { kafkaClient, makeWarehouse, spawnFloe, exitOf } from '../kafka/kafka-kit.js';
import { commitAll, readServed, scanLive, startServe, tailFiles } from './live-kit.js';

/** Upserts (`name`) and tombstones (null) keyed by id, each on partition id % 4, in order. */
async function send(kafka: Kafka, topic: string, changes: [number, string | null][]): Promise<void> {
  const producer = kafka.producer({ allowAutoTopicCreation: true });
  await producer.connect();
  try {
    for (const [id, name] of changes) {
      await producer.send({
        topic,
        acks: -1,
        messages: [
          { partition: id % 4, key: String(id), value: name === null ? null : JSON.stringify({ id, name }) },
        ],
      });
    }
  } finally {
    await producer.disconnect();
  }
}

const byId = (rows: Record<string, unknown>[]) =>
  Object.fromEntries(rows.map((r) => [String(r.id), r.name])) as Record<string, unknown>;

describe.skipIf(!kcatAvailable())('the live view of an upsert table', () => {
  let broker: MockKafka;

  beforeAll(async () => {
    broker = await startMockKafka(1);
  });
  afterAll(async () => {
    await broker?.stop();
  });

  it('applies the tail’s updates and deletes over the cold rows, and shows the same after the commit', async () => {
    // Prepare: keys 0..7 committed; the tail updates 1, 2 (twice), deletes 3 and 4, adds 8, adds and deletes 9
    const topic = `cdc-${randomUUID()}`;
    const group = `g-${randomUUID()}`;
    const { dir, schemaFile } = await makeWarehouse();
    const kafka = kafkaClient(broker.bootstrapServers);
    await send(
      kafka,
      topic,
      Array.from({ length: 8 }, (_, id): [number, string] => [id, `v1-${id}`]),
    );
    const route = ['--schema', schemaFile, '--mode', 'upsert', '--identifier', 'id'];
    await commitAll(broker.bootstrapServers, topic, dir, group, route);
    await send(kafka, topic, [
      [1, 'v2-1'],
      [2, 'v2-2'],
      [3, null],
      [2, 'v3-2'],
      [4, null],
      [8, 'v1-8'],
      [9, 'v1-9'],
      [9, null],
    ]);
    const expected = {
      '0': 'v1-0',
      '1': 'v2-1',
      '2': 'v3-2',
      '5': 'v1-5',
      '6': 'v1-6',
      '7': 'v1-7',
      '8': 'v1-8',
    };

    // Act + Assess: scan --live
    const live = await scanLive(broker.bootstrapServers, dir);
    expect(live.rows).toHaveLength(7);
    expect(byId(live.rows)).toEqual(expected);
    expect(live.output).toMatch(/hot: 8 record\(s\) from Kafka/);
    expect(live.output).toMatch(/4 cold row\(s\) replaced or deleted/);

    // Act + Assess: floe serve --live
    const served = await startServe(dir, ['--live', '--bootstrap-servers', broker.bootstrapServers]);
    try {
      const { table, rows } = await readServed(served.uri);
      expect(rows).toHaveLength(7);
      expect(byId(rows)).toEqual(expected);
      const current = table.metadata.snapshots.find(
        (s) => s['snapshot-id'] === table.metadata['current-snapshot-id'],
      )!;
      expect(current.summary['floe.live']).toBe('true');
      expect(JSON.parse(current.summary['floe.live-offsets'])[topic]).toBeDefined();
      // The table is in the default delete mode: the tail names the 4 cold rows of 1..4 by position
      // (8 and 9 had no cold row to find), and holds no equality delete
      expect(current.summary['added-position-deletes']).toBe('4');
      expect(current.summary['added-equality-deletes']).toBeUndefined();
      const files = await tailFiles(table);
      expect(files.filter((f) => f.content === 2)).toEqual([]);
      // The tail files by DuckDB: the final rows of 1, 2, 8; the position deletes name the cold rows of 1..4
      const list = (content: number) =>
        files
          .filter((f) => f.content === content)
          .map((f) => sqlString(f.path))
          .join(',');
      const data = await duckdbQuery(`select id, name from read_parquet([${list(0)}]) order by id`);
      expect(data.map((r) => [Number(r.id), r.name])).toEqual([
        [1, 'v2-1'],
        [2, 'v3-2'],
        [8, 'v1-8'],
      ]);
      const cold = (await liveEntries(table))
        .filter((e) => e.data_file.content === 0 && !e.data_file.file_path.includes('/floe-live/'))
        .map((e) => sqlString(e.data_file.file_path.replace(/^file:\/\//, '')))
        .join(',');
      const named = await duckdbQuery(
        `select d.id from read_parquet([${list(1)}]) p
         join read_parquet([${cold}], filename = true, file_row_number = true) d
         on d.filename = replace(p.file_path, 'file://', '') and d.file_row_number = p.pos order by d.id`,
      );
      expect(named.map((r) => Number(r.id))).toEqual([1, 2, 3, 4]);
      // The whole served table by DuckDB, position deletes anti-joined by (file_path, pos)
      expect(byId(await duckdbLiveRows(table, ['id', 'name'], ['id']))).toEqual(expected);
    } finally {
      await served.stop();
    }

    // Act: the tail commits
    await commitAll(broker.bootstrapServers, topic, dir, group, []);
    // Assess: the live view is unchanged, and the committed table now holds it
    const after = await scanLive(broker.bootstrapServers, dir);
    expect(after.rows).toHaveLength(7);
    expect(byId(after.rows)).toEqual(expected);
    expect(after.output).toMatch(/hot: 0 record\(s\) from Kafka/);
    const plain = spawnFloe(['scan', '--warehouse', dir, '--table', 'app.events', '--json']);
    expect((await exitOf(plain)).code).toBe(0);
    const committed = plain
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(byId(committed)).toEqual(expected);
  });
});
