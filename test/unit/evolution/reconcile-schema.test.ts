import { describe, expect, it } from 'vitest';
import { SchemaEvolutionError } from '../../../functions/core/errors.js';
import { JsonNumberText } from '../../../functions/core/records/json-to-value.js';
import {
  describeChanges,
  reconcileSchema,
  reconciliationStillApplies,
} from '../../../functions/core/mapping/evolution/reconcile-schema.js';
import { withKafkaLineage } from '../../../functions/core/records/kafka-lineage.js';
import { parseSchema } from '../../../functions/core/spec/schema.js';
import { findFieldByName, maxFieldId } from '../../../functions/core/spec/schema-index.js';
import type { Schema, TableMetadata } from '../../../functions/core/spec/types.js';
import { metadataOf } from '../mapping/support.js';

const ORDERS: Schema = {
  type: 'struct',
  'schema-id': 0,
  'identifier-field-ids': [1],
  fields: [
    { id: 1, name: 'order_id', required: true, type: 'long' },
    { id: 2, name: 'amount', required: true, type: 'decimal(10, 2)' },
    { id: 3, name: 'country', required: true, type: 'string' },
    { id: 4, name: 'qty', required: false, type: 'int' },
    { id: 5, name: 'weight', required: false, type: 'float' },
    {
      id: 6,
      name: 'shipping',
      required: false,
      type: { type: 'struct', fields: [{ id: 7, name: 'city', required: false, type: 'string' }] },
    },
    {
      id: 8,
      name: 'lines',
      required: false,
      type: {
        type: 'list',
        'element-id': 9,
        'element-required': true,
        element: { type: 'struct', fields: [{ id: 10, name: 'sku', required: true, type: 'string' }] },
      },
    },
    {
      id: 11,
      name: 'attrs',
      required: false,
      type: {
        type: 'map',
        'key-id': 12,
        key: 'string',
        'value-id': 13,
        value: 'long',
        'value-required': true,
      },
    },
  ],
};

const base = () => metadataOf(ORDERS);
const good = { order_id: 1, amount: '12.50', country: 'DE' };
const field = (schema: Schema, path: string) => findFieldByName(schema, path)!;

describe('reconcileSchema', () => {
  it('widens a decimal, makes a required column optional and adds a column — in one batch', () => {
    const md = base();
    const rec = reconcileSchema(md, [
      good,
      { order_id: 2, amount: '1234567890.12', country: 'FR' }, // 12 digits
      { order_id: 3, amount: '5.00', country: null, channel: 'web' },
      { order_id: 4, amount: 7, channel: 'app' }, // country missing
    ]);
    expect(rec.rejected.size).toBe(0);
    expect(rec.changed).toBe(true);
    expect(field(rec.schema, 'amount')).toMatchObject({ id: 2, type: 'decimal(12, 2)', required: true });
    expect(field(rec.schema, 'country')).toMatchObject({ id: 3, required: false });
    expect(field(rec.schema, 'channel')).toEqual({
      id: 14,
      name: 'channel',
      required: false,
      type: 'string',
    });
    expect(rec.schema['schema-id']).toBe(1);
    expect(rec.schema['identifier-field-ids']).toEqual([1]);
    expect(rec.lastColumnId).toBe(14);
    expect(rec.updates).toEqual([
      { action: 'add-schema', schema: rec.schema, 'last-column-id': 14 },
      { action: 'set-current-schema', 'schema-id': 1 },
    ]);
    expect(rec.requirements).toEqual([
      { type: 'assert-current-schema-id', 'current-schema-id': 0 },
      { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': 13 },
    ]);
    expect(describeChanges(rec.changes)).toBe(
      'amount: decimal(10, 2) → decimal(12, 2); country: required → optional; add channel (string, id 14)',
    );
    // The schema reads back as a valid Iceberg schema (unique ids, valid types).
    expect(parseSchema(rec.schema)).toEqual(rec.schema);
    // The base is not touched.
    expect(md.schemas[0]).toEqual(ORDERS);
  });

  it('needs nothing for records that fit', () => {
    const rec = reconcileSchema(base(), [
      good,
      { ...good, qty: 2 ** 31 - 1, weight: 1.5, amount: 99999999.99 },
    ]);
    expect(rec.changed).toBe(false);
    expect(rec.updates).toEqual([]);
    expect(rec.requirements).toEqual([]);
    expect(rec.schema.fields).toEqual(ORDERS.fields);
  });

  it('promotes int → long and float → double only when a value needs it', () => {
    const rec = reconcileSchema(base(), [
      { ...good, qty: 2 ** 31 },
      { ...good, weight: 1e39 },
      { ...good, qty: new JsonNumberText('-9223372036854775808') },
    ]);
    expect(rec.rejected.size).toBe(0);
    expect(field(rec.schema, 'qty').type).toBe('long');
    expect(field(rec.schema, 'weight').type).toBe('double');
    expect(rec.changes.map((c) => c.kind)).toEqual(['promote', 'promote']);
  });

  it('adds nested fields — in structs, list elements and new structs — with fresh ids in order', () => {
    const rec = reconcileSchema(base(), [
      {
        ...good,
        shipping: { city: 'Paris', zip: '75001', geo: { lat: 48.8, lon: 2.3 } },
        lines: [
          { sku: 'a', qty: 1 },
          { sku: 'b', qty: 2.5, tags: ['x', null] },
        ],
        payment: { method: 'card', cents: 100, ok: true, raw: new Uint8Array([1]) },
      },
    ]);
    expect(rec.rejected).toEqual(new Map());
    const s = rec.schema;
    expect(field(s, 'shipping.zip')).toMatchObject({ id: 14, type: 'string', required: false });
    expect(field(s, 'shipping.geo')).toMatchObject({
      id: 15,
      type: {
        type: 'struct',
        fields: [
          { id: 16, name: 'lat', required: false, type: 'double' },
          { id: 17, name: 'lon', required: false, type: 'double' },
        ],
      },
    });
    const line = (
      field(s, 'lines').type as { element: { fields: { name: string; id: number; type: unknown }[] } }
    ).element;
    // qty was inferred long from the first element, then widened to double by 2.5 (a column new in this batch).
    expect(line.fields.find((f) => f.name === 'qty')).toMatchObject({ id: 18, type: 'double' });
    expect(line.fields.find((f) => f.name === 'tags')).toMatchObject({
      id: 19,
      type: { type: 'list', 'element-id': 20, 'element-required': false, element: 'string' },
    });
    expect(field(s, 'payment')).toMatchObject({
      id: 21,
      type: {
        type: 'struct',
        fields: [
          { id: 22, name: 'method', type: 'string' },
          { id: 23, name: 'cents', type: 'long' },
          { id: 24, name: 'ok', type: 'boolean' },
          { id: 25, name: 'raw', type: 'binary' },
        ],
      },
    });
    expect(rec.lastColumnId).toBe(25);
    expect(maxFieldId(s)).toBe(25);
    expect(parseSchema(s)).toEqual(s);
  });

  it('makes list elements and map values optional when a null arrives', () => {
    const rec = reconcileSchema(base(), [{ ...good, lines: [null], attrs: { a: 1, b: null } }]);
    const lines = field(rec.schema, 'lines').type as { 'element-required': boolean };
    const attrs = field(rec.schema, 'attrs').type as { 'value-required': boolean };
    expect(lines['element-required']).toBe(false);
    expect(attrs['value-required']).toBe(false);
  });

  it('adds no column for values that carry no type yet', () => {
    const rec = reconcileSchema(base(), [{ ...good, a: null, b: {}, c: [], d: [null], e: { f: null } }]);
    expect(rec.changed).toBe(false);
  });

  it.each([
    [
      { ...good, country: 5 },
      'country: number 5 cannot go into the string column (a number → string is not a compatible change)',
    ],
    [
      { ...good, order_id: 'A-1' },
      'order_id: the string "A-1" cannot go into the long column (text → long is not a compatible change)',
    ],
    [{ ...good, qty: 1.5 }, 'qty: number 1.5 is not an integer (int → double is not a compatible change)'],
    [{ ...good, order_id: 1e20 }, 'order_id: 100000000000000000000 is beyond the long range'],
    [
      { ...good, amount: '1.234' },
      'amount: the string "1.234" has 3 decimal places, the column is decimal(10, 2) (a scale change is not compatible',
    ],
    [
      { ...good, amount: new JsonNumberText('1e40') },
      'amount: the number 1e40 needs 43 digits, more than a decimal holds (38)',
    ],
    [{ ...good, order_id: null }, 'order_id: is null or missing, but it is an identifier column'],
    [
      { ...good, shipping: 'Paris' },
      'shipping: the string "Paris" cannot go into a struct column (text → struct',
    ],
    [{ ...good, lines: { sku: 'a' } }, 'lines: an object cannot go into a list column'],
    [{ ...good, lines: [{ sku: 1 }] }, 'lines[0].sku: number 1 cannot go into the string column'],
    [{ ...good, attrs: { a: 'x' } }, 'attrs.a: the string "x" cannot go into the long column'],
    [{ ...good, 'a.b': 1 }, "a.b: field name 'a.b' contains '.'"],
    [{ ...good, '': 1 }, ': a field with an empty name cannot become a column'],
    [
      { ...good, big: new JsonNumberText('9223372036854775808') },
      'big: integer 9223372036854775808 is beyond the long range',
    ],
    [
      { ...good, mixed: [1, 'a'] },
      'mixed[1]: values of different kinds (long and string) for one new column',
    ],
    [{ ...good, when: new Date(0) }, 'when: an object has no Iceberg type'],
  ])('rejects %j with the reason', (value, reason) => {
    const rec = reconcileSchema(base(), [good, value, good]);
    expect(rec.rejected.size).toBe(1);
    expect(rec.rejected.get(1)).toContain(reason);
    expect(rec.changed).toBe(false);
  });

  it('rejects values nested too deep for a new column instead of overflowing the stack', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 5000; i++) deep = { n: deep };
    const rec = reconcileSchema(base(), [{ ...good, deep }]);
    expect(rec.rejected.get(0)).toContain('nested deeper than 64 levels');
  });

  it('undoes a rejected record completely: its compatible changes and its ids', () => {
    const rec = reconcileSchema(base(), [
      { ...good, channel: 'web', country: null, amount: '123456789012.00', qty: 'many' },
      { ...good, promo: 'x' },
    ]);
    expect(rec.rejected.get(0)).toContain('qty: the string "many" cannot go into the int column');
    expect(rec.schema.fields.find((f) => f.name === 'channel')).toBeUndefined();
    expect(field(rec.schema, 'country').required).toBe(true);
    expect(field(rec.schema, 'amount').type).toBe('decimal(10, 2)');
    expect(field(rec.schema, 'promo').id).toBe(14);
  });

  it('lets the first record decide a new column type and rejects later ones that conflict', () => {
    const rec = reconcileSchema(base(), [
      { ...good, channel: 'web' },
      { ...good, channel: 7 },
      { ...good, score: 1 },
      { ...good, score: 1.25 },
      { ...good, score: 'high' },
    ]);
    expect(field(rec.schema, 'channel').type).toBe('string');
    expect(field(rec.schema, 'score').type).toBe('double');
    expect([...rec.rejected.keys()]).toEqual([1, 4]);
    expect(rec.rejected.get(1)).toContain('values of different kinds (string and long) for one new column');
  });

  it('uses type hints for new columns and promotes a column a hint widens', () => {
    const rec = reconcileSchema(base(), [{ ...good, created: '20/11/2026', qty: '5' }], {
      typeHints: new Map([
        ['created', 'timestamptz'],
        ['qty', 'long'],
      ]),
    });
    expect(rec.rejected.size).toBe(0);
    expect(field(rec.schema, 'created').type).toBe('timestamptz');
    expect(field(rec.schema, 'qty').type).toBe('long');
    const bad = reconcileSchema(base(), [{ ...good, country: 'DE' }], {
      typeHints: new Map([['country', 'long']]),
    });
    expect(bad.rejected.get(0)).toContain('country: the mapping makes it a long, but the column is string');
  });

  it('leaves the _kafka lineage struct alone', () => {
    const md = metadataOf(withKafkaLineage(ORDERS));
    const rec = reconcileSchema(md, [good]);
    expect(rec.changed).toBe(false);
    const added = reconcileSchema(md, [{ ...good, channel: 'web' }]);
    expect(field(added.schema, 'channel').id).toBe(md['last-column-id'] + 1);
  });

  it('policy dlq: never changes the schema, rejects records that would need a change', () => {
    const rec = reconcileSchema(
      base(),
      [good, { ...good, channel: 'web' }, { ...good, country: null }, { ...good, qty: 's' }],
      {
        policy: 'dlq',
      },
    );
    expect(rec.changed).toBe(false);
    expect([...rec.rejected.keys()]).toEqual([1, 2, 3]);
    expect(rec.rejected.get(1)).toBe(
      'needs a schema change (channel: new column (string)), but schema evolution is off for this table (policy dlq)',
    );
    expect(rec.rejected.get(2)).toContain('country: required → optional');
  });

  it('policy block: fails the whole batch with a non-retryable SchemaEvolutionError', () => {
    const run = () =>
      reconcileSchema(
        base(),
        [
          { ...good, channel: 'web' },
          { ...good, country: 5 },
        ],
        {
          policy: 'block',
          label: (i) => `orders-0@${100 + i}`,
        },
      );
    expect(run).toThrow(SchemaEvolutionError);
    expect(run).toThrow(
      '1 record(s) need an incompatible schema change (policy block): orders-0@101: country: number 5',
    );
    try {
      run();
    } catch (error) {
      expect((error as SchemaEvolutionError).retryable).toBe(false);
    }
    // Compatible changes alone evolve under block.
    expect(reconcileSchema(base(), [{ ...good, channel: 'web' }], { policy: 'block' }).changed).toBe(true);
  });

  it('draws new ids above every schema the table ever had, and ids after the highest schema id', () => {
    const md: TableMetadata = structuredClone(base());
    md.schemas.push({
      ...ORDERS,
      'schema-id': 7,
      fields: [...ORDERS.fields, { id: 30, name: 'old', required: false, type: 'string' }],
    });
    md['last-column-id'] = 30;
    const rec = reconcileSchema(md, [{ ...good, channel: 'web' }]);
    expect(field(rec.schema, 'channel').id).toBe(31);
    expect(rec.schema['schema-id']).toBe(8);
  });

  it('says when a reconciliation no longer applies to a base', () => {
    const md = base();
    const rec = reconcileSchema(md, [{ ...good, channel: 'web' }]);
    expect(reconciliationStillApplies(md, rec)).toBe(true);
    const moved = structuredClone(md);
    moved['current-schema-id'] = 1;
    moved['last-column-id'] = 14;
    expect(reconciliationStillApplies(moved, rec)).toBe(false);
    // Without a change, rows written with an older schema stay valid: ids are never reused.
    expect(reconciliationStillApplies(moved, reconcileSchema(md, [good]))).toBe(true);
  });
});
