import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluateRow } from '../../../functions/core/scan/evaluate-row.js';
import { bindExpression } from '../../../functions/core/scan/bind-expression.js';
import { formatExpression } from '../../../functions/core/scan/format-expression.js';
import type { Expression, Literal } from '../../../functions/core/scan/expression.js';
import { evaluatePartition, projectPartition } from '../../../functions/core/scan/project-partition.js';
import { applyTransform } from '../../../functions/core/spec/transforms.js';
import type {
  PartitionSpec,
  PartitionValues,
  Row,
  Schema,
  Transform,
} from '../../../functions/core/spec/types.js';
import { bound } from './scan-fixtures.js';

let nextFieldId = 1000;
function specOf(...fields: [number, Transform, string][]): PartitionSpec {
  return {
    'spec-id': 1,
    fields: fields.map(([sourceId, transform, name]) => ({
      'source-id': sourceId,
      'field-id': nextFieldId++,
      name,
      transform,
    })),
  };
}

/** The projection printed with partition field names, e.g. `id_bucket = 3`. */
function projected(filter: string, spec: PartitionSpec): string {
  return formatExpression(projectPartition(bound(filter), spec));
}

const DAY_2024_05_01 = 19844; // 1714521600 s / 86400

describe('projectPartition', () => {
  it('keeps every predicate as it is under identity', () => {
    const spec = specOf([3, 'identity', 'country'], [2, 'identity', 'qty']);
    expect(projected("country = 'DE' or country not in ('FR', 'NL')", spec)).toBe(
      "country = 'DE' or country not in ('FR', 'NL')",
    );
    expect(projected('qty != 3 and qty < 9 and qty is not null', spec)).toBe(
      'qty != 3 and qty < 9 and qty is not null',
    );
  });

  it('projects bucket only for eq and in, using the spec hash (bucket[16] of 34 is 3)', () => {
    const spec = specOf([1, 'bucket[16]', 'id_bucket']);
    expect(projected('id = 34', spec)).toBe('id_bucket = 3');
    const inList = projectPartition(bound('id in (34, 35, 34)'), spec);
    expect(inList.op).toBe('in');
    expect(inList.op === 'in' && inList.values).toContain(3);
    for (const filter of ['id != 34', 'id < 34', 'id >= 34', 'id not in (34, 35)']) {
      expect(projected(filter, spec)).toBe('true');
    }
    expect(projected('id = 34 and qty = 1', spec)).toBe('id_bucket = 3');
  });

  it('projects truncate on ints with the boundary rules (lt v → lt-eq t(v-1), gt v → gt-eq t(v+1))', () => {
    const spec = specOf([2, 'truncate[10]', 'qty_trunc']);
    expect(projected('qty < 20', spec)).toBe('qty_trunc <= 10');
    expect(projected('qty <= 20', spec)).toBe('qty_trunc <= 20');
    expect(projected('qty > 19', spec)).toBe('qty_trunc >= 20');
    expect(projected('qty >= 19', spec)).toBe('qty_trunc >= 10');
    expect(projected('qty = 17', spec)).toBe('qty_trunc = 10');
    expect(projected('qty < -5', spec)).toBe('qty_trunc <= -10');
    expect(projected('qty in (1, 5, 12)', spec)).toBe('qty_trunc in (0, 10)');
    expect(projected('qty != 17', spec)).toBe('true');
  });

  it('projects truncate on decimals in units of the unscaled value', () => {
    const spec = specOf([4, 'truncate[100]', 'amount_trunc']); // steps of 1.00 on decimal(10,2)
    expect(projected('amount < 10.50', spec)).toBe('amount_trunc <= 10.00');
    expect(projected('amount < 10.00', spec)).toBe('amount_trunc <= 9.00');
    expect(projected('amount > 10.99', spec)).toBe('amount_trunc >= 11.00');
  });

  it('projects truncate on strings: lt/lt-eq → lt-eq, gt/gt-eq → gt-eq of the truncated literal', () => {
    const spec = specOf([3, 'truncate[2]', 'country_trunc']);
    expect(projected("country < 'DEU'", spec)).toBe("country_trunc <= 'DE'");
    expect(projected("country <= 'D'", spec)).toBe("country_trunc <= 'D'");
    expect(projected("country > 'DEU'", spec)).toBe("country_trunc >= 'DE'");
    expect(projected("country = 'DEU'", spec)).toBe("country_trunc = 'DE'");
    expect(projected("country != 'DEU'", spec)).toBe('true');
  });

  it('projects year, month, day and hour on timestamps monotonically', () => {
    const day = specOf([5, 'day', 'ts_day']);
    expect(projected("order_ts > '2024-05-01T00:00:00Z'", day)).toBe("ts_day >= '2024-05-01'");
    expect(projected("order_ts < '2024-05-01T00:00:00Z'", day)).toBe("ts_day <= '2024-04-30'");
    expect(projected("order_ts <= '2024-05-01T00:00:00Z'", day)).toBe("ts_day <= '2024-05-01'");
    expect(projected("order_ts = '2024-05-01T10:00:00Z'", day)).toBe("ts_day = '2024-05-01'");
    const hour = specOf([5, 'hour', 'ts_hour']);
    expect(projectPartition(bound("order_ts >= '1970-01-01T05:30:00Z'"), hour)).toMatchObject({
      op: 'gt-eq',
      value: 5,
    });
    expect(projectPartition(bound("order_ts < '1970-01-01T00:00:00Z'"), hour)).toMatchObject({
      op: 'lt-eq',
      value: -1,
    });
    const month = specOf([6, 'month', 'ts_month']);
    expect(projectPartition(bound("local_ts < '2024-05-01'"), month)).toMatchObject({
      op: 'lt-eq',
      value: 54 * 12 + 3,
    });
    const year = specOf([7, 'year', 'day_year']);
    expect(projectPartition(bound("day > '2023-12-31'"), year)).toMatchObject({ op: 'gt-eq', value: 54 });
    expect(projectPartition(bound("day != '2023-12-31'"), year)).toEqual({ op: 'true' });
  });

  it('projects day on a date column to the same day number', () => {
    const spec = specOf([7, 'day', 'd']);
    expect(projectPartition(bound("day >= '2024-05-01'"), spec)).toMatchObject({
      op: 'gt-eq',
      value: DAY_2024_05_01,
    });
  });

  it('projects null checks through every transform but void', () => {
    for (const transform of ['identity', 'bucket[4]', 'truncate[3]'] as Transform[]) {
      const spec = specOf([3, transform, 'p']);
      expect(projected('country is null', spec)).toBe('p is null');
      expect(projected('country is not null', spec)).toBe('p is not null');
    }
    expect(projected('country is null', specOf([3, 'void', 'p']))).toBe('true');
    expect(projected("country = 'DE'", specOf([3, 'void', 'p']))).toBe('true');
  });

  it('projects is-nan only through identity', () => {
    expect(projected('score is nan', specOf([8, 'identity', 's']))).toBe('s is nan');
    expect(projected('score is nan', specOf([8, 'void', 's']))).toBe('true');
  });

  it('ANDs the projections of several partition fields of one column and pushes not down first', () => {
    const spec = specOf([1, 'bucket[16]', 'b'], [1, 'truncate[10]', 't']);
    expect(projected('id = 34', spec)).toBe('b = 3 and t = 30');
    expect(projected('not (id != 34)', spec)).toBe('b = 3 and t = 30');
    expect(projected('id = 34 or qty = 1', spec)).toBe('true');
  });

  it('evaluates a projection on partition tuples', () => {
    const spec = specOf([5, 'day', 'ts_day'], [3, 'identity', 'country']);
    const projection = projectPartition(bound("order_ts >= '2024-05-01T00:00:00Z' and country = 'DE'"), spec);
    expect(evaluatePartition(projection, { ts_day: DAY_2024_05_01, country: 'DE' })).toBe(true);
    expect(evaluatePartition(projection, { ts_day: DAY_2024_05_01 - 1, country: 'DE' })).toBe(false);
    expect(evaluatePartition(projection, { ts_day: DAY_2024_05_01, country: 'FR' })).toBe(false);
    expect(evaluatePartition(projection, { ts_day: null, country: 'DE' })).toBe(false);
  });

  it('is inclusive: every row that matches the filter has a partition that matches the projection', () => {
    // Prepare: rows over four columns, partitioned by every applicable transform.
    const schema: Schema = {
      type: 'struct',
      'schema-id': 0,
      fields: [
        { id: 1, name: 'i', required: false, type: 'int' },
        { id: 2, name: 'l', required: false, type: 'long' },
        { id: 3, name: 's', required: false, type: 'string' },
        { id: 4, name: 'ts', required: false, type: 'timestamp' },
        { id: 5, name: 'dec', required: false, type: 'decimal(9, 2)' },
      ],
    };
    const transforms: [number, Transform][] = [
      [1, 'identity'],
      [1, 'bucket[7]'],
      [1, 'truncate[10]'],
      [2, 'bucket[5]'],
      [2, 'truncate[3]'],
      [3, 'identity'],
      [3, 'truncate[2]'],
      [3, 'bucket[3]'],
      [4, 'year'],
      [4, 'month'],
      [4, 'day'],
      [4, 'hour'],
      [4, 'void'],
      [5, 'truncate[50]'],
    ];
    const spec: PartitionSpec = {
      'spec-id': 0,
      fields: transforms.map(([sourceId, transform], i) => ({
        'source-id': sourceId,
        'field-id': 1000 + i,
        name: `p${i}`,
        transform,
      })),
    };
    const types = ['int', 'long', 'string', 'timestamp', 'decimal(9, 2)'] as const;
    const names = ['i', 'l', 's', 'ts', 'dec'];
    const micros = fc.bigInt({ min: -200_000_000_000n, max: 200_000_000_000n }).map((n) => n * 1000n);
    const valueFor = (column: number) =>
      [
        fc.integer({ min: -40, max: 40 }),
        fc.bigInt({ min: -40n, max: 40n }),
        fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'é'), maxLength: 4 }),
        micros,
        fc.bigInt({ min: -500n, max: 500n }),
      ][column];
    const nullable = (column: number) => fc.option(valueFor(column) as fc.Arbitrary<unknown>, { freq: 5 });
    const rowArb = fc.tuple(nullable(0), nullable(1), nullable(2), nullable(3), nullable(4)).map((vs) => {
      const r: Row = {};
      vs.forEach((v, i) => {
        r[names[i]] = (v ?? null) as Row[string];
      });
      return r;
    });
    const literalFor = (column: number): fc.Arbitrary<Literal> =>
      [
        fc.integer({ min: -40, max: 40 }).map((n) => ({ type: 'number', text: String(n) }) as const),
        fc.bigInt({ min: -40n, max: 40n }).map((n) => ({ type: 'number', text: String(n) }) as const),
        fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'é'), maxLength: 4 }),
        micros,
        fc
          .bigInt({ min: -500n, max: 500n })
          .map((n) => ({ type: 'number', text: (Number(n) / 100).toFixed(2) }) as const),
      ][column];
    const predicate: fc.Arbitrary<Expression> = fc.integer({ min: 0, max: 4 }).chain(
      (c) =>
        fc.oneof(
          fc.record({
            op: fc.constantFrom('eq', 'not-eq', 'lt', 'lt-eq', 'gt', 'gt-eq'),
            term: fc.constant(names[c]),
            value: literalFor(c),
          }),
          fc.record({
            op: fc.constantFrom('in', 'not-in'),
            term: fc.constant(names[c]),
            values: fc.array(literalFor(c), { minLength: 2, maxLength: 3 }),
          }),
          fc.record({ op: fc.constantFrom('is-null', 'not-null'), term: fc.constant(names[c]) }),
        ) as fc.Arbitrary<Expression>,
    );
    const filterArb: fc.Arbitrary<Expression> = fc.letrec<{ e: Expression }>((tie) => ({
      e: fc.oneof(
        { depthSize: 'small' },
        predicate,
        fc.record({
          op: fc.constantFrom('and', 'or'),
          left: tie('e'),
          right: tie('e'),
        }) as fc.Arbitrary<Expression>,
        fc.record({ op: fc.constant('not'), child: tie('e') }) as fc.Arbitrary<Expression>,
      ),
    })).e;

    // Act + Assess
    fc.assert(
      fc.property(filterArb, fc.array(rowArb, { minLength: 1, maxLength: 10 }), (filter, rows) => {
        const expr = bindExpression(filter, schema);
        const projection = projectPartition(expr, spec);
        for (const r of rows) {
          if (!evaluateRow(expr, r)) continue;
          const tuple: PartitionValues = {};
          spec.fields.forEach((f, i) => {
            tuple[f.name] = applyTransform(
              f.transform,
              types[transforms[i][0] - 1],
              r[names[transforms[i][0] - 1]],
            );
          });
          expect(evaluatePartition(projection, tuple)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });
});
