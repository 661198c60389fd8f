/**
 * The columnar decoding of an ESM event (records/esm-columns.ts into record-columns.ts) against the
 * record-by-record one (`columns: false`): on generated events — good records and every kind of bad
 * field (offsets, partitions, timestamps, base64, headers, schema metadata) — every record reads the
 * same (topic, partition, offset, timestamp, key, value, headers, decode error, original), in the
 * same order.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeEsmEvent, type RawRecord } from '../../../functions/core/records/esm-event.js';
import { BatchRecord, RecordStorage } from '../../../functions/core/records/record-columns.js';

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

/** A long text (decoded natively, not by short-base64.ts) with one character changed. */
const longBadBase64 = fc
  .tuple(
    fc.uint8Array({ minLength: 40, maxLength: 90 }),
    fc.nat(),
    fc.constantFrom('-', '_', '+', '/', '=', '*', ' ', '\n', 'é'),
    fc.boolean(),
  )
  .map(([bytes, at, c, url]) => {
    const text = Buffer.from(bytes).toString(url ? 'base64url' : 'base64');
    const i = at % text.length;
    return text.slice(0, i) + c + text.slice(i + 1);
  });

const base64Arb = fc.oneof(
  { weight: 10, arbitrary: fc.uint8Array({ maxLength: 40 }).map(b64) },
  fc.uint8Array({ minLength: 36, maxLength: 90 }).map(b64),
  longBadBase64,
  fc.uint8Array({ maxLength: 12 }).map((b) => b64(b).replace(/=+$/, '')), // unpadded
  fc.uint8Array({ maxLength: 12 }).map((b) => Buffer.from(b).toString('base64url')),
  fc.constantFrom('a+b-', 'ab/_', '***', 'ab c', 'YQ==\n', '', 'Y', 'YW=', 'YQ'),
  fc.constantFrom<unknown>(null, undefined, 7, ['YQ==']),
);

const headerArb = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.dictionary(
      fc.string({ maxLength: 5 }),
      fc.oneof(
        { weight: 5, arbitrary: fc.array(fc.integer({ min: -128, max: 255 }), { maxLength: 6 }) },
        fc.constant(null),
      ),
      { maxKeys: 2 },
    ),
  },
  fc.constantFrom<unknown>(null, [1], { h: [256] }, { h: 'x' }, { h: [1.5] }),
);

const recordArb = fc.record(
  {
    topic: fc.oneof({ weight: 8, arbitrary: fc.constantFrom('orders', 'b', 'é') }, fc.constant(5)),
    partition: fc.oneof(
      { weight: 8, arbitrary: fc.integer({ min: 0, max: 3 }) },
      fc.constantFrom<unknown>(-1, -0, 2 ** 31, 1.5, '1', null, 0x7fffffff),
    ),
    offset: fc.oneof(
      { weight: 8, arbitrary: fc.integer({ min: 0, max: 40 }) },
      fc.constantFrom<unknown>(
        -1,
        -0,
        1.5,
        2 ** 53,
        '12',
        '9223372036854775807',
        '9223372036854775808',
        null,
      ),
    ),
    timestamp: fc.oneof(
      { weight: 8, arbitrary: fc.integer({ min: -5, max: 2 ** 42 }) },
      fc.constantFrom<unknown>(null, -0, 1.5, 2 ** 53, '5'),
    ),
    timestampType: fc.constantFrom<unknown>('CREATE_TIME', 'LOG_APPEND_TIME', 3),
    key: base64Arb,
    value: base64Arb,
    headers: fc.oneof(
      { weight: 8, arbitrary: fc.array(headerArb, { maxLength: 3 }) },
      fc.constantFrom<unknown>(null, 'h', {}),
    ),
    valueSchemaMetadata: fc.constant({ dataFormat: 'JSON' }),
  },
  { requiredKeys: [] },
);

/** Mostly a record of the topic and partition its key names (the ESM's), else as generated. */
const keyedRecordArb = (key: string) =>
  fc.tuple(recordArb, fc.nat(9)).map(([record, n]) => {
    const dash = key.lastIndexOf('-');
    if (n < 2 || record === null || typeof record !== 'object') return record;
    const placed: Record<string, unknown> = { ...record, topic: key.slice(0, dash) };
    if (n > 3 && 'partition' in placed) placed.partition = Number(key.slice(dash + 1));
    return placed;
  });

const eventArb = fc
  .uniqueArray(
    fc
      .oneof(
        { weight: 6, arbitrary: fc.constantFrom('orders-0', 'orders-1', 'b-2', 'x--3') },
        fc.constantFrom('nodash', 'x-', 'orders-2147483648', 'orders--1'),
      )
      .chain((key) =>
        fc.tuple(
          fc.constant(key),
          fc.oneof(
            { weight: 10, arbitrary: fc.array(keyedRecordArb(key), { maxLength: 8 }) },
            fc.array(fc.constant(null)),
          ),
        ),
      ),
    { maxLength: 4, selector: ([key]) => key },
  )
  .map((groups) => Object.fromEntries(groups));

/** What a record reads as, getters included. */
function fields(r: RawRecord) {
  return {
    topic: r.topic,
    partition: r.partition,
    offset: r.offset,
    timestamp: r.timestamp,
    timestampType: r.timestampType,
    key: r.key && [...r.key],
    value: r.value && [...r.value],
    headers: r.headers.map((h) => [h.key, h.value && [...h.value]]),
    keySchemaMetadata: r.keySchemaMetadata,
    valueSchemaMetadata: r.valueSchemaMetadata,
    decodeError: r.decodeError,
    original: r.original,
  };
}

describe('decodeEsmEvent into columns', () => {
  it('reads every record as the record-by-record decoding does', () => {
    let columnar = 0;
    let plainRecords = 0;
    fc.assert(
      fc.property(eventArb, (groups) => {
        const event = { eventSource: 'aws:kafka', records: groups };
        const got = decodeEsmEvent(event).records;
        const want = decodeEsmEvent(event, { columns: false }).records;
        for (const r of got) {
          if (r instanceof BatchRecord) columnar++;
          else plainRecords++;
        }
        expect(want.some((r) => r instanceof BatchRecord)).toBe(false);
        expect(got.map(fields)).toEqual(want.map(fields));
      }),
      { seed: 20261205, numRuns: 1500 },
    );
    expect(columnar).toBeGreaterThan(300);
    expect(plainRecords).toBeGreaterThan(1000);
  });

  it('decodes one event after another into the buffers of the one before, as fresh buffers do', () => {
    let reused = 0;
    fc.assert(
      fc.property(fc.array(eventArb, { minLength: 2, maxLength: 5 }), (events) => {
        const storage = new RecordStorage();
        let before: Buffer | undefined;
        for (const groups of events) {
          const event = { eventSource: 'aws:kafka', records: groups };
          // Each decode's records are read in full before the next decode (the storage's contract).
          const got = decodeEsmEvent(event, { storage }).records.map(fields);
          expect(got).toEqual(decodeEsmEvent(event).records.map(fields));
          const bytes = storage.last?.bytes;
          if (before !== undefined && bytes === before) reused++;
          before = bytes;
        }
      }),
      { seed: 20261205, numRuns: 300 },
    );
    expect(reused).toBeGreaterThan(100);
  });

  it('keeps a record that needs the careful decoding a plain record, beside columnar ones', () => {
    const event = {
      eventSource: 'aws:kafka',
      records: {
        't-0': [
          { topic: 't', partition: 0, offset: 1, timestamp: 5, value: 'YQ==' },
          { topic: 't', partition: 0, offset: 2, timestamp: 5, value: 'YQ' },
          { topic: 't', partition: 0, offset: '3', timestamp: 5, value: 'Yg==' },
        ],
      },
    };
    const records = decodeEsmEvent(event).records;
    expect(records.map((r) => r instanceof BatchRecord)).toEqual([true, false, false]);
    expect(records.map((r) => Buffer.from(r.value!).toString())).toEqual(['a', 'a', 'b']);
  });
});
