/**
 * Generators for the fast-path tests: schemas of every primitive type, nested structs and lists, and
 * values built to sit on every boundary (ranges, -0, scales, precisions, nulls, unknown keys).
 */
import fc from 'fast-check';
import { jsonToValue } from '../../../functions/core/records/json-to-value.js';
import type { IcebergType, Schema, StructField, StructType } from '../../../functions/core/spec/types.js';

const PRIMITIVES: IcebergType[] = [
  'boolean',
  'int',
  'long',
  'float',
  'double',
  'decimal(9, 2)',
  'decimal(5, 0)',
  'decimal(38, 10)',
  'string',
  'date',
  'time',
  'timestamp',
  'timestamptz',
  'uuid',
  'binary',
  'fixed[4]',
];

/** Values near every boundary the conversion or reconciliation judges. */
const SCALAR_VALUES: unknown[] = [
  true,
  false,
  0,
  -0,
  1,
  -1,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31),
  -(2 ** 31) - 1,
  2 ** 53 - 1,
  2 ** 53,
  1e21,
  -1e21,
  1.5,
  0.1,
  3.4e38,
  3.5e38,
  1e-50,
  123.45,
  1234567.89,
  12345678.9,
  99999,
  100000,
  1_795_168_800_123,
  'NaN',
  'Infinity',
  '',
  'x',
  '\ud800',
  'é',
  '12.30',
  '12.345',
  '1e3',
  '-0.5',
  '0000123.40',
  '9999999.99',
  '10000000.00',
  '2026-11-23T14:05:09.123Z',
  '2026-11-23T14:05:09+05:30',
  // offsets on and past ±18:00, minutes past 59 (issue 20, item 9)
  '2026-11-23T14:05:09+18:00',
  '2026-11-23T14:05:09+25:00',
  '2026-11-23T14:05:09-99:99',
  '2026-11-23T14:05:09+2500',
  '2026-11-23T14:05:09+00:00',
  // five-digit years, with and without the sign ISO requires (item 13a)
  '10000-01-01',
  '+10000-01-01',
  '10000-01-01T00:00:00Z',
  // numbers as strings for float/double columns (item 13c), decimals that underflow (item 10)
  '1.5',
  '-0.0',
  ' 2.5 ',
  '1e400',
  '123e-400',
  '0e-400',
  '2026-11-23 14:05:09',
  '2026-02-30T00:00:00Z',
  '2026-11-23',
  '14:05:09',
  '25:00:00',
  '123e4567-e89b-12d3-a456-426614174000',
  '123E4567-E89B-12D3-A456-426614174000',
  'AAECAw==',
  'AAEC',
  'not base64!',
  new Uint8Array([1, 2, 3, 4]),
  new Uint8Array([1]),
  null,
];

// `constructor` and `toString`: names Object.prototype has, which must read as missing when absent.
const fieldName = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'constructor', 'toString');

export function typeArb(depth: number): fc.Arbitrary<IcebergType> {
  const primitive = fc.constantFrom(...PRIMITIVES);
  if (depth >= 2) return primitive;
  return fc.oneof(
    { weight: 6, arbitrary: primitive },
    { weight: 1, arbitrary: structArb(depth + 1) },
    {
      weight: 1,
      arbitrary: fc.record({
        type: fc.constant('list' as const),
        'element-id': fc.constant(0),
        'element-required': fc.boolean(),
        element: typeArb(depth + 1),
      }),
    },
  );
}

export function structArb(depth: number): fc.Arbitrary<StructType> {
  return fc
    .uniqueArray(fc.record({ name: fieldName, required: fc.boolean(), type: typeArb(depth) }), {
      minLength: 1,
      maxLength: 4,
      selector: (f) => f.name,
    })
    .map((fields) => ({ type: 'struct' as const, fields: fields.map((f) => ({ id: 0, ...f })) }));
}

/** Fresh field ids everywhere (the generators leave 0). */
export function numbered(struct: StructType): Schema {
  let next = 1;
  const visit = (type: IcebergType): IcebergType => {
    if (typeof type === 'string') return type;
    if (type.type === 'struct') return { ...type, fields: type.fields.map(field) };
    if (type.type === 'list') return { ...type, 'element-id': next++, element: visit(type.element) };
    return type;
  };
  const field = (f: StructField): StructField => {
    const id = next++;
    return { ...f, id, type: visit(f.type) };
  };
  return { type: 'struct', 'schema-id': 0, fields: struct.fields.map(field) };
}

/** The boundary values the general conversion accepts for a primitive type. */
export function goodValues(type: IcebergType): unknown[] {
  return SCALAR_VALUES.filter((v) => {
    if (v === null) return false;
    try {
      jsonToValue(type, v, '');
      return true;
    } catch {
      return false;
    }
  });
}

/** A value for a type: mostly of its shape, sometimes anything (to hit the refusals). */
export function valueArb(type: IcebergType, depth = 0): fc.Arbitrary<unknown> {
  const scalar = fc.constantFrom(...SCALAR_VALUES);
  if (typeof type === 'string') {
    const good = goodValues(type);
    return good.length === 0
      ? scalar
      : fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...good) }, { weight: 2, arbitrary: scalar });
  }
  if (depth > 3) return scalar;
  if (type.type === 'list') {
    return fc.oneof(
      { weight: 5, arbitrary: fc.array(valueArb(type.element, depth + 1), { maxLength: 3 }) },
      { weight: 1, arbitrary: scalar },
    );
  }
  if (type.type === 'struct') {
    return fc.oneof({ weight: 5, arbitrary: objectArb(type, depth + 1) }, { weight: 1, arbitrary: scalar });
  }
  return scalar;
}

export function objectArb(type: StructType, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const entries = type.fields.map((f) =>
    fc.option(valueArb(f.type, depth), { nil: undefined, freq: 6 }).map((v) => [f.name, v] as const),
  );
  return fc
    .tuple(
      fc.tuple(...entries),
      fc.oneof(
        { weight: 6, arbitrary: fc.constant(null) },
        { weight: 1, arbitrary: fc.constantFrom('extra', 'a', 'zz') },
      ),
      fc.boolean(),
    )
    .map(([pairs, extra, extraNull]) => {
      const obj: Record<string, unknown> = {};
      for (const [k, v] of pairs) if (v !== undefined) obj[k] = v;
      if (extra !== null && !(extra in obj)) obj[extra] = extraNull ? null : 'new';
      return obj;
    });
}

export const schemaAndValues = structArb(0)
  .map(numbered)
  .chain((schema) =>
    fc.tuple(fc.constant(schema), fc.array(objectArb(schema), { minLength: 1, maxLength: 6 })),
  );

export function plain(value: unknown): unknown {
  // Distinguish -0 from 0 and bigints from numbers in comparisons.
  return JSON.parse(
    JSON.stringify(value, (_k, v) =>
      typeof v === 'bigint'
        ? `${v}n`
        : Object.is(v, -0)
          ? '-0'
          : v instanceof Uint8Array
            ? `bytes:${[...v]}`
            : v instanceof Map
              ? [...v]
              : v,
    ),
  );
}
