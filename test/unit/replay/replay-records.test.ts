import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import { toKafkaMessage } from '../../../functions/core/kafka/replay-producer.js';
import {
  buildRecord,
  lineageOf,
  orderBySource,
  parsePartitionOffsets,
  type RowLineage,
  stampCheckpoints,
  targetPartition,
  valueSchema,
  withinBounds,
} from '../../../functions/core/records/replay-records.js';
import {
  CHECKPOINT_HEADER,
  parseCheckpoint,
  SOURCE_HEADER,
} from '../../../functions/core/records/replay-source.js';
import type { Row, StructType } from '../../../functions/core/spec/types.js';

function kafkaRow(topic: string, partition: number, offset: bigint, extra: Row = {}): Row {
  return {
    id: Number(offset),
    _kafka: {
      topic,
      partition,
      offset,
      timestamp: 1_767_323_045_000_000n,
      timestamp_type: 'CREATE_TIME',
      key: Buffer.from(`k${offset}`),
      headers: [
        { key: 'bin', value: new Uint8Array([0, 255]) },
        { key: 'empty', value: null },
      ],
    },
    ...extra,
  };
}

const lineage = (
  topic: string,
  partition: number,
  offset: bigint,
  key: string | null = null,
): RowLineage => ({
  topic,
  partition,
  offset,
  key: key === null ? null : Buffer.from(key),
  headers: [],
});

describe('lineageOf', () => {
  it('reads topic, partition, offset, key, headers and the CreateTime in ms', () => {
    // Act
    const l = lineageOf(kafkaRow('t', 2, 41n));
    // Assess
    expect(l).toMatchObject({ topic: 't', partition: 2, offset: 41n, timestampMs: 1_767_323_045_000 });
    expect(Buffer.from(l.key!).toString()).toBe('k41');
    expect(l.headers).toEqual([
      { key: 'bin', value: new Uint8Array([0, 255]) },
      { key: 'empty', value: null },
    ]);
  });

  it('fails clearly for a row without lineage', () => {
    expect(() => lineageOf({ id: 1 })).toThrow(ValidationError);
    expect(() => lineageOf({ id: 1, _kafka: null })).toThrow(/_kafka lineage/);
  });
});

describe('orderBySource', () => {
  it('groups per source topic-partition, each in offset order, whatever order the files gave', () => {
    // Prepare: rows as two files would yield them (each file sorted by something else)
    const rows = [
      { lineage: lineage('b', 0, 5n) },
      { lineage: lineage('a', 1, 9n) },
      { lineage: lineage('a', 0, 12n) },
      { lineage: lineage('a', 0, 2n) },
      { lineage: lineage('a', 1, 3n) },
      { lineage: lineage('a', 0, 10_000_000_000n) },
      { lineage: lineage('a', 0, 7n) },
    ];
    // Act
    const groups = orderBySource(rows);
    // Assess
    expect(groups.map((g) => [g.topic, g.partition, g.rows.map((r) => r.lineage.offset)])).toEqual([
      ['a', 0, [2n, 7n, 12n, 10_000_000_000n]],
      ['a', 1, [3n, 9n]],
      ['b', 0, [5n]],
    ]);
  });
});

describe('targetPartition', () => {
  const hash = (key: Uint8Array, count: number) => key.length % count;

  it('same: the source partition, or a clear failure when the target lacks it', () => {
    expect(targetPartition('same', { partition: 3, key: null }, 4, hash)).toBe(3);
    expect(() => targetPartition('same', { partition: 4, key: null }, 4, hash)).toThrow(/--partitioning key/);
  });

  it('key: the hash of the key; a null key by source partition, the same on every run', () => {
    expect(targetPartition('key', { partition: 0, key: Buffer.from('abc') }, 2, hash)).toBe(1);
    expect(targetPartition('key', { partition: 5, key: null }, 4, hash)).toBe(1);
  });
});

describe('buildRecord and stampCheckpoints', () => {
  it('keeps key, headers (null stays null), timestamp; adds floe-source; replaces a copied floe-source', () => {
    // Prepare
    const l = lineageOf(kafkaRow('t', 1, 8n));
    l.headers.push({ key: SOURCE_HEADER, value: Buffer.from('older/0/0') });
    // Act
    const record = buildRecord(l, 1, Buffer.from('{"id":8}'));
    const message = toKafkaMessage(record);
    // Assess
    expect(record.headers.map((h) => h.key)).toEqual(['bin', 'empty', SOURCE_HEADER]);
    expect(message).toMatchObject({ partition: 1, timestamp: '1767323045000' });
    expect(message.headers).toEqual({
      bin: Buffer.from([0, 255]),
      empty: null,
      [SOURCE_HEADER]: Buffer.from('t/1/8'),
    });
    expect(Buffer.from(message.key as Buffer).toString()).toBe('k8');
  });

  it('stamps the last record per target partition with the checkpoint after the batch', () => {
    // Prepare: target 0 already holds a/0 up to 4 and b/0 up to 9
    const before = new Map([
      [
        0,
        new Map([
          ['a', new Map([[0, 4n]])],
          ['b', new Map([[0, 9n]])],
        ]),
      ],
    ]);
    const batch = [5n, 6n, 7n].map((o, i) => buildRecord(lineage('a', 0, o), i % 2, null));
    // Act
    const after = stampCheckpoints(batch, before);
    // Assess: records 0 and 2 go to target 0 (the last, offset 7, carries it), record 1 to target 1
    const stamped = batch.map((r) => r.headers.find((h) => h.key === CHECKPOINT_HEADER)?.value);
    expect(stamped[0]).toBeUndefined();
    expect(parseCheckpoint(Buffer.from(stamped[2]!).toString())).toEqual(
      new Map([
        ['a', new Map([[0, 7n]])],
        ['b', new Map([[0, 9n]])],
      ]),
    );
    expect(parseCheckpoint(Buffer.from(stamped[1]!).toString())).toEqual(
      new Map([['a', new Map([[0, 6n]])]]),
    );
    expect(before.get(0)?.get('a')?.get(0)).toBe(4n); // unchanged until the batch is acknowledged
    expect(after.get(0)?.get('a')?.get(0)).toBe(7n);
  });
});

describe('bounds', () => {
  it('parses P:O lists and applies offset and time bounds per source partition', () => {
    // Prepare
    const fromOffsets = parsePartitionOffsets('0:10, 1:0', '--from-offsets');
    const toOffsets = parsePartitionOffsets('0:20', '--to-offsets');
    const bounds = { fromOffsets, toOffsets, fromTimeMs: 1_000 };
    const at = (partition: number, offset: bigint, timestampMs?: number) => ({
      ...lineage('t', partition, offset),
      timestampMs,
    });
    // Assess
    expect(withinBounds(at(0, 9n, 5_000), bounds)).toBe(false);
    expect(withinBounds(at(0, 10n, 5_000), bounds)).toBe(true);
    expect(withinBounds(at(0, 20n, 5_000), bounds)).toBe(false);
    expect(withinBounds(at(2, 0n, 5_000), bounds)).toBe(true);
    expect(withinBounds(at(2, 0n, 999), bounds)).toBe(false);
    expect(withinBounds(at(2, 0n), bounds)).toBe(false);
    expect(() => parsePartitionOffsets('0=1', '--from-offsets')).toThrow(/PARTITION:OFFSET/);
    expect(() => parsePartitionOffsets('0:1,0:2', '--from-offsets')).toThrow(/twice/);
  });
});

describe('valueSchema', () => {
  it('drops _kafka only', () => {
    const schema: StructType = {
      type: 'struct',
      fields: [
        { id: 1, name: 'id', required: true, type: 'long' },
        { id: 2, name: '_kafka', required: false, type: { type: 'struct', fields: [] } },
      ],
    };
    expect(valueSchema(schema).fields.map((f) => f.name)).toEqual(['id']);
  });
});
