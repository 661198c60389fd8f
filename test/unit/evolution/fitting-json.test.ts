/**
 * The JSON-text scan (fitting-json.ts) must be invisible: whatever text it takes, JSON.parse (as
 * parse-json.ts runs it) followed by the fitting-columns append takes too, giving the same columns;
 * and for the texts producers write (JSON.stringify) it takes exactly what that path takes. Texts are
 * generated from values on every boundary, written with shuffled and repeated keys, any whitespace,
 * escapes, other spellings of the same number, and then broken on purpose.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GatheredRows } from '../../../functions/core/data/arrow/gathered-rows.js';
import { compileFittingColumns } from '../../../functions/core/mapping/fast/fitting-columns.js';
import {
  KAFKA_FIELD,
  kafkaLineageRow,
  withKafkaLineage,
} from '../../../functions/core/records/kafka-lineage.js';
import { decodeJsonRecords } from '../../../functions/core/mapping/decoded-record.js';
import { gatherJsonBatch } from '../../../functions/core/mapping/fast/gather-json.js';
import { mapBatch } from '../../../functions/core/mapping/map-batch.js';
import { DEFAULT_MAPPING } from '../../../functions/core/mapping/mapping-config.js';
import { parseJsonBytes } from '../../../functions/core/records/parse-json.js';
import type { IcebergType, Row, Schema } from '../../../functions/core/spec/types.js';
import { metadataOf, rawRecord } from '../mapping/support.js';
import { plain, schemaAndValues } from './fitting-arbitraries.js';
import { seededRandom } from '../../support/seeded-random.js';

const SPACES = ['', '', '', ' ', '\n', '\t', '\r\n  '];
/**
 * Number tokens whose double is not their value (under- and overflow), and other spellings of zero:
 * written now and then in place of a number, so the scan and the parse path meet them in any column.
 */
const EXTREME_TOKENS = [
  '123e-400',
  '1e-325',
  '-1e-400',
  '0e-400',
  '-0e-400',
  '1e400',
  '-1E+400',
  '-0',
  '-0.0',
  '-0e5',
];

/** The same value written another way: whitespace, key order, escapes, number spellings, repeats. */
function rewrite(value: unknown, rand: () => number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const ws = () => pick(SPACES);
  const escapeSome = (s: string): string => {
    const json = JSON.stringify(s);
    if (rand() < 0.8 || s.length === 0) return json;
    const k = Math.floor(rand() * s.length);
    const unit = `\\u${s.charCodeAt(k).toString(16).padStart(4, '0')}`;
    return JSON.stringify(s.slice(0, k)).slice(0, -1) + unit + JSON.stringify(s.slice(k + 1)).slice(1);
  };
  const number = (n: number): string => {
    const plainText = JSON.stringify(n);
    if (!Number.isFinite(n)) return plainText;
    if (rand() < 0.05) return pick(EXTREME_TOKENS);
    switch (pick([0, 0, 1, 2, 3, 4])) {
      case 1:
        return n.toExponential();
      case 2:
        return n.toExponential().replace('e+', 'E');
      case 3:
        return Number.isInteger(n) && !Object.is(n, -0) ? `${plainText}.0` : plainText;
      case 4:
        return plainText.includes('.') ? `${plainText}00` : plainText;
      default:
        return plainText;
    }
  };
  const write = (v: unknown): string => {
    if (typeof v === 'number') return number(v);
    if (typeof v === 'string') return escapeSome(v);
    if (Array.isArray(v)) return `[${ws()}${v.map((x) => write(x ?? null)).join(`${ws()},${ws()}`)}${ws()}]`;
    if (v !== null && typeof v === 'object' && !(v instanceof Uint8Array)) {
      const entries = Object.entries(v).filter(([, x]) => x !== undefined);
      entries.sort(() => rand() - 0.5);
      if (entries.length > 0 && rand() < 0.1) entries.push(pick(entries)); // a repeated key
      const parts = entries.map(([k, x]) => `${escapeSome(k)}${ws()}:${ws()}${write(x)}`);
      return `{${ws()}${parts.join(`${ws()},${ws()}`)}${ws()}}`;
    }
    return JSON.stringify(v) ?? 'null';
  };
  return `${ws()}${write(value)}${ws()}`;
}

const BREAKS = ['{', '}', '[', ']', ',', ':', '"', '\\', '0', '-', '.', 'e', ' ', '\u0001', 'é', 'n', 'x'];

/** The text broken (usually): a character dropped, inserted or replaced, or the text cut short. */
function breakText(text: string, rand: () => number): string {
  const at = Math.floor(rand() * (text.length + 1));
  const ch = BREAKS[Math.floor(rand() * BREAKS.length)];
  switch (Math.floor(rand() * 4)) {
    case 0:
      return text.slice(0, at) + text.slice(at + 1);
    case 1:
      return text.slice(0, at) + ch + text.slice(at);
    case 2:
      return text.slice(0, at) + ch + text.slice(at + 1);
    default:
      return text.slice(0, at);
  }
}

const INTS: IcebergType = { type: 'list', 'element-id': 99, 'element-required': true, element: 'int' };

/** A schema of top-level fields: [name, type, required?]. */
function schemaOf(...fields: [string, IcebergType, boolean?][]): Schema {
  return {
    type: 'struct',
    'schema-id': 0,
    fields: fields.map(([name, type, required = false], i) => ({ id: i + 1, name, required, type })),
  };
}

function gatherers(valueSchema: Schema) {
  const schema = withKafkaLineage(valueSchema);
  const lineage = { [KAFKA_FIELD]: kafkaLineageRow(rawRecord({ key: new Uint8Array([7]) })) };
  const scan = compileFittingColumns(schema, new Set([KAFKA_FIELD]));
  const parse = compileFittingColumns(schema, new Set([KAFKA_FIELD]));
  return {
    // The text inside a larger buffer (as a batch's values are): nothing outside [start, end) is read.
    scan: (text: string) => {
      const bytes = Buffer.from(`[${text}"`);
      return scan.appendJson(bytes, 1, bytes.length - 1, lineage);
    },
    parse: (text: string): boolean => {
      let value: unknown;
      try {
        value = parseJsonBytes(Buffer.from(text));
      } catch {
        return false;
      }
      return parse.append(value, lineage);
    },
    same: () =>
      expect(plain(new GatheredRows(scan.columns).toRows())).toEqual(
        plain(new GatheredRows(parse.columns).toRows()),
      ),
    rows: () => new GatheredRows(scan.columns).toRows(),
  };
}

describe('fitting JSON text', () => {
  it('takes exactly what JSON.parse + fitting columns take for JSON.stringify text, with the same rows', () => {
    let taken = 0;
    fc.assert(
      fc.property(schemaAndValues, ([schema, values]) => {
        const g = gatherers(schema);
        for (const value of values) {
          const text = JSON.stringify(value, (_k, v) => (v instanceof Uint8Array ? [...v] : v));
          const scanned = g.scan(text);
          const parsed = g.parse(text);
          if (scanned) taken++;
          if (scanned === parsed) continue;
          // The only texts left to the general path that it takes: numbers too long for a double
          // (parse-json keeps their text; the general path decides what they are).
          expect(scanned).toBe(false);
          expect(text).toMatch(/[-\d.eE+]{16,}/);
          return;
        }
        g.same();
      }),
      { seed: 20261205, numRuns: 800 },
    );
    expect(taken).toBeGreaterThan(400);
  });

  it('never takes a text the parse path would not, nor gives other rows, however it is written or broken', () => {
    let taken = 0;
    let broken = 0;
    fc.assert(
      fc.property(schemaAndValues, fc.integer(), fc.boolean(), ([schema, values], seed, shouldBreak) => {
        const rand = seededRandom(seed);
        const g = gatherers(schema);
        for (const value of values) {
          const written = rewrite(value, rand);
          const text = shouldBreak && rand() < 0.7 ? breakText(written, rand) : written;
          const parsed = g.parse(text);
          const scanned = g.scan(text);
          if (scanned) {
            expect(parsed, text).toBe(true);
            taken++;
            if (text !== written) broken++;
          } else if (parsed) {
            // The scan may leave a text to the general path; then that path takes it alone. The two
            // gatherers stay comparable only when both took the same records.
            return;
          }
        }
        g.same();
      }),
      { seed: 20261205, numRuns: 2000 },
    );
    expect(taken).toBeGreaterThan(500);
    // Some "broken" texts are still valid JSON (a space inserted, a digit dropped): both take them.
    expect(broken).toBeGreaterThan(0);
  });

  it('never matches a field name that would need escaping against the text as written', () => {
    const g = gatherers(schemaOf(['a\\', 'int'], ['q"', 'int']));
    // Not JSON at all (the key's string runs on), though the raw text starts with the name `a\`.
    expect(g.scan('{"a\\":1}')).toBe(false);
    expect(g.scan('{"a\\\\": 1, "q\\"": 2}')).toBe(false); // valid, escaped: the general path
    expect(g.parse('{"a\\\\": 1, "q\\"": 2}')).toBe(true);
  });

  it('matches no bytes at all against a field name that has no key as written', () => {
    // Prepare: names JSON writes with an escape; texts whose raw bytes run like such a name, or like
    // quotes, where a key could be mistaken for a name.
    const g = gatherers(schemaOf(['q"', 'int'], ['"', 'int'], ['id', 'long']));
    // Act, Assess: none is JSON, so none may be taken.
    for (const text of ['{"q"": 1}', '{"""": 1}', '{""": 1}', '{"\\"": 1}', '{"id": 1, """": 2}'])
      expect(g.scan(text), text).toBe(false);
    expect(g.scan('{"id": 1}')).toBe(true);
  });

  it('reads a field named like an Object.prototype property only from the text, as the object path does', () => {
    const g = gatherers(schemaOf(['id', 'long', true], ['constructor', 'string'], ['toString', 'int']));
    for (const text of ['{"id": 1}', '{"id": 2, "constructor": "x", "toString": 3}']) {
      expect(g.scan(text), text).toBe(true);
      expect(g.parse(text), text).toBe(true);
    }
    g.same();
    expect(g.rows().map((r) => [r.constructor, r.toString])).toEqual([
      [null, null],
      ['x', 3],
    ]);
  });

  it.each([
    ['a repeated key', '{"id": 1, "id": 2}'],
    ['an escaped key', '{"i\\u0064": 1}'],
    ['a key that is not a field', '{"id": 1, "extra": null}'],
    ['a number of 16+ characters', '{"id": 1234567890123456}'],
    ['a leading zero', '{"id": 01}'],
    ['a trailing comma', '{"id": 1,}'],
    ['text after the value', '{"id": 1} x'],
    ['a raw control character in a string', '{"id": 1, "name": "a\u0001b"}'],
    ['an unknown escape', '{"id": 1, "name": "a\\qb"}'],
    ['an unfinished string', '{"id": 1, "name": "ab'],
    ['not an object', '[1]'],
    ['a lone surrogate', '{"id": 1, "name": "\\ud800"}'],
    ['null in a required field', '{"id": null}'],
    ['a missing required field', '{"name": "x"}'],
    ['an int out of range', '{"id": 1, "n": 2147483648}'],
    ['a fraction without digits', '{"id": 1, "x": 1.}'],
    ['a fraction without digits before an exponent', '{"id": 1, "x": 1.e3}'],
    ['an exponent without digits', '{"id": 1, "x": 1e+}'],
    ['a lone minus', '{"id": 1, "x": -}'],
    ['a leading dot', '{"id": 1, "x": .5}'],
    ['a leading plus', '{"id": 1, "x": +1}'],
    ['a misspelt literal', '{"id": 1, "name": nul}'],
    ['an array closed by a brace', '{"id": 1, "tags": [1, 2}}'],
    ['an object closed by a bracket', '{"id": 1]'],
    ['a null in a list of required elements', '{"id": 1, "tags": [1, null]}'],
  ])('leaves %s to the general path', (_what, text) => {
    const g = gatherers(
      schemaOf(['id', 'long', true], ['name', 'string'], ['n', 'int'], ['x', 'double'], ['tags', INTS]),
    );
    expect(g.scan(text)).toBe(false);
    g.scan('{"id": 5}');
    g.parse('{"id": 5}');
    g.same(); // and leaves nothing of the refused text behind
  });

  it.each([
    ['a decimal that underflows as a double', '{"id": 1, "d": 123e-400}'],
    ['a negative one', '{"id": 1, "d": -1e-400}'],
    ['a double that underflows', '{"id": 1, "x": 1e-325}'],
    ['a double that overflows', '{"id": 1, "x": 1e400}'],
    ['a decimal that overflows', '{"id": 1, "d": 1E+400}'],
    ['a number string for a double', '{"id": 1, "x": "1.5"}'],
    ['a timestamp offset beyond ±18:00', '{"id": 1, "at": "2026-11-23T14:05:09+25:00"}'],
    ['an offset on a timestamp without zone', '{"id": 1, "local": "2026-11-23T14:05:09+01:00"}'],
  ])('leaves %s to the general path, which decides', (_what, text) => {
    const g = gatherers(
      schemaOf(
        ['id', 'long', true],
        ['x', 'double'],
        ['d', 'decimal(10, 2)'],
        ['at', 'timestamptz'],
        ['local', 'timestamp'],
      ),
    );
    expect(g.scan(text)).toBe(false);
  });

  it('reads a decimal as the token path does, whether or not it takes the one-pass way', () => {
    // Prepare: decimals on every edge of the one-pass reader (leading zeros, signs, places beyond the
    // scale, digits beyond a double's, exponents, long tokens, broken ones), as numbers and strings.
    const schema = schemaOf(['id', 'long', true], ['d', 'decimal(10, 2)'], ['z', 'decimal(5, 0)']);
    const spellings = [
      ['1.5', true],
      ['-0', true],
      ['0.07', true],
      ['12345678.99', true],
      ['0.125', false], // three places: the general path decides
      ['123456789.5', false], // 11 digits at scale 2: beyond precision 10
      ['1e2', false],
      ['1.5E-1', false],
      ['0.100000000000000', false], // 17 characters
      ['01.5', false],
      ['1.', false],
      ['.5', false],
      ['-', false],
      ['1.2.3', false],
      ['"007.50"', true],
      ['"-0.00"', true],
      ['"1.5"', true],
      ['"0.125"', false],
      ['"1e2"', false],
      ['"+1.5"', false],
      ['"1."', false],
      ['"1.5', false],
      ['"1.5\u0030"', false],
    ] as const;
    for (const [spelling, taken] of spellings) {
      for (const text of [`{"id": 1, "d": ${spelling}}`, `{"id": 1, "z": ${spelling}, "d": 2}`]) {
        const g = gatherers(schema);
        // Act
        const scanned = g.scan(text);
        const parsed = g.parse(text);
        // Assess: never a text the parse path refuses, never another value.
        if (scanned) expect(parsed, text).toBe(true);
        if (scanned && parsed) g.same();
      }
      // The plain spellings a decimal(10, 2) column takes are taken by the scan itself.
      if (taken) expect(gatherers(schema).scan(`{"id": 1, "d": ${spelling}}`), spelling).toBe(true);
    }
    const g = gatherers(schema);
    for (const text of ['{"id": 1, "d": "007.50", "z": -0}', '{"id": 2, "d": 0.07, "z": "12"}']) g.scan(text);
    expect(plain(g.rows().map((r) => [r.d, r.z]))).toEqual([
      ['750n', '0n'],
      ['7n', '12n'],
    ]);
  });

  it('reads a timestamp as the token path does, written plainly or not', () => {
    // Prepare: canonical timestamps, and ones the plain-bytes reader must leave to the token path.
    const schema = schemaOf(['id', 'long', true], ['at', 'timestamptz'], ['local', 'timestamp']);
    const texts = [
      '{"id": 1, "at": "2026-11-23T14:05:09.123Z", "local": "2026-11-23 14:05:09"}',
      '{"id": 2, "at": "2026-11-23T14:05:09\\u005a", "local": "2026-11-23T14:05:09\\u002e5"}',
      '{"id": 3, "at": "2026-11-23T14:05:09+01:30", "local": "2026-11-23T14:05:09.000001+00:00"}',
      '{"id": 4, "at": 1764000000000, "local": "2026-11-23T14:05"}',
      '{"id": 5, "at": "2026-11-23T14:05:09Z", "local": "2026-11-23T14:05:09Zé"}',
    ];
    const g = gatherers(schema);
    // Act, Assess: each taken by both paths, with the same values.
    for (const text of texts) {
      expect(g.scan(text), text).toBe(g.parse(text));
    }
    g.same();
    expect(g.rows().map((r) => r.id)).toEqual([1n, 2n, 3n, 4n]);
    expect(g.scan('{"id": 6, "at": "2026-11-23T14:05:09Z}')).toBe(false); // the string runs on
  });

  it('keeps the sign of -0 and reads exact zeros in any spelling, as the parse path does', () => {
    const g = gatherers(
      schemaOf(['id', 'long', true], ['x', 'double'], ['f', 'float'], ['d', 'decimal(10, 2)']),
    );
    for (const text of [
      '{"id": 1, "x": -0, "f": -0.0, "d": -0}',
      '{"id": 2, "x": -0e5, "f": -0E-3, "d": 0e-400}',
      '{"id": 3, "x": 0e-400, "f": 0, "d": -0.00}',
    ]) {
      expect(g.scan(text), text).toBe(true);
      expect(g.parse(text), text).toBe(true);
    }
    g.same();
    expect(plain(g.rows().map((r) => [r.x, r.f, r.d]))).toEqual([
      ['-0', '-0', '0n'],
      ['-0', '-0', '0n'],
      [0, 0, '0n'],
    ]);
  });

  it('takes escapes in values, any whitespace, exponents, and fields in any order', () => {
    const g = gatherers(
      schemaOf(['id', 'long', true], ['name', 'string'], ['price', 'double'], ['__proto__', 'int']),
    );
    for (const text of [
      ' {\n\t"__proto__": 1, "name" : "S\\u00e3o \\"P\\"aulo\\n" ,"id":-0, "price": 1.5E2 } \r\n',
      '{"__proto__": 3, "id": 1e3, "price": -0.0}',
      '{"__proto__": null, "id": 2}',
      '{"id": 900719925474099, "price": 0.1, "__proto__": -5}',
    ]) {
      expect(g.scan(text), text).toBe(true);
      expect(g.parse(text)).toBe(true);
    }
    g.same();
  });

  it('maps a batch as decoding + mapBatch do, scanning what fits and decoding only the rest', () => {
    let scannedBatches = 0;
    let mixedBatches = 0;
    fc.assert(
      fc.property(schemaAndValues, fc.integer(), ([valueSchema, values], seed) => {
        const rand = seededRandom(seed);
        const metadata = metadataOf(withKafkaLineage(valueSchema));
        const records = values.map((value, i) => {
          const written = rewrite(value, rand);
          const text = rand() < 0.2 ? breakText(written, rand) : written;
          const tombstone = rand() < 0.05;
          return rawRecord({ offset: BigInt(i), value: tombstone ? null : Buffer.from(text) });
        });
        const options = { mapping: DEFAULT_MAPPING, metadata, columnar: true };
        const decoded = decodeJsonRecords(records);
        const general = mapBatch(decoded.decoded, options);
        const scanned = gatherJsonBatch(records, options);
        // The scan leaves a batch to the general path only when its records change the schema.
        expect(scanned === undefined).toBe(general.reconciliation.changed);
        if (!scanned) return;
        scannedBatches++;
        if (scanned.deadLetters.length > 0) mixedBatches++;
        // The same rows from the same records (the ones that did not fit come last).
        const byOffset = (rows: Row[]) =>
          plain(
            [...rows].sort((a, b) => Number((a._kafka as Row).offset) - Number((b._kafka as Row).offset)),
          );
        expect(byOffset(scanned.gathered?.toRows() ?? [])).toEqual(
          byOffset(general.gathered?.toRows() ?? general.rows),
        );
        expect(scanned.used.map((r) => r.offset)).toEqual(
          (scanned.gathered?.toRows() ?? []).map((r) => (r._kafka as Row).offset),
        );
        expect(new Set(scanned.used)).toEqual(new Set(general.used));
        expect(scanned.deadLetters).toEqual([...decoded.deadLetters, ...general.deadLetters]);
        expect(scanned.reconciliation.changes).toEqual([]);
      }),
      { seed: 20261205, numRuns: 1500 },
    );
    expect(scannedBatches).toBeGreaterThan(300);
    expect(mixedBatches).toBeGreaterThan(50);
  });

  it('gathers a whole batch, or leaves it to mapBatch when the batch changes the schema', () => {
    const schema = withKafkaLineage(schemaOf(['id', 'long', true], ['at', 'timestamptz']));
    const metadata = metadataOf(schema);
    const records = (values: (string | null)[]) =>
      values.map((v, i) =>
        rawRecord({ offset: BigInt(i), value: v === null ? null : Buffer.from(v), key: new Uint8Array([i]) }),
      );
    const options = { mapping: DEFAULT_MAPPING, metadata };
    const good = records(['{"id": 1, "at": "2026-11-23T14:05:09Z"}', '{"id": 2}']);
    const scanned = gatherJsonBatch(good, options);
    const general = mapBatch(decodeJsonRecords(good).decoded, options);
    expect(plain(scanned?.gathered?.toRows())).toEqual(plain(general.rows));
    expect(scanned?.used).toEqual(general.used);
    expect(scanned?.reconciliation.changed).toBe(false);
    // One record that is not JSON, one tombstone, one whose value needs the general path (a number
    // too long for a double): dead letters, and the rows of the others.
    const mixed = records(['{"id": 1}', '{"id": ', null, '{"id": 4}', '{"id": 1234567890123456789}']);
    const m = gatherJsonBatch(mixed, options);
    expect(m?.gathered?.toRows().map((r) => r.id)).toEqual([1n, 4n, 1234567890123456789n]);
    expect(m?.used.map((r) => r.offset)).toEqual([0n, 3n, 4n]);
    expect(m?.deadLetters.map((l) => [l.record.offset, l.stage])).toEqual([
      [1n, 'decode'],
      [2n, 'map'],
    ]);
    // A new column: every record is converted to the new schema by the general path.
    expect(gatherJsonBatch(records(['{"id": 1}', '{"id": 2, "new": true}']), options)).toBeUndefined();
    const renamed = { ...DEFAULT_MAPPING, exclude: ['at'] };
    expect(gatherJsonBatch(good, { mapping: renamed, metadata })).toBeUndefined();
  });

  it('leaves a schema with a map column to the row path', () => {
    const metadata = metadataOf(
      schemaOf(
        ['id', 'long', true],
        [
          'm',
          { type: 'map', 'key-id': 3, key: 'string', 'value-id': 4, value: 'int', 'value-required': false },
        ],
      ),
    );
    const records = [rawRecord({ value: Buffer.from('{"id": 1, "m": {"a": 1}}') })];
    const options = { mapping: DEFAULT_MAPPING, metadata, columnar: true };
    expect(gatherJsonBatch(records, options)).toBeUndefined();
    const mapped = mapBatch(decodeJsonRecords(records).decoded, options);
    expect(mapped.gathered).toBeUndefined();
    expect(plain(mapped.rows)).toEqual(plain([{ id: 1n, m: new Map([['a', 1]]) }]));
  });
});
