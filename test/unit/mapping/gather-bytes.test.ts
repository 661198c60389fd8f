/**
 * The byte-level fast path against the general path (`fastPath: false`: every record decoded,
 * reconciled and converted to a row, `_kafka` from kafkaLineageRow): the same rows, the same Arrow
 * batch and column stats, the same dead letters — with the lineage built as columns from records of
 * any topic, partition, offset (past 2^53 too), timestamp, key and headers; and with the value bytes
 * broken at the byte level (invalid UTF-8, a byte-order mark, bytes cut off), which the scan must
 * leave to the general path rather than take; and the same records decoded from an ESM event into
 * the batch's columns (BatchRecord), which the scan and the lineage read directly.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toArrowSchema } from '../../../functions/core/data/arrow/arrow-schema.js';
import { buildRecordBatch } from '../../../functions/core/data/arrow/build-record-batch.js';
import type { StatsSink } from '../../../functions/core/data/arrow/column-stats.js';
import type { GatheredColumn, GatheredRows } from '../../../functions/core/data/arrow/gathered-rows.js';
import { decodeJsonRecords } from '../../../functions/core/mapping/decoded-record.js';
import { gatherJsonBatch } from '../../../functions/core/mapping/fast/gather-json.js';
import { mapBatch } from '../../../functions/core/mapping/map-batch.js';
import { DEFAULT_MAPPING } from '../../../functions/core/mapping/mapping-config.js';
import type { KafkaHeader, RawRecord } from '../../../functions/core/records/esm-event.js';
import { withKafkaLineage } from '../../../functions/core/records/kafka-lineage.js';
import { currentSchema } from '../../../functions/core/spec/metadata.js';
import type { Row, Schema } from '../../../functions/core/spec/types.js';
import { plain } from '../evolution/fitting-arbitraries.js';
import type { DeadLetter } from '../../../functions/core/records/dead-letters.js';
import { BatchRecord } from '../../../functions/core/records/record-columns.js';
import { metadataOf, rawRecord, throughEsmEvent } from './support.js';

const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'at', required: false, type: 'timestamptz' },
    { id: 3, name: 'amount', required: false, type: 'decimal(10, 2)' },
    { id: 4, name: 'name', required: false, type: 'string' },
    { id: 5, name: 'ok', required: false, type: 'boolean' },
    { id: 6, name: 'score', required: false, type: 'double' },
    { id: 7, name: 'n', required: false, type: 'int' },
    {
      id: 8,
      name: 'tags',
      required: false,
      type: { type: 'list', 'element-id': 9, 'element-required': false, element: 'string' },
    },
    {
      id: 10,
      name: 'where',
      required: false,
      type: {
        type: 'struct',
        fields: [
          { id: 11, name: 'city', required: false, type: 'string' },
          { id: 12, name: 'local', required: false, type: 'timestamp' },
        ],
      },
    },
  ],
};

const text = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom('é', 'São Paulo', '\u{1F600}'),
);

const valueArb = fc.record(
  {
    id: fc.oneof(fc.maxSafeInteger(), fc.constantFrom(0, -1, 2 ** 53)),
    at: fc.oneof(
      fc.integer({ min: -8.64e15, max: 8.64e15 }).map((ms) => new Date(ms).toISOString()),
      fc.constantFrom('2026-11-20T10:00:00.123456Z', '2026-11-20 10:00:00+02:00', '2026-11-20', '1e3', null),
      fc.maxSafeInteger(),
    ),
    amount: fc.oneof(
      fc.integer({ min: -1e9, max: 1e9 }).map((c) => (c / 100).toFixed(2)),
      fc.integer({ min: -1e6, max: 1e6 }).map((c) => c / 100),
      fc.constantFrom('1.234', '00012.5', '-0.00', '99999999.99', '1e2', '.5'),
      // Past the precision (the batch evolves) now and then only.
      fc.constantFrom('100000000.00', ...new Array(30).fill('7.25')),
    ),
    name: fc.oneof(text, fc.constant(null)),
    ok: fc.boolean(),
    score: fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(-0)),
    // Past the int range (a promotion: the batch evolves) now and then only.
    n: fc.oneof({ weight: 40, arbitrary: fc.integer() }, { weight: 1, arbitrary: fc.constant(2 ** 31) }),
    tags: fc.array(fc.oneof(text, fc.constant(null)), { maxLength: 3 }),
    where: fc.oneof(
      fc.constant(null),
      fc.record({ city: text, local: fc.constantFrom('2026-01-02T03:04:05', '2026-01-02T03:04:05+01:00') }),
    ),
  },
  { requiredKeys: ['id'] },
);

const headerArb: fc.Arbitrary<KafkaHeader> = fc.record({
  key: text,
  value: fc.oneof(fc.constant(null), fc.uint8Array({ maxLength: 6 })),
});

const recordArb = fc.record({
  topic: fc.oneof(fc.constantFrom('orders', 'commandes-é'), text),
  partition: fc.integer({ min: 0, max: 0x7fffffff }),
  offset: fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }), fc.bigInt({ min: 0n, max: 2n ** 20n })),
  timestamp: fc.oneof(fc.integer({ min: 0, max: 2 ** 42 }), fc.maxSafeInteger(), fc.constant(-1)),
  timestampType: fc.constantFrom('CREATE_TIME', 'LOG_APPEND_TIME'),
  key: fc.oneof(fc.constant(null), fc.uint8Array({ maxLength: 8 })),
  headers: fc.array(headerArb, { maxLength: 3 }),
});

/** Byte sequences UTF-8 decoding refuses: stray, overlong, surrogate, past U+10FFFF, cut short. */
const BAD_UTF8 = [
  [0xff],
  [0x80],
  [0xc0, 0xaf],
  [0xe0, 0x80, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xe2, 0x82],
  [0xf0, 0x9f, 0x98],
];

/** Byte-level damage: invalid UTF-8 in or out of strings, a BOM, a cut. */
function damage(bytes: Uint8Array, kind: number, at: number, byte: number): Uint8Array {
  const i = at % (bytes.length + 1);
  switch (kind) {
    case 4: {
      // Inside a string: right after one of its quotes.
      const quotes = [...bytes.keys()].filter((k) => bytes[k] === 34);
      const q = quotes.length ? quotes[at % quotes.length] + 1 : i;
      return Uint8Array.from([...bytes.slice(0, q), ...BAD_UTF8[byte % BAD_UTF8.length], ...bytes.slice(q)]);
    }
    case 0:
      return Uint8Array.from([...bytes.slice(0, i), byte, ...bytes.slice(i)]);
    case 1:
      return Uint8Array.from([0xef, 0xbb, 0xbf, ...bytes]);
    case 2:
      return bytes.slice(0, i);
    default: {
      const out = bytes.slice();
      if (i < out.length) out[i] = byte;
      return out;
    }
  }
}

function batchOf(schema: Schema, rows: Row[] | GatheredRows, length: number) {
  const stats: StatsSink = new Map();
  const arrowSchema = toArrowSchema(schema);
  const batch = Array.isArray(rows)
    ? buildRecordBatch(schema, arrowSchema, rows, 0, length, stats)
    : rows.buildBatch(schema, arrowSchema, 0, length, stats);
  return plain({ stats: [...stats], rows: batch.toArray().map((r: { toJSON(): unknown }) => r.toJSON()) });
}

/** The typed storage of a leaf at a path of struct fields (undefined: Value storage). */
function storageAt(rows: GatheredRows, path: string[]): string | undefined {
  let c: GatheredColumn = rows.columns;
  for (const name of path) {
    if (c.kind !== 'struct') return undefined;
    c = c.children[c.names.indexOf(name)];
  }
  if (c.kind !== 'leaf') return undefined;
  return c.nums ? 'numbers' : c.ends ? 'utf8' : undefined;
}

const byOffset = (rows: Row[]) =>
  plain(
    [...rows].sort((a, b) => {
      const x = (a._kafka as Row).offset as bigint;
      const y = (b._kafka as Row).offset as bigint;
      return x < y ? -1 : x > y ? 1 : 0;
    }),
  );

describe('the byte-level fast path', () => {
  it('gives the rows, batch, stats and dead letters of the general path, lineage included', () => {
    let damaged = 0;
    let typed = 0;
    let batchRecords = 0;
    fc.assert(
      fc.property(
        fc.array(fc.tuple(recordArb, valueArb, fc.nat(10), fc.nat(), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 12,
        }),
        (items) => {
          const metadata = metadataOf(withKafkaLineage(SCHEMA));
          const schema = currentSchema(metadata);
          const seen = new Set<bigint>();
          const records: RawRecord[] = [];
          for (const [r, value, kind, at, byte] of items) {
            if (seen.has(r.offset)) continue;
            seen.add(r.offset);
            let bytes: Uint8Array = Buffer.from(JSON.stringify(value));
            if (kind < 5) {
              bytes = damage(bytes, kind, at, byte);
              damaged++;
            }
            records.push(rawRecord({ ...r, value: bytes }));
          }
          const options = { mapping: DEFAULT_MAPPING, metadata, columnar: true };
          const decoded = decodeJsonRecords(records);
          const general = mapBatch(decoded.decoded, { ...options, fastPath: false });
          const scanned = gatherJsonBatch(records, options);
          if (general.reconciliation.changed) {
            expect(scanned).toBeUndefined();
            return;
          }
          expect(scanned).toBeDefined();
          if (!scanned?.gathered) throw new Error('not gathered');
          expect(byOffset(scanned.gathered.toRows())).toEqual(byOffset(general.rows));
          expect(scanned.deadLetters).toEqual([...decoded.deadLetters, ...general.deadLetters]);
          // Gathered without a JS value per slot: numbers and text in typed storage, lineage too.
          if (general.rows.length > 0) {
            const safeIds = general.rows.every((r) => Number.isSafeInteger(Number(r.id)));
            for (const path of [
              ...(safeIds ? [['id']] : []),
              ['_kafka', 'partition'],
              ['_kafka', 'timestamp_type'],
            ])
              expect(storageAt(scanned.gathered, path), path.join('.')).toBeDefined();
            typed++;
          }
          // The same batch and stats once in the same row order.
          const order = general.used.map((r) => scanned.used.indexOf(r));
          const generalBatch = batchOf(schema, general.rows, general.rows.length);
          expect(batchOf(schema, scanned.gathered.take(order), order.length)).toEqual(generalBatch);
          // The same records decoded from an ESM event into columns (BatchRecord): the same again.
          const columnar = throughEsmEvent(records);
          batchRecords += columnar.filter((r) => r instanceof BatchRecord).length;
          const fromColumns = gatherJsonBatch(columnar, options);
          if (!fromColumns?.gathered) throw new Error('not gathered from columns');
          expect(byOffset(fromColumns.gathered.toRows())).toEqual(byOffset(general.rows));
          const letterOf = (l: DeadLetter) => [l.record.offset, l.stage, l.error];
          expect(fromColumns.deadLetters.map(letterOf)).toEqual(scanned.deadLetters.map(letterOf));
          const columnOrder = general.used.map((r) =>
            fromColumns.used.findIndex((c) => c.offset === r.offset),
          );
          expect(batchOf(schema, fromColumns.gathered.take(columnOrder), columnOrder.length)).toEqual(
            generalBatch,
          );
        },
      ),
      { seed: 20261205, numRuns: 600 },
    );
    expect(damaged).toBeGreaterThan(100);
    expect(typed).toBeGreaterThan(300);
    expect(batchRecords).toBeGreaterThan(1000);
  });

  it('leaves every invalid UTF-8 sequence inside a string to the general path, which dead-letters it', () => {
    const metadata = metadataOf(withKafkaLineage(SCHEMA));
    const options = { mapping: DEFAULT_MAPPING, metadata, columnar: true };
    for (const bad of [...BAD_UTF8, [0xef, 0xbb, 0xbf, 0xff]]) {
      const value = Uint8Array.from([...Buffer.from('{"id": 1, "name": "a'), ...bad, ...Buffer.from('z"}')]);
      const records = [
        rawRecord({ offset: 0n, value }),
        rawRecord({ offset: 1n, value: Buffer.from('{"id": 2}') }),
      ];
      const scanned = gatherJsonBatch(records, options);
      const decoded = decodeJsonRecords(records);
      expect(scanned?.used, bad.join(',')).toEqual([records[1]]);
      expect(scanned?.deadLetters).toEqual(decoded.deadLetters);
      expect(scanned?.deadLetters.map((l) => l.error)).toEqual(['value is not valid UTF-8']);
    }
    // A byte-order mark before the text is dropped, as the UTF-8 decoding drops it.
    const bom = Uint8Array.from([0xef, 0xbb, 0xbf, ...Buffer.from('{"id": 3, "name": "é"}')]);
    const scanned = gatherJsonBatch([rawRecord({ value: bom })], options);
    expect(scanned?.deadLetters).toEqual([]);
    expect(scanned?.gathered?.toRows().map((r) => [r.id, r.name])).toEqual([[3n, 'é']]);
  });
});
