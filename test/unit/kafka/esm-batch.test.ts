/**
 * The batch former turns consumed messages into exactly what the ESM delivers: the decoder the Lambda
 * runs reads them back byte for byte, and the ESM's limits (records, 6 MB of JSON) hold. No broker.
 */
import fc from 'fast-check';
import type { KafkaMessage } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import { decodeEsmEvent } from '../../../functions/core/records/esm-event.js';
import {
  type ConsumedMessage,
  ESM_MAX_PAYLOAD_BYTES,
  formEsmEvents,
  toEsmRecord,
} from '../../../functions/core/kafka/esm-batch.js';
import { toConsumedMessage } from '../../../functions/core/kafka/kafka-client.js';

function message(partition: number, offset: number, extra: Partial<ConsumedMessage> = {}): ConsumedMessage {
  return {
    topic: 'orders',
    partition,
    offset: String(offset),
    timestamp: 1_764_000_000_000 + offset,
    timestampType: 'CREATE_TIME',
    key: Buffer.from(`k${offset}`),
    value: Buffer.from(JSON.stringify({ id: offset })),
    headers: [],
    ...extra,
  };
}

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

describe('toEsmRecord', () => {
  it('writes the ESM record shape: base64 key and value, byte-array headers, ms timestamp', () => {
    // Prepare
    const m = message(2, 15, {
      headers: [
        { key: 'trace', value: Buffer.from('abc') },
        { key: 'bin', value: new Uint8Array([0, 255, 128]) },
        { key: 'trace', value: Buffer.from('d') },
      ],
      timestampType: 'LOG_APPEND_TIME',
    });
    // Act
    const record = toEsmRecord(m);
    // Assess
    expect(record).toEqual({
      topic: 'orders',
      partition: 2,
      offset: 15,
      timestamp: 1_764_000_000_015,
      timestampType: 'LOG_APPEND_TIME',
      key: Buffer.from('k15').toString('base64'),
      value: Buffer.from('{"id":15}').toString('base64'),
      headers: [{ trace: [97, 98, 99] }, { bin: [0, 255, 128] }, { trace: [100] }],
    });
  });

  it('omits an absent key and a tombstone value, as the ESM does', () => {
    const record = toEsmRecord(message(0, 1, { key: null, value: null }));
    expect('key' in record).toBe(false);
    expect('value' in record).toBe(false);
    const decoded = decodeEsmEvent({ eventSource: 'SelfManagedKafka', records: { 'orders-0': [record] } });
    expect(decoded.records[0].key).toBeNull();
    expect(decoded.records[0].value).toBeNull();
  });

  it('keeps an offset past 2^53 exact, as decimal text', () => {
    const record = toEsmRecord(message(0, 0, { offset: '9007199254740993' }));
    expect(record.offset).toBe('9007199254740993');
    const decoded = decodeEsmEvent({ eventSource: 'SelfManagedKafka', records: { 'orders-0': [record] } });
    expect(decoded.records[0].offset).toBe(9007199254740993n);
  });
});

describe('formEsmEvents', () => {
  it('forms a SelfManagedKafka event keyed topic-partition that the Lambda decoder reads back exactly', () => {
    // Prepare
    const messages = [
      message(0, 5),
      message(0, 6),
      message(3, 1, { headers: [{ key: 'h', value: new Uint8Array([1, 2]) }] }),
    ];
    // Act
    const [formed, ...rest] = formEsmEvents('b1:9092,b2:9092', messages, { batchSize: 100 });
    // Assess
    expect(rest).toEqual([]);
    expect(formed.event.eventSource).toBe('SelfManagedKafka');
    expect(formed.event.bootstrapServers).toBe('b1:9092,b2:9092');
    expect(Object.keys(formed.event.records)).toEqual(['orders-0', 'orders-3']);
    expect(formed.spans).toEqual([
      { topic: 'orders', partition: 0, first: 5n, last: 6n },
      { topic: 'orders', partition: 3, first: 1n, last: 1n },
    ]);
    const decoded = decodeEsmEvent(JSON.parse(JSON.stringify(formed.event)));
    expect(
      decoded.records.map((r) => [
        r.partition,
        r.offset,
        Buffer.from(r.key!).toString(),
        Buffer.from(r.value!).toString(),
      ]),
    ).toEqual([
      [0, 5n, 'k5', '{"id":5}'],
      [0, 6n, 'k6', '{"id":6}'],
      [3, 1n, 'k1', '{"id":1}'],
    ]);
    expect(decoded.records[2].headers).toEqual([{ key: 'h', value: new Uint8Array([1, 2]) }]);
    expect(decoded.records.every((r) => r.decodeError === undefined)).toBe(true);
  });

  it('cuts at the batch size', () => {
    const messages = Array.from({ length: 25 }, (_, i) => message(0, i));
    const events = formEsmEvents('b:9092', messages, { batchSize: 10 });
    expect(events.map((e) => e.records)).toEqual([10, 10, 5]);
    expect(events.map((e) => e.spans[0].first)).toEqual([0n, 10n, 20n]);
  });

  it('refuses a batch size outside the ESM limits', () => {
    expect(() => formEsmEvents('b:9092', [], { batchSize: 0 })).toThrow(ValidationError);
    expect(() => formEsmEvents('b:9092', [], { batchSize: 10_001 })).toThrow(/1 to 10000/);
  });

  it('keeps every event within 6 MB of JSON, and counts its bytes exactly', () => {
    // Prepare: 300 KB values, so 6 MB holds ~15 of them (base64 grows them by a third)
    const big = Buffer.alloc(300 * 1024, 7);
    const messages = Array.from({ length: 60 }, (_, i) => message(i % 2, i, { value: big }));
    // Act
    const events = formEsmEvents('b:9092', messages, { batchSize: 10_000 });
    // Assess
    expect(events.length).toBeGreaterThan(1);
    expect(events.reduce((n, e) => n + e.records, 0)).toBe(60);
    for (const e of events) {
      expect(e.bytes).toBe(jsonBytes(e.event));
      expect(e.bytes).toBeLessThanOrEqual(ESM_MAX_PAYLOAD_BYTES);
    }
  });

  it('gives a record larger than the cap an event of its own rather than dropping it', () => {
    const events = formEsmEvents(
      'b:9092',
      [message(0, 0), message(0, 1, { value: Buffer.alloc(200) }), message(0, 2)],
      { batchSize: 100, maxPayloadBytes: 300 },
    );
    expect(events.map((e) => e.records)).toEqual([1, 1, 1]);
    expect(events[1].bytes).toBeGreaterThan(300);
  });

  it('holds for any messages: counts, bytes and order (property)', () => {
    const arbMessage = fc.record({
      partition: fc.integer({ min: 0, max: 3 }),
      key: fc.option(fc.uint8Array({ maxLength: 40 }), { nil: null }),
      value: fc.option(fc.uint8Array({ maxLength: 400 }), { nil: null }),
      headers: fc.array(
        fc.record({ key: fc.string({ maxLength: 8 }), value: fc.uint8Array({ maxLength: 8 }) }),
        {
          maxLength: 3,
        },
      ),
    });
    fc.assert(
      fc.property(
        fc.array(arbMessage, { maxLength: 80 }),
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 200, max: 4000 }),
        (raw, batchSize, maxPayloadBytes) => {
          const messages = raw.map((m, i) =>
            message(m.partition, i, { key: m.key, value: m.value, headers: m.headers }),
          );
          const events = formEsmEvents('b:9092', messages, { batchSize, maxPayloadBytes });
          const out = events.flatMap((e) => decodeEsmEvent(JSON.parse(JSON.stringify(e.event))).records);
          expect(out.map((r) => Number(r.offset)).sort((a, b) => a - b)).toEqual(messages.map((_, i) => i));
          for (const e of events) {
            expect(e.records).toBeLessThanOrEqual(batchSize);
            expect(e.bytes).toBe(jsonBytes(e.event));
            if (e.records > 1) expect(e.bytes).toBeLessThanOrEqual(maxPayloadBytes);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('toConsumedMessage (kafkajs messages)', () => {
  it('reads key, value, repeated and string headers, and the batch timestamp type', () => {
    const kafkajsMessage = {
      offset: '42',
      timestamp: '1764000000123',
      attributes: 0,
      key: Buffer.from('k'),
      value: null,
      size: 0,
      headers: { a: [Buffer.from([1]), Buffer.from([2])], s: 'text', n: undefined },
      batchContext: { timestampType: 1 },
    } as unknown as KafkaMessage;
    const m = toConsumedMessage('t', 3, kafkajsMessage);
    expect(m).toMatchObject({ topic: 't', partition: 3, offset: '42', timestamp: 1_764_000_000_123 });
    expect(m.timestampType).toBe('LOG_APPEND_TIME');
    expect(Buffer.from(m.key!).toString()).toBe('k');
    expect(m.value).toBeNull();
    expect(m.headers.map((h) => [h.key, [...h.value]])).toEqual([
      ['a', [1]],
      ['a', [2]],
      ['s', [...Buffer.from('text')]],
      ['n', []],
    ]);
  });
});
