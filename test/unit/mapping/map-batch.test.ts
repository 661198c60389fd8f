import { describe, expect, it } from 'vitest';
import { SchemaEvolutionError, ValidationError } from '../../../functions/core/errors.js';
import { withKafkaLineage } from '../../../functions/core/records/kafka-lineage.js';
import { decodeJsonRecords } from '../../../functions/core/mapping/decoded-record.js';
import { mapBatch } from '../../../functions/core/mapping/map-batch.js';
import { DEFAULT_MAPPING, parseMappingConfig } from '../../../functions/core/mapping/mapping-config.js';
import { parseIsoTimestamp } from '../../../functions/core/records/parse-temporal.js';
import { findFieldByName } from '../../../functions/core/spec/schema-index.js';
import type { Schema } from '../../../functions/core/spec/types.js';
import { bytes, decoded, metadataOf, rawRecord } from './support.js';

const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  'identifier-field-ids': [1],
  fields: [
    { id: 1, name: 'order_id', required: true, type: 'long' },
    { id: 2, name: 'amount', required: true, type: 'decimal(10, 2)' },
    { id: 3, name: 'country', required: true, type: 'string' },
  ],
};

describe('mapBatch', () => {
  it('projects, evolves and converts; dead letters carry their stage and reason', () => {
    const md = metadataOf(withKafkaLineage(SCHEMA));
    const batch = mapBatch(
      [
        decoded({ order_id: 1, amount: '1.00', country: 'DE' }, { offset: 10n }),
        decoded(
          { order_id: 2, amount: '1234567890.12', country: null, channel: 'web', created: '20/11/2026' },
          { offset: 11n },
        ),
        decoded([1], { offset: 12n }),
        decoded({ order_id: 4, amount: '1.00', country: 7 }, { offset: 13n }),
        decoded({ order_id: 5, amount: '1.00', country: 'DE', created: '2026-11-20' }, { offset: 14n }),
      ],
      {
        mapping: parseMappingConfig({ columns: { created: { type: 'timestamptz', format: 'dd/MM/yyyy' } } }),
        metadata: md,
      },
    );
    expect(batch.rows.map((r) => r.order_id)).toEqual([1n, 2n]);
    expect(batch.used.map((r) => r.offset)).toEqual([10n, 11n]);
    expect(batch.rows[1]).toMatchObject({
      amount: 123456789012n,
      country: null,
      channel: 'web',
      created: parseIsoTimestamp('2026-11-20T00:00:00Z'),
      _kafka: { offset: 11n },
    });
    const letters = [...batch.deadLetters].sort((a, b) => Number(a.record.offset - b.record.offset));
    expect(letters.map((l) => [l.record.offset, l.stage, l.error])).toEqual([
      [12n, 'map', 'value is not an object (an array); map it with "value": { "column": ... }'],
      [
        13n,
        'schema',
        'country: number 7 cannot go into the string column (a number → string is not a compatible change)',
      ],
      [14n, 'map', "created: '2026-11-20' does not match the format 'dd/MM/yyyy'"],
    ]);
    const s = batch.reconciliation.schema;
    expect(findFieldByName(s, 'created')?.type).toBe('timestamptz');
    expect(findFieldByName(s, 'amount')?.type).toBe('decimal(12, 2)');
    // rows + dead letters = records
    expect(batch.rows.length + batch.deadLetters.length).toBe(5);
  });

  it('leaves no column or promotion behind from a record that then fails to convert', () => {
    const batch = mapBatch(
      [
        decoded(
          { order_id: 1, amount: '1.00', country: 'DE', channel: 'web', created: 'soon' },
          { offset: 1n },
        ),
        decoded({ order_id: 2, amount: '1.00', country: 'DE', score: 'high' }, { offset: 2n }),
      ],
      {
        mapping: parseMappingConfig({ columns: { created: { type: 'timestamptz' } } }),
        metadata: metadataOf(SCHEMA),
      },
    );
    expect(batch.deadLetters.map((l) => [l.record.offset, l.stage, l.error])).toEqual([
      [1n, 'map', "created: 'soon' is not an ISO-8601 timestamp"],
    ]);
    expect(batch.reconciliation.schema.fields.map((f) => f.name)).toEqual([
      'order_id',
      'amount',
      'country',
      'score',
    ]);
    expect(batch.rows).toEqual([{ order_id: 2n, amount: 100n, country: 'DE', score: 'high' }]);
    const none = mapBatch(
      [decoded({ order_id: 1, amount: '1.00', country: 'DE', channel: 'web', created: 'soon' })],
      {
        mapping: parseMappingConfig({ columns: { created: { type: 'timestamptz' } } }),
        metadata: metadataOf(SCHEMA),
      },
    );
    expect(none.reconciliation.changed).toBe(false);
    expect(none.reconciliation.updates).toEqual([]);
  });

  it('never lets a "__proto__" key vanish: it is refused as a column, or renamed by a rule', () => {
    const value = JSON.parse('{"order_id": 1, "amount": "1.00", "country": "DE", "__proto__": {"x": 1}}');
    const refused = mapBatch([decoded(value)], { mapping: DEFAULT_MAPPING, metadata: metadataOf(SCHEMA) });
    expect(refused.deadLetters.map((l) => l.error)).toEqual([
      "__proto__: a field named '__proto__' cannot become a column; rename it in the mapping",
    ]);
    const renamed = mapBatch([decoded(value)], {
      mapping: parseMappingConfig({ columns: { proto: { from: '__proto__' } } }),
      metadata: metadataOf(SCHEMA),
    });
    expect(renamed.rows).toEqual([{ order_id: 1n, amount: 100n, country: 'DE', proto: { x: 1n } }]);
    const flat = mapBatch(
      [decoded(JSON.parse('{"order_id": 1, "amount": "1.00", "country": "DE", "a": {"__proto__": 5}}'))],
      {
        mapping: parseMappingConfig({ flatten: true }),
        metadata: metadataOf(SCHEMA),
      },
    );
    expect(flat.rows).toEqual([{ order_id: 1n, amount: 100n, country: 'DE', a___proto__: 5n }]);
    expect(() => parseMappingConfig(JSON.parse('{"columns": {"__proto__": {"type": "long"}}}'))).toThrow(
      "mapping.columns.__proto__: '__proto__' cannot be a column name",
    );
  });

  it('honours policy block and dlq', () => {
    const md = metadataOf(SCHEMA);
    const records = [
      decoded({ order_id: 1, amount: '1.00', country: 'DE', channel: 'web' }),
      decoded({ order_id: 2, amount: 'x', country: 1 }),
    ];
    expect(() => mapBatch(records, { mapping: DEFAULT_MAPPING, metadata: md, policy: 'block' })).toThrow(
      SchemaEvolutionError,
    );
    expect(() => mapBatch(records, { mapping: DEFAULT_MAPPING, metadata: md, policy: 'block' })).toThrow(
      'orders-0@0',
    );
    const dlq = mapBatch(records, { mapping: DEFAULT_MAPPING, metadata: md, policy: 'dlq' });
    expect(dlq.rows).toEqual([]);
    expect(dlq.deadLetters.map((l) => l.stage)).toEqual(['schema', 'schema']);
    expect(dlq.reconciliation.changed).toBe(false);
  });

  it('uses type hints from a decoder for new columns (mapping rules win)', () => {
    const batch = mapBatch(
      [decoded({ order_id: 1, amount: '1.00', country: 'DE', at: '2026-11-20T10:00:00Z' })],
      {
        mapping: DEFAULT_MAPPING,
        metadata: metadataOf(SCHEMA),
        typeHints: new Map([['at', 'timestamptz']]),
      },
    );
    expect(findFieldByName(batch.reconciliation.schema, 'at')?.type).toBe('timestamptz');
    expect(batch.rows[0].at).toBe(parseIsoTimestamp('2026-11-20T10:00:00Z'));
  });

  it('refuses a mapping that does not fit the table as a configuration error, not a dead letter', () => {
    const mapping = parseMappingConfig({ columns: { country: { type: 'long' } } });
    expect(() => mapBatch([], { mapping, metadata: metadataOf(SCHEMA) })).toThrow(ValidationError);
  });

  it('works with the JSON decoder: undecodable records become decode dead letters', () => {
    const records = [
      rawRecord({ offset: 1n, value: bytes('{"order_id":1,"amount":"2.00","country":"DE"}') }),
      rawRecord({ offset: 2n, value: bytes('{"order_id":') }),
      rawRecord({ offset: 3n, value: Uint8Array.of(0xff) }),
      { ...rawRecord({ offset: 4n }), decodeError: 'value is not valid base64' },
    ];
    const { decoded: ok, deadLetters } = decodeJsonRecords(records);
    expect(deadLetters.map((l) => [l.record.offset, l.stage])).toEqual([
      [2n, 'decode'],
      [3n, 'decode'],
      [4n, 'decode'],
    ]);
    expect(deadLetters[1].error).toBe('value is not valid UTF-8');
    const batch = mapBatch(ok, { mapping: DEFAULT_MAPPING, metadata: metadataOf(SCHEMA) });
    expect(batch.rows).toEqual([{ order_id: 1n, amount: 200n, country: 'DE' }]);
  });
});
