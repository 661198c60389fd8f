/** Every Iceberg type, extremes included, with nulls at every level: shared by the writer and reader tests. */
import { randomUUID } from 'node:crypto';
import type { Row, Value } from '../../../functions/core/spec/types.js';
import { schemaOf } from './parquet-test-helpers.js';

export const allTypesSchema = schemaOf([
  { id: 1, name: 'b', required: false, type: 'boolean' },
  { id: 2, name: 'i', required: false, type: 'int' },
  { id: 3, name: 'l', required: true, type: 'long' },
  { id: 4, name: 'f', required: false, type: 'float' },
  { id: 5, name: 'd', required: false, type: 'double' },
  { id: 6, name: 'dt', required: false, type: 'date' },
  { id: 7, name: 't', required: false, type: 'time' },
  { id: 8, name: 'ts', required: false, type: 'timestamp' },
  { id: 9, name: 'tstz', required: false, type: 'timestamptz' },
  { id: 10, name: 's', required: false, type: 'string' },
  { id: 11, name: 'u', required: false, type: 'uuid' },
  { id: 12, name: 'fx', required: false, type: 'fixed[5]' },
  { id: 13, name: 'bin', required: false, type: 'binary' },
  { id: 14, name: 'dec9', required: false, type: 'decimal(9, 2)' },
  { id: 15, name: 'dec18', required: false, type: 'decimal(18, 6)' },
  { id: 16, name: 'dec38', required: false, type: 'decimal(38, 10)' },
  {
    id: 17,
    name: 'st',
    required: false,
    type: {
      type: 'struct',
      fields: [
        { id: 18, name: 'a', required: true, type: 'int' },
        {
          id: 19,
          name: 'inner',
          required: false,
          type: { type: 'struct', fields: [{ id: 20, name: 'z', required: false, type: 'string' }] },
        },
      ],
    },
  },
  {
    id: 21,
    name: 'tags',
    required: false,
    type: { type: 'list', 'element-id': 22, element: 'long', 'element-required': false },
  },
  {
    id: 23,
    name: 'attrs',
    required: false,
    type: {
      type: 'map',
      'key-id': 24,
      key: 'string',
      'value-id': 25,
      value: 'double',
      'value-required': false,
    },
  },
  {
    id: 26,
    name: 'points',
    required: false,
    type: {
      type: 'list',
      'element-id': 27,
      'element-required': true,
      element: {
        type: 'struct',
        fields: [
          { id: 28, name: 'x', required: true, type: 'double' },
          { id: 29, name: 'y', required: false, type: 'double' },
        ],
      },
    },
  },
]);

const bytes = (...values: number[]) => Uint8Array.from(values);
const nulls = Object.fromEntries(allTypesSchema.fields.map((f) => [f.name, null]));

export const allTypesRows: Row[] = [
  {
    b: true,
    i: -2147483648,
    l: -(2n ** 63n),
    f: 3.4028234663852886e38,
    d: -1.7976931348623157e308,
    dt: -719162, // 0001-01-01
    t: 0n,
    ts: -62135596800000000n,
    tstz: -62135596800000000n,
    s: '',
    u: '00000000-0000-0000-0000-000000000000',
    fx: bytes(0, 0, 0, 0, 0),
    bin: new Uint8Array(0),
    dec9: -999999999n,
    dec18: -(10n ** 18n - 1n),
    dec38: -(10n ** 38n - 1n),
    st: { a: -1, inner: null },
    tags: [],
    attrs: new Map(),
    points: [],
  },
  {
    b: false,
    i: 2147483647,
    l: 2n ** 63n - 1n,
    f: -0.25,
    d: 5e-324,
    dt: 2932896, // 9999-12-31
    t: 86399999999n,
    ts: 253402300799999999n,
    tstz: 253402300799999999n,
    s: 'héllo 日本 😀',
    u: 'ffffffff-ffff-ffff-ffff-ffffffffffff',
    fx: bytes(255, 254, 253, 252, 251),
    bin: bytes(0, 1, 2, 255),
    dec9: 999999999n,
    dec18: 10n ** 18n - 1n,
    dec38: 10n ** 38n - 1n,
    st: { a: 7, inner: { z: 'deep' } },
    tags: [1n, null, -5n],
    attrs: new Map<Value, Value>([
      ['k1', 1.5],
      ['k2', null],
    ]),
    points: [
      { x: 1, y: null },
      { x: 2.5, y: -3 },
    ],
  },
  { ...nulls, l: 0n },
  {
    b: null,
    i: 42,
    l: 1234567890123n,
    f: 1.5,
    d: Math.PI,
    dt: 20000,
    t: 45296789012n,
    ts: 1700000000123456n,
    tstz: 1700000000123457n,
    s: 'plain',
    u: randomUUID(),
    fx: bytes(1, 2, 3, 4, 5),
    bin: bytes(9),
    dec9: 12345n,
    dec18: -1n,
    dec38: 123456789012345678901234567890n,
    st: { a: 0, inner: { z: null } },
    tags: [7n],
    attrs: new Map<Value, Value>([['only', -0.5]]),
    points: null,
  },
];
