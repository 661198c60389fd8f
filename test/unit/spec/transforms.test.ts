import { readFile } from 'node:fs/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import { decimalParams } from '../../../functions/core/spec/conversions.js';
import {
  applyTransform,
  canTransform,
  hashValue,
  parseTransform,
  partitionPath,
} from '../../../functions/core/spec/transforms.js';
import type {
  IcebergType,
  PartitionSpec,
  Schema,
  Transform,
  Value,
} from '../../../functions/core/spec/types.js';

interface Vector {
  type: string;
  value?: string | number;
  hex?: string;
  days?: number;
  micros?: number;
  hash?: number;
  n?: number;
  bucket?: number;
  width?: number;
  result?: string | number;
}

const vectors = JSON.parse(
  await readFile(new URL('../../fixtures/iceberg-spec-hash-vectors.json', import.meta.url), 'utf8'),
) as { hashes: Vector[]; buckets: Vector[]; truncate: Vector[] };

const MICROS_PER_DAY = 86_400_000_000n;

/** "14.20" at scale 2 → 1420n. */
function decimalTextToUnscaled(text: string, scale: number): bigint {
  const [whole, fraction = ''] = text.split('.');
  return BigInt(whole + fraction.padEnd(scale, '0'));
}

/**
 * A vector's textual value in the in-memory Value representation, computed from the text itself
 * (the vector's own `days` / `micros` are checked against it, not used in its place).
 */
function toValue(v: Vector): Value {
  const type = v.type as IcebergType;
  if (v.hex !== undefined) return Uint8Array.from(Buffer.from(v.hex, 'hex'));
  const text = String(v.value);
  switch (type) {
    case 'int':
      return Number(v.value);
    case 'long':
      return BigInt(v.value as number);
    case 'date': {
      const days = Date.parse(`${text}T00:00:00Z`) / 86_400_000;
      if (v.days !== undefined) expect(days).toBe(v.days);
      return days;
    }
    case 'time': {
      const [h, m, s] = text.split(':').map(Number);
      const micros = BigInt((h * 3600 + m * 60 + s) * 1_000_000);
      if (v.micros !== undefined) expect(micros).toBe(BigInt(v.micros));
      return micros;
    }
    case 'timestamp':
    case 'timestamptz': {
      const ms = Date.parse(type === 'timestamp' ? `${text}Z` : text);
      const micros = BigInt(ms) * 1000n;
      if (v.micros !== undefined) expect(micros).toBe(BigInt(v.micros));
      return micros;
    }
    case 'string':
    case 'uuid':
      return text;
  }
  const decimal = decimalParams(type);
  if (decimal) return decimalTextToUnscaled(text, decimal.scale);
  throw new Error(`test cannot convert a ${v.type} vector`);
}

describe('hashValue and bucket: every vector of the spec (Appendix B)', () => {
  it.each(vectors.hashes)('hashes $type $value$hex to $hash', (v) => {
    // Prepare
    const value = toValue(v);

    // Act
    const hash = hashValue(v.type as IcebergType, value);

    // Assess
    expect(hash).toBe(v.hash);
    for (const n of [1, 7, 16, 1000]) {
      expect(applyTransform(`bucket[${n}]`, v.type as IcebergType, value)).toBe((v.hash! & 0x7fffffff) % n);
    }
  });

  it.each(vectors.buckets)('puts $type $value in bucket $bucket of $n', (v) => {
    // Act
    const bucket = applyTransform(`bucket[${v.n!}]`, v.type as IcebergType, toValue(v));

    // Assess
    expect(bucket).toBe(v.bucket);
  });

  it('hashes an int the same as the equal long (promotion keeps buckets)', () => {
    fc.assert(
      fc.property(fc.integer(), (n) => {
        expect(hashValue('int', n)).toBe(hashValue('long', BigInt(n)));
      }),
    );
  });
});

describe('truncate', () => {
  it.each(vectors.truncate)('truncates $type $value to width $width as $result', (v) => {
    // Prepare
    const type = v.type as IcebergType;
    const expected = type === 'long' ? BigInt(v.result as number) : v.result;

    // Act
    const result = applyTransform(`truncate[${v.width!}]`, type, toValue(v));

    // Assess
    expect(result).toBe(expected);
  });

  it('truncates decimals in units of the unscaled value (spec: 10.65 by 50 → 10.50)', () => {
    // Act / Assess
    expect(applyTransform('truncate[50]', 'decimal(9,2)', 1065n)).toBe(1050n);
    expect(applyTransform('truncate[10]', 'decimal(9,2)', -5n)).toBe(-10n);
    expect(applyTransform('truncate[10]', 'decimal(9,2)', 1000n)).toBe(1000n);
  });

  it('counts strings in code points, never splitting a surrogate pair', () => {
    // Prepare
    const text = '😀a😀b';

    // Act
    const two = applyTransform('truncate[2]', 'string', text);
    const three = applyTransform('truncate[3]', 'string', text);

    // Assess
    expect(two).toBe('😀a');
    expect(three).toBe('😀a😀');
    expect(applyTransform('truncate[10]', 'string', text)).toBe(text);
  });

  it('truncates binary to its first W bytes', () => {
    expect(applyTransform('truncate[2]', 'binary', Uint8Array.of(1, 2, 3))).toEqual(Uint8Array.of(1, 2));
  });

  it('rounds every int down to a multiple of the width', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
        fc.integer({ min: 1, max: 1000 }),
        (v, w) => {
          const t = applyTransform(`truncate[${w}]`, 'int', v) as number;
          expect(t % w === 0 || Object.is(t % w, -0)).toBe(true);
          expect(t).toBeLessThanOrEqual(v);
          expect(v - t).toBeLessThan(w);
        },
      ),
    );
  });
});

describe('year, month, day, hour', () => {
  const cases: Array<{
    label: string;
    type: IcebergType;
    value: Value;
    year: number;
    month: number;
    day: number;
    hour?: number;
  }> = [
    { label: 'epoch date', type: 'date', value: 0, year: 0, month: 0, day: 0 },
    { label: 'date 1969-12-31', type: 'date', value: -1, year: -1, month: -1, day: -1 },
    { label: '1 µs before epoch', type: 'timestamp', value: -1n, year: -1, month: -1, day: -1, hour: -1 },
    {
      label: '1969-12-31T00:00 exactly',
      type: 'timestamptz',
      value: -MICROS_PER_DAY,
      year: -1,
      month: -1,
      day: -1,
      hour: -24,
    },
    {
      label: '1900-03-01',
      type: 'date',
      value: Date.UTC(1900, 2, 1) / 86_400_000,
      year: -70,
      month: -838,
      day: -25508,
    },
    {
      label: '2024-05-01T13:45',
      type: 'timestamp',
      value: BigInt(Date.UTC(2024, 4, 1, 13, 45)) * 1000n,
      year: 54,
      month: 652,
      day: 19844,
      hour: 476269,
    },
  ];

  it.each(cases)('$label', ({ type, value, year, month, day, hour }) => {
    expect(applyTransform('year', type, value)).toBe(year);
    expect(applyTransform('month', type, value)).toBe(month);
    expect(applyTransform('day', type, value)).toBe(day);
    if (hour !== undefined) expect(applyTransform('hour', type, value)).toBe(hour);
  });

  it('agrees with the JS Date calendar for timestamps from 1600 to 2400, negative ones included', () => {
    const ms = fc.integer({ min: Date.UTC(1600, 0, 1), max: Date.UTC(2400, 0, 1) });
    fc.assert(
      fc.property(ms, fc.integer({ min: 0, max: 999 }), (millis, extraMicros) => {
        // Prepare
        const micros = BigInt(millis) * 1000n + BigInt(extraMicros);
        const d = new Date(millis);

        // Act / Assess
        expect(applyTransform('year', 'timestamp', micros)).toBe(d.getUTCFullYear() - 1970);
        expect(applyTransform('month', 'timestamp', micros)).toBe(
          (d.getUTCFullYear() - 1970) * 12 + d.getUTCMonth(),
        );
        expect(applyTransform('day', 'timestamp', micros)).toBe(Math.floor(millis / 86_400_000));
        expect(applyTransform('hour', 'timestamptz', micros)).toBe(Math.floor(millis / 3_600_000));
        const days = Math.floor(millis / 86_400_000);
        expect(applyTransform('month', 'date', days)).toBe(applyTransform('month', 'timestamp', micros));
      }),
    );
  });
});

describe('identity, void, nulls, applicability', () => {
  it('passes values through identity and drops them in void', () => {
    expect(applyTransform('identity', 'string', 'x')).toBe('x');
    expect(applyTransform('void', 'long', 5n)).toBeNull();
  });

  it('maps null to null under every transform', () => {
    const transforms: Transform[] = ['identity', 'bucket[4]', 'year', 'month', 'day', 'hour', 'void'];
    for (const t of transforms) expect(applyTransform(t, 'timestamp', null)).toBeNull();
    expect(applyTransform('truncate[3]', 'string', null)).toBeNull();
  });

  it('knows which transforms apply to which types', () => {
    expect(canTransform('day', 'string')).toBe(false);
    expect(canTransform('hour', 'date')).toBe(false);
    expect(canTransform('bucket[8]', 'double')).toBe(false);
    expect(canTransform('bucket[8]', 'fixed[4]')).toBe(true);
    expect(canTransform('truncate[8]', 'decimal(10,2)')).toBe(true);
    expect(canTransform('truncate[8]', 'uuid')).toBe(false);
    expect(
      canTransform('identity', { type: 'list', 'element-id': 2, element: 'int', 'element-required': false }),
    ).toBe(false);
  });

  it('refuses a transform that does not apply, and a value of the wrong representation', () => {
    expect(() => applyTransform('day', 'string', 'x')).toThrow(ValidationError);
    expect(() => applyTransform('bucket[4]', 'long', 'x')).toThrow(/must not be a string/);
  });
});

describe('parseTransform', () => {
  it('reads every spec transform', () => {
    for (const t of ['identity', 'year', 'month', 'day', 'hour', 'void', 'bucket[16]', 'truncate[4]']) {
      expect(parseTransform(t)).toBe(t);
    }
    expect(parseTransform('BUCKET[16]')).toBe('bucket[16]');
  });

  it.each(['bucket', 'bucket[0]', 'bucket[-1]', 'truncate[x]', 'days', 'bucket[99999999999]', ''])(
    'rejects %j',
    (t) => {
      expect(() => parseTransform(t)).toThrow(ValidationError);
    },
  );
});

describe('partitionPath', () => {
  const schema: Schema = {
    type: 'struct',
    'schema-id': 0,
    fields: [
      { id: 1, name: 'ts', required: false, type: 'timestamptz' },
      { id: 2, name: 'id', required: false, type: 'long' },
      { id: 3, name: 'name', required: false, type: 'string' },
      { id: 4, name: 'd', required: false, type: 'date' },
      { id: 5, name: 'amount', required: false, type: 'decimal(9,2)' },
    ],
  };
  const spec: PartitionSpec = {
    'spec-id': 0,
    fields: [
      { 'source-id': 1, 'field-id': 1000, name: 'ts_day', transform: 'day' },
      { 'source-id': 1, 'field-id': 1001, name: 'ts_hour', transform: 'hour' },
      { 'source-id': 4, 'field-id': 1002, name: 'd_month', transform: 'month' },
      { 'source-id': 4, 'field-id': 1003, name: 'd_year', transform: 'year' },
      { 'source-id': 2, 'field-id': 1004, name: 'id_bucket', transform: 'bucket[16]' },
      { 'source-id': 3, 'field-id': 1005, name: 'name', transform: 'identity' },
      { 'source-id': 5, 'field-id': 1006, name: 'amount', transform: 'identity' },
      { 'source-id': 1, 'field-id': 1007, name: 'ts', transform: 'identity' },
    ],
  };

  it('renders values as Iceberg Java does, URL-encoded', () => {
    // Prepare
    const ts = BigInt(Date.UTC(2024, 4, 1, 13, 5, 9)) * 1000n + 250n;
    const d = Date.UTC(2024, 4, 1) / 86_400_000;
    const row: Record<string, Value> = { ts, d, id: 34n, name: 'a b/c', amount: 1420n };
    const values = Object.fromEntries(
      spec.fields.map((f) => {
        const source = schema.fields.find((s) => s.id === f['source-id'])!;
        return [f.name, applyTransform(f.transform, source.type, row[source.name])];
      }),
    );

    // Act
    const path = partitionPath(spec, schema, values);

    // Assess
    expect(path).toBe(
      [
        'ts_day=2024-05-01',
        'ts_hour=2024-05-01-13',
        'd_month=2024-05',
        'd_year=2024',
        'id_bucket=3',
        'name=a%20b%2Fc',
        'amount=14.20',
        'ts=2024-05-01T13%3A05%3A09.000250Z',
      ].join('/'),
    );
  });

  it('writes null partition values as null, and dates before 1970 correctly', () => {
    // Prepare
    const values = {
      ts_day: -1,
      ts_hour: -1,
      d_month: -1,
      d_year: -1,
      id_bucket: null,
      name: null,
      amount: -5n,
      ts: BigInt(Date.UTC(1969, 11, 31, 23, 0)) * 1000n,
    };

    // Act
    const path = partitionPath(spec, schema, values);

    // Assess
    expect(path).toBe(
      'ts_day=1969-12-31/ts_hour=1969-12-31-23/d_month=1969-12/d_year=1969/id_bucket=null/name=null/amount=-0.05/ts=1969-12-31T23%3A00Z',
    );
  });

  it('refuses a tuple missing a partition field', () => {
    expect(() => partitionPath(spec, schema, { ts_day: 1 })).toThrow(
      /no value for partition field 'ts_hour'/,
    );
  });
});
