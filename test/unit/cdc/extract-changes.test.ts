import { describe, expect, it } from 'vitest';
import { extractChanges } from '../../../functions/core/cdc/extract-changes.js';
import { defaultSourceType } from '../../../functions/core/routing/table-mode.js';
import type { CdcSettings } from '../../../functions/core/routing/table-mode.js';
import { withKafkaLineage } from '../../../functions/core/records/kafka-lineage.js';
import type { Row, Schema } from '../../../functions/core/spec/types.js';
import { ID_KEY, rawRecord } from './cdc-fixtures.js';

const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  'identifier-field-ids': [1],
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'name', required: false, type: 'string' },
    { id: 3, name: 'price', required: false, type: 'decimal(8, 2)' },
  ],
};
const DEBEZIUM: CdcSettings = { mode: 'debezium', key: ID_KEY };
const UPSERT: CdcSettings = { mode: 'upsert', key: ID_KEY };

describe('extractChanges: Debezium envelopes', () => {
  it('turns c/r/u/d into keyed changes; only a create is known not to exist yet', () => {
    // Prepare
    const records = [
      rawRecord(0, { id: 1 }, { op: 'c', after: { id: 1, name: 'a', price: '1.50' } }),
      rawRecord(1, { id: 2 }, { op: 'r', after: { id: 2, name: 'b' } }),
      rawRecord(2, { id: 1 }, { op: 'u', before: { id: 1, name: 'a' }, after: { id: 1, name: 'a2' } }),
      rawRecord(3, { id: 2 }, { op: 'd', before: { id: 2, name: 'b' }, after: null }),
    ];

    // Act
    const out = extractChanges(records, SCHEMA, DEBEZIUM);

    // Assess
    expect(out.deadLetters).toEqual([]);
    expect(out.changes.map((c) => [c.key.values[0], c.row?.name ?? null, c.mayExist])).toEqual([
      [1n, 'a', false],
      [2n, 'b', true],
      [1n, 'a2', true],
      [2n, null, true],
    ]);
    expect(out.changes[0].row).toEqual({ id: 1n, name: 'a', price: 150n });
  });

  it('splits an update that changed the key into a delete of the old key and the new row', () => {
    const out = extractChanges(
      [rawRecord(0, { id: 2 }, { op: 'u', before: { id: 1, name: 'x' }, after: { id: 2, name: 'x' } })],
      SCHEMA,
      DEBEZIUM,
    );
    expect(out.changes.map((c) => [c.key.values[0], c.row === null])).toEqual([
      [1n, true],
      [2n, false],
    ]);
  });

  it("keys a delete by the Kafka key when 'before' does not hold the key", () => {
    const out = extractChanges([rawRecord(5, { id: 9 }, { op: 'd', before: null })], SCHEMA, DEBEZIUM);
    expect(out.changes).toHaveLength(1);
    expect(out.changes[0]).toMatchObject({ row: null, mayExist: true, key: { values: [9n] } });
  });

  it('counts tombstones, heartbeats and transaction markers as ignored, and dead-letters the rest with a reason', () => {
    // Prepare
    const records = [
      rawRecord(0, { id: 1 }, null),
      rawRecord(1, null, { ts_ms: 1 }),
      rawRecord(2, null, { status: 'END', id: 'tx-1', event_count: 2 }),
      rawRecord(3, null, { id: 4, name: 'flattened' }),
      rawRecord(4, null, { op: 'd', before: null }),
      rawRecord(5, { id: 6 }, { op: 'c', after: { name: 'no id' } }),
      rawRecord(6, { id: 7 }, { op: 'c', after: { id: 'seven' } }),
      { ...rawRecord(7, null, null), decodeError: 'value is not valid base64' },
    ];

    // Act
    const out = extractChanges(records, SCHEMA, DEBEZIUM);

    // Assess
    expect(out.changes).toEqual([]);
    expect(out.ignored).toEqual({ tombstone: 1, heartbeat: 1, transaction: 1 });
    expect(out.deadLetters.map((l) => [Number(l.record.offset), l.stage, l.error])).toEqual([
      [3, 'map', expect.stringMatching(/no 'op' field/)],
      [4, 'map', expect.stringMatching(/no usable key/)],
      [5, 'map', expect.stringMatching(/after.id: is required/)],
      [6, 'map', expect.stringMatching(/after.id: expected an integer/)],
      [7, 'decode', 'value is not valid base64'],
    ]);
  });

  it('fills the _kafka lineage and, when the table keeps it, the source block', () => {
    // Prepare
    const source = defaultSourceType(100);
    const schema = withKafkaLineage({
      ...SCHEMA,
      fields: [...SCHEMA.fields, { id: 99, name: '_source', required: false, type: source }],
    });
    const settings: CdcSettings = {
      ...DEBEZIUM,
      sourceColumn: schema.fields.find((f) => f.name === '_source'),
    };
    const envelope = {
      op: 'c',
      after: { id: 1 },
      source: {
        connector: 'mysql',
        snapshot: false,
        ts_ms: 1795000000123,
        file: 'binlog.000003',
        pos: 805,
        row: 0,
      },
    };

    // Act
    const [change] = extractChanges(
      [rawRecord(11, { id: 1 }, envelope, { partition: 2 })],
      schema,
      settings,
    ).changes;

    // Assess
    expect((change.row!._kafka as Row).offset).toBe(11n);
    expect((change.row!._kafka as Row).partition).toBe(2);
    expect(change.row!._source).toMatchObject({
      connector: 'mysql',
      snapshot: 'false',
      ts_ms: 1795000000123000n,
      file: 'binlog.000003',
      pos: 805n,
      row: 0,
      lsn: null,
    });
  });
});

describe('extractChanges: upsert by key', () => {
  it('takes the key from the Kafka key (filling the value), or from the value without one', () => {
    // Prepare
    const records = [
      rawRecord(0, { id: 1 }, { name: 'key only in the Kafka key' }),
      rawRecord(1, 2, { id: 2, name: 'both agree' }),
      rawRecord(2, null, { id: 3, name: 'no Kafka key' }),
      rawRecord(3, { id: 1 }, null),
    ];

    // Act
    const out = extractChanges(records, SCHEMA, UPSERT);

    // Assess
    expect(out.deadLetters).toEqual([]);
    expect(out.changes.map((c) => [c.key.values[0], c.row === null ? null : c.row.id, c.mayExist])).toEqual([
      [1n, 1n, true],
      [2n, 2n, true],
      [3n, 3n, true],
      [1n, null, true],
    ]);
  });

  it('dead-letters records without a usable key, and keys that disagree with the value', () => {
    const out = extractChanges(
      [
        rawRecord(0, null, null),
        rawRecord(1, null, { name: 'no key anywhere' }),
        rawRecord(2, { id: 1 }, { id: 2 }),
        rawRecord(3, 'not-json', { id: 3 }, { rawKey: true }),
        rawRecord(4, { id: 4 }, [1, 2]),
      ],
      SCHEMA,
      UPSERT,
    );
    expect(out.changes).toEqual([]);
    expect(out.deadLetters.map((l) => l.error)).toEqual([
      'no usable key: a tombstone without a Kafka key',
      "no usable key: no Kafka key, and the value lacks 'id'",
      "the Kafka key (id=1) and the value disagree on 'id' (2)",
      expect.stringMatching(/no usable key: the Kafka key 'not-json'/),
      'value is JSON but not an object (an array)',
    ]);
  });
});
