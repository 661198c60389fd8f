/**
 * The bad-input corpus: a table schema, builders for ESM records (a good one per offset, a bad one
 * at offset 2 with some part replaced), and the cases with the stage and reason each must get.
 */
import type { FailedStage } from '../../../functions/core/records/dead-letters.js';
import type { Schema } from '../../../functions/core/spec/types.js';

export const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  'identifier-field-ids': [1],
  fields: [
    { id: 1, name: 'order_id', required: true, type: 'long' },
    { id: 2, name: 'amount', required: true, type: 'decimal(10, 2)' },
    { id: 3, name: 'country', required: true, type: 'string' },
    { id: 4, name: 'qty', required: false, type: 'int' },
    { id: 5, name: 'weight', required: false, type: 'double' },
    { id: 6, name: 'created', required: false, type: 'timestamptz' },
    { id: 7, name: 'day', required: false, type: 'date' },
    { id: 8, name: 'ref', required: false, type: 'uuid' },
    { id: 9, name: 'blob', required: false, type: 'binary' },
    {
      id: 10,
      name: 'shipping',
      required: false,
      type: { type: 'struct', fields: [{ id: 11, name: 'city', required: false, type: 'string' }] },
    },
    {
      id: 12,
      name: 'lines',
      required: false,
      type: {
        type: 'list',
        'element-id': 13,
        'element-required': true,
        element: {
          type: 'struct',
          fields: [
            { id: 14, name: 'sku', required: true, type: 'string' },
            { id: 15, name: 'qty', required: true, type: 'int' },
          ],
        },
      },
    },
  ],
};

export const b64 = (data: string | Uint8Array) => Buffer.from(data).toString('base64');
export const goodValue = (offset: number) => ({
  order_id: 100 + offset,
  amount: '12.34',
  country: 'DE',
  qty: 2,
  weight: 1.5,
  created: '2026-11-20T10:00:00Z',
  day: '2026-11-20',
  ref: 'f79c3e09-677c-4bbd-a479-3f349cb785e7',
  blob: b64('ok'),
  shipping: { city: 'Berlin' },
  lines: [{ sku: 'a', qty: 1 }],
});

export type EsmRecord = Record<string, unknown>;

export function esmRecord(topic: string, offset: number, over: EsmRecord = {}): EsmRecord {
  return {
    topic,
    partition: 0,
    offset,
    timestamp: 1_795_168_800_000 + offset,
    timestampType: 'CREATE_TIME',
    key: b64(`k${offset}`),
    value: b64(JSON.stringify(goodValue(offset))),
    headers: [{ source: [...Buffer.from('test')] }],
    ...over,
  };
}

/** The bad record: a good one (offset 2) with some parts replaced. */
export type Bad = (topic: string) => EsmRecord;
const value =
  (v: unknown): Bad =>
  (topic) =>
    esmRecord(topic, 2, { value: b64(JSON.stringify(v)) });
const text =
  (t: string): Bad =>
  (topic) =>
    esmRecord(topic, 2, { value: b64(t) });
const bytes =
  (b: Uint8Array): Bad =>
  (topic) =>
    esmRecord(topic, 2, { value: b64(b) });
const field = (name: string, v: unknown): Bad => value({ ...goodValue(2), [name]: v });
const raw =
  (over: EsmRecord): Bad =>
  (topic) =>
    esmRecord(topic, 2, over);

function deeplyNested(levels: number): string {
  return `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
}

export interface Case {
  kind: string;
  bad: Bad;
  stage: FailedStage;
  error: RegExp;
}

export const CASES: Case[] = [
  {
    kind: 'malformed JSON (truncated)',
    bad: text('{"order_id": 102, "amount": '),
    stage: 'decode',
    error: /value is not valid JSON/,
  },
  {
    kind: 'JSON with trailing garbage',
    bad: text('{"order_id": 102} }'),
    stage: 'decode',
    error: /value is not valid JSON/,
  },
  { kind: 'empty value bytes', bad: text(''), stage: 'decode', error: /value is not valid JSON/ },
  {
    kind: 'raw control character in a JSON string',
    bad: text('{"country": "D\u0001E"}'),
    stage: 'decode',
    error: /value is not valid JSON/,
  },
  {
    kind: 'NaN literal (not JSON)',
    bad: text('{"order_id": 102, "weight": NaN}'),
    stage: 'decode',
    error: /value is not valid JSON/,
  },
  {
    kind: 'Infinity literal (not JSON)',
    bad: text('{"order_id": 102, "weight": Infinity}'),
    stage: 'decode',
    error: /value is not valid JSON/,
  },
  {
    kind: 'invalid UTF-8',
    bad: bytes(Uint8Array.of(0x7b, 0x22, 0xc3, 0x28, 0x22, 0x7d)),
    stage: 'decode',
    error: /value is not valid UTF-8/,
  },
  // Until the formats decoder is wired, a Confluent-framed payload is judged as JSON (its id 0x3e7 is not UTF-8).
  {
    kind: 'unknown schema id (Confluent magic byte, id 999)',
    bad: bytes(Uint8Array.of(0, 0, 0, 3, 0xe7, 2, 4, 6)),
    stage: 'decode',
    error: /value is not valid UTF-8/,
  },
  {
    kind: 'invalid base64 in the value',
    bad: raw({ value: 'not*base64!' }),
    stage: 'decode',
    error: /value is not valid base64/,
  },
  {
    kind: 'base64 of an impossible length',
    bad: raw({ value: 'abcde' }),
    stage: 'decode',
    error: /value is not valid base64 \(bad length\)/,
  },
  {
    kind: 'invalid base64 in the key',
    bad: raw({ key: '%%%' }),
    stage: 'decode',
    error: /key is not valid base64/,
  },
  {
    kind: 'value that is not a string',
    bad: raw({ value: 42 }),
    stage: 'decode',
    error: /value must be a base64 string/,
  },
  {
    kind: 'key that is not a string',
    bad: raw({ key: { id: 1 } }),
    stage: 'decode',
    error: /key must be a base64 string/,
  },
  {
    kind: 'header value that is not a byte array',
    bad: raw({ headers: [{ h: 'text' }] }),
    stage: 'decode',
    error: /header 'h' is not an array of bytes/,
  },
  {
    kind: 'header byte out of range',
    bad: raw({ headers: [{ h: [1, 300] }] }),
    stage: 'decode',
    error: /header 'h' is not an array of bytes/,
  },
  {
    kind: 'headers that are not an array',
    bad: raw({ headers: { h: [1] } }),
    stage: 'decode',
    error: /headers must be an array/,
  },
  {
    kind: 'header entry that is not an object',
    bad: raw({ headers: [null] }),
    stage: 'decode',
    error: /each header must be an object/,
  },
  {
    kind: 'negative partition',
    bad: raw({ partition: -3 }),
    stage: 'decode',
    error: /partition -3 is not a Kafka partition number \(an integer from 0 to 2147483647\)/,
  },
  {
    kind: 'tombstone (null value) in an append table',
    bad: raw({ value: null }),
    stage: 'map',
    error: /value is null \(a tombstone\)/,
  },
  {
    kind: 'value is a JSON array',
    bad: value([1, 2, 3]),
    stage: 'map',
    error: /value is not an object \(an array\); map it with "value": \{ "column": \.\./,
  },
  {
    kind: 'value is a JSON number',
    bad: text('12'),
    stage: 'map',
    error: /value is not an object \(number 12\); map it with "value": \{ "column": \./,
  },
  {
    kind: 'text where a long is expected',
    bad: field('order_id', 'A-102'),
    stage: 'schema',
    error: /order_id: the string "A-102" cannot go into the long column \(text → lo/,
  },
  {
    kind: 'number where text is expected',
    bad: field('country', 49),
    stage: 'schema',
    error: /country: number 49 cannot go into the string column \(a number → string/,
  },
  {
    kind: 'object where text is expected',
    bad: field('country', { code: 'DE' }),
    stage: 'schema',
    error: /country: an object cannot go into the string column \(an object → strin/,
  },
  {
    kind: 'array where a struct is expected',
    bad: field('shipping', ['Berlin']),
    stage: 'schema',
    error: /shipping: an array cannot go into a struct column \(a list → struct is /,
  },
  {
    kind: 'boolean where an int is expected',
    bad: field('qty', true),
    stage: 'schema',
    error: /qty: boolean true cannot go into the int column \(a boolean → int is no/,
  },
  {
    kind: 'wrong type inside a list element',
    bad: field('lines', [
      { sku: 'a', qty: 1 },
      { sku: 'b', qty: 'two' },
    ]),
    stage: 'schema',
    error: /lines\[1\]\.qty: the string "two" cannot go into the int column \(text → i/,
  },
  {
    kind: 'integer beyond the long range',
    bad: text('{"order_id": 18446744073709551616, "amount": "1.00", "country": "DE"}'),
    stage: 'schema',
    error: /order_id: 18446744073709551616 is beyond the long range \(long cannot b/,
  },
  {
    kind: 'out-of-range number for an int (beyond long too)',
    bad: field('qty', 1e20),
    stage: 'schema',
    error: /qty: 100000000000000000000 is beyond the long range \(long cannot be wi/,
  },
  {
    kind: 'fraction where a long is expected',
    bad: field('order_id', 102.5),
    stage: 'schema',
    error: /order_id: number 102\.5 is not an integer \(long → double is not a compa/,
  },
  {
    kind: 'NaN text where a decimal is expected',
    bad: field('amount', 'NaN'),
    stage: 'map',
    error: /amount: 'NaN' is not a decimal number/,
  },
  {
    kind: 'Infinity text where a long is expected',
    bad: field('order_id', 'Infinity'),
    stage: 'schema',
    error: /order_id: the string "Infinity" cannot go into the long column \(text →/,
  },
  {
    kind: 'number too large for a double (1e400)',
    bad: text('{"order_id": 102, "amount": "1.00", "country": "DE", "weight": 1e400}'),
    stage: 'map',
    error: /weight: 1e400 is out of range for a double/,
  },
  {
    kind: 'decimal with more scale than the column',
    bad: field('amount', 1.234),
    stage: 'schema',
    error: /amount: number 1\.234 has 3 decimal places, the column is decimal\(10, 2/,
  },
  {
    kind: 'decimal beyond any precision (1e40)',
    bad: field('amount', 1e40),
    stage: 'schema',
    error: /amount: number 1e\+40 needs 43 digits, more than a decimal holds \(38\)/,
  },
  {
    kind: 'timestamp text beyond the timestamp range',
    bad: field('created', '+999999-01-01T00:00:00Z'),
    stage: 'map',
    error: /created: '\+999999-01-01T00:00:00Z' is out of the timestamp range/,
  },
  {
    kind: 'epoch millis beyond the timestamp range',
    bad: field('created', 9e18),
    stage: 'map',
    error: /created: 9000000000000000000 ms is out of the timestamp range/,
  },
  {
    kind: 'epoch millis beyond the long range',
    bad: field('created', 9.3e18),
    stage: 'map',
    error: /created: 9300000000000000000 is out of range for a long/,
  },
  {
    kind: 'impossible date',
    bad: field('day', '2026-02-30'),
    stage: 'map',
    error: /day: '2026-02-30' is not a valid date/,
  },
  {
    kind: 'timestamp that is not ISO-8601',
    bad: field('created', 'yesterday'),
    stage: 'map',
    error: /created: 'yesterday' is not an ISO-8601 timestamp/,
  },
  {
    kind: 'invalid uuid',
    bad: field('ref', 'not-a-uuid'),
    stage: 'map',
    error: /ref: 'not-a-uuid' is not a uuid/,
  },
  {
    kind: 'invalid base64 inside a binary field',
    bad: field('blob', '***'),
    stage: 'map',
    error: /blob: expected base64 bytes/,
  },
  {
    kind: 'unpaired UTF-16 surrogate in text',
    bad: text('{"order_id": 102, "amount": "1.00", "country": "\\ud800"}'),
    stage: 'map',
    error: /country: the string holds an unpaired UTF-16 surrogate/,
  },
  {
    kind: 'required identifier field missing',
    bad: value({ amount: '1.00', country: 'DE' }),
    stage: 'schema',
    error: /order_id: is null or missing, but it is an identifier column \(identifi/,
  },
  {
    kind: 'deeply nested value (100,000 levels)',
    bad: text(`{"order_id": 102, "amount": "1.00", "country": ${deeplyNested(100_000)}}`),
    stage: 'schema',
    error: /country: an object cannot go into the string column \(an object → strin/,
  },
  {
    kind: 'huge record (3 MB) with a wrong type',
    bad: field('order_id', 'x'.repeat(3 * 1024 * 1024)),
    stage: 'schema',
    error: /order_id: the string "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…" canno/,
  },
];
