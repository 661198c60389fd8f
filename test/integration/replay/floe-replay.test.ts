/**
 * `floe replay` against a real Kafka-protocol broker (librdkafka's mock cluster through kcat), as a
 * child process: a table ingested by `floe backfill` goes back into a topic with every row exactly
 * once, per source partition in offset order, with its key, headers, CreateTime and `floe-source`;
 * a rerun produces nothing; a replay killed with SIGKILL and restarted still produces every row once;
 * `--where` replays a subset; `--follow` continues with the records produced after the table's commits.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kcatAvailable, type MockKafka, startMockKafka } from '../../support/kafka-broker.js';
import { exitOf, kafkaClient, makeWarehouse, spawnFloe } from '../kafka/kafka-kit.js';
import { backfill, checkExactlyOnceInOrder, produceSource, readTopic, timestampOf } from './replay-kit.js';

const TABLE = 'app.events';
const range = (first: number, count: number) => Array.from({ length: count }, (_, i) => first + i);

describe.skipIf(!kcatAvailable())('floe replay against a Kafka broker', () => {
  let broker: MockKafka;

  beforeAll(async () => {
    broker = await startMockKafka(3);
  });
  afterAll(async () => {
    await broker?.stop();
  });

  function replayArgs(warehouse: string, out: string, ...extra: string[]) {
    return [
      'replay',
      '--warehouse',
      warehouse,
      '--table',
      TABLE,
      '--bootstrap-servers',
      broker.bootstrapServers,
      '--to-topic',
      out,
      ...extra,
    ];
  }

  it('produces every row once, per partition in offset order; a rerun produces nothing', async () => {
    // Prepare
    const topic = `src-${randomUUID()}`;
    const out = `out-${randomUUID()}`;
    const { dir, schemaFile } = await makeWarehouse();
    const kafka = kafkaClient(broker.bootstrapServers);
    await produceSource(kafka, topic, 0, 400);
    await backfill(broker.bootstrapServers, topic, dir, TABLE, schemaFile);
    // Act
    const first = spawnFloe(replayArgs(dir, out, '--batch-size', '64'));
    const firstExit = await exitOf(first);
    const second = spawnFloe(replayArgs(dir, out));
    const secondExit = await exitOf(second);
    // Assess
    expect(firstExit.code, first.output()).toBe(0);
    expect(first.output()).toMatch(/done: 400 rows produced to .*, 0 skipped as already replayed/);
    expect(first.output()).toMatch(/per target partition: 0:100 1:100 2:100 3:100/);
    expect(first.output()).toContain(`${topic}/0@0..99 (100)`);
    expect(secondExit.code, second.output()).toBe(0);
    expect(second.output()).toMatch(/done: 0 rows produced to .*, 400 skipped as already replayed/);
    const target = await readTopic(kafka, out);
    checkExactlyOnceInOrder(target, new Map([[topic, range(0, 400)]]));
    for (const [partition, records] of target) {
      expect(records.map((r) => Number(JSON.parse(Buffer.from(r.value!).toString()).id))).toEqual(
        range(0, 100).map((i) => i * 4 + partition),
      );
    }
  });

  it('killed with SIGKILL and restarted, a two-topic table still lands every row once, in order', async () => {
    // Prepare: two topics' partition N both map to target partition N (the checkpoint is per source)
    const topicA = `a-${randomUUID()}`;
    const topicB = `b-${randomUUID()}`;
    const out = `out-${randomUUID()}`;
    const { dir, schemaFile } = await makeWarehouse();
    const kafka = kafkaClient(broker.bootstrapServers);
    await produceSource(kafka, topicA, 0, 1_200);
    await produceSource(kafka, topicB, 0, 1_200);
    await backfill(broker.bootstrapServers, topicA, dir, TABLE, schemaFile);
    await backfill(broker.bootstrapServers, topicB, dir, TABLE, schemaFile);
    // Small batches, so hundreds of sends remain when the kill lands.
    const killed = spawnFloe(replayArgs(dir, out, '--batch-size', '5'));
    // Killed inside topic B's partition 0: target partition 0 then ends with B's records while A's
    // last position there lies far back — only the checkpoint header tells the rerun about it.
    await killed.waitFor(new RegExp(`${topicB}/0@\\d+\\.\\.\\d+ → `), 3);
    // Act
    killed.child.kill('SIGKILL');
    expect((await exitOf(killed)).signal).toBe('SIGKILL');
    const partial = [...(await readTopic(kafka, out)).values()].reduce((n, r) => n + r.length, 0);
    const resumed = spawnFloe(replayArgs(dir, out, '--batch-size', '100'));
    const { code } = await exitOf(resumed);
    // Assess
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(2_400);
    expect(code, resumed.output()).toBe(0);
    expect(resumed.output()).toContain(`done: ${2_400 - partial} rows produced`);
    expect(resumed.output()).toContain(`${partial} skipped as already replayed`);
    checkExactlyOnceInOrder(
      await readTopic(kafka, out),
      new Map([
        [topicA, range(0, 1_200)],
        [topicB, range(0, 1_200)],
      ]),
    );
  });

  it('--where replays the matching rows only', async () => {
    // Prepare
    const topic = `where-${randomUUID()}`;
    const out = `out-${randomUUID()}`;
    const { dir, schemaFile } = await makeWarehouse();
    const kafka = kafkaClient(broker.bootstrapServers);
    await produceSource(kafka, topic, 0, 200);
    await backfill(broker.bootstrapServers, topic, dir, TABLE, schemaFile);
    // Act
    const p = spawnFloe(replayArgs(dir, out, '--where', 'id >= 150'));
    const { code } = await exitOf(p);
    // Assess
    expect(code, p.output()).toBe(0);
    expect(p.output()).toMatch(/done: 50 rows produced/);
    checkExactlyOnceInOrder(await readTopic(kafka, out), new Map([[topic, range(150, 50)]]));
  });

  it('--from-offsets and --to-time bound the rows per source partition', async () => {
    // Prepare: partition p holds id 4·offset + p
    const topic = `bounds-${randomUUID()}`;
    const out = `out-${randomUUID()}`;
    const { dir, schemaFile } = await makeWarehouse();
    const kafka = kafkaClient(broker.bootstrapServers);
    await produceSource(kafka, topic, 0, 200);
    await backfill(broker.bootstrapServers, topic, dir, TABLE, schemaFile);
    const toTime = new Date(timestampOf(180)).toISOString();
    // Act
    const p = spawnFloe(replayArgs(dir, out, '--from-offsets', '0:10,1:20', '--to-time', toTime));
    const { code } = await exitOf(p);
    // Assess: ids below 180, and from offset 10 (id 40) in partition 0 and 20 (id 81) in partition 1
    const expected = range(0, 180).filter((id) => (id % 4 === 0 ? id >= 40 : id % 4 === 1 ? id >= 81 : true));
    expect(code, p.output()).toBe(0);
    expect(p.output()).toContain(`done: ${expected.length} rows produced`);
    checkExactlyOnceInOrder(await readTopic(kafka, out), new Map([[topic, expected]]));
  });

  it('refuses offset bounds that make no sense with exit 2 before producing, so a corrected rerun skips nothing', async () => {
    // Prepare: partitions 0..3 hold offsets 0..49 (partition p holds id 4·offset + p)
    const topic = `nonsense-${randomUUID()}`;
    const out = `out-${randomUUID()}`;
    const { dir, schemaFile } = await makeWarehouse();
    const kafka = kafkaClient(broker.bootstrapServers);
    await produceSource(kafka, topic, 0, 200);
    await backfill(broker.bootstrapServers, topic, dir, TABLE, schemaFile);
    // Act: an end before its start, a partition the table lacks, a start past its last offset
    const refused = [];
    for (const bounds of [
      ['--from-offsets', '0:30', '--to-offsets', '0:20'],
      ['--from-offsets', '9:10'],
      ['--from-offsets', '1:50'],
    ]) {
      const p = spawnFloe(replayArgs(dir, out, ...bounds));
      refused.push({ ...(await exitOf(p)), output: p.output() });
    }
    const corrected = spawnFloe(replayArgs(dir, out, '--from-offsets', '0:20'));
    const { code } = await exitOf(corrected);
    // Assess: each refused with what the table holds; the corrected run lands all it selects, once
    expect(refused.map((r) => r.code)).toEqual([2, 2, 2]);
    expect(refused[0].output).toContain('--to-offsets 0:20 is not after --from-offsets 0:30');
    expect(refused[1].output).toContain(
      'the table holds no partition 9 (the table holds partitions 0, 1, 2, 3)',
    );
    expect(refused[2].output).toContain(`the table holds ${topic}/1 offsets 0..49`);
    expect(code, corrected.output()).toBe(0);
    const expected = range(0, 200).filter((id) => id % 4 !== 0 || id >= 80);
    expect(corrected.output()).toContain(`done: ${expected.length} rows produced`);
    checkExactlyOnceInOrder(await readTopic(kafka, out), new Map([[topic, expected]]));
  });

  it('--follow continues with the records produced after the last commit, until SIGTERM', async () => {
    // Prepare
    const topic = `follow-${randomUUID()}`;
    const out = `out-${randomUUID()}`;
    const { dir, schemaFile } = await makeWarehouse();
    const kafka = kafkaClient(broker.bootstrapServers);
    await produceSource(kafka, topic, 0, 200);
    await backfill(broker.bootstrapServers, topic, dir, TABLE, schemaFile);
    await produceSource(kafka, topic, 200, 40);
    const p = spawnFloe(replayArgs(dir, out, '--follow'));
    await p.waitFor(/live .*: \d+ records/, 1);
    await produceSource(kafka, topic, 240, 20);
    // Act: every live record sent (each line names its count), then a clean stop
    await waitForLiveRecords(p.output, p.waitFor, 60);
    p.child.kill('SIGTERM');
    const { code } = await exitOf(p);
    // Assess
    expect(code, p.output()).toBe(0);
    expect(p.output()).toMatch(/stopped by signal .*: 200 rows \+ 60 live records produced/);
    checkExactlyOnceInOrder(
      await readTopic(kafka, out),
      new Map([[topic, range(0, 260)]]),
      (_t, id) => id >= 200,
    );
  });
});

/** Waits until the `live … : N records` lines add up to `count`. */
async function waitForLiveRecords(
  output: () => string,
  waitFor: (pattern: RegExp, times?: number) => Promise<void>,
  count: number,
): Promise<void> {
  const total = () =>
    [...output().matchAll(/live .*?: (\d+) records/g)].reduce((n, m) => n + Number(m[1]), 0);
  for (let lines = 1; total() < count; lines++) await waitFor(/live .*?: \d+ records/, lines);
}
