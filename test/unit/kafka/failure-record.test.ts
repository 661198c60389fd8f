/** The ESM's on-failure records: the event comes back out of S3 objects and on-failure topic messages. */
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import { parseFailureRecord } from '../../../functions/core/kafka/failure-record.js';

const event = {
  eventSource: 'aws:kafka',
  records: { 'orders-0': [{ topic: 'orders', partition: 0, offset: 5 }] },
};
const record = (payload: unknown) => ({
  requestContext: { condition: 'RetryAttemptsExhausted', approximateInvokeCount: 3 },
  responseContext: { statusCode: 200, functionError: 'Unhandled' },
  version: '1.0',
  timestamp: '2026-11-30T12:00:00.000Z',
  KafkaBatchInfo: { batchSize: 1 },
  payload,
});

describe('parseFailureRecord', () => {
  it('gives the invocation event with the condition and time', () => {
    expect(parseFailureRecord(record(event), 'x')).toEqual({
      condition: 'RetryAttemptsExhausted',
      timestamp: '2026-11-30T12:00:00.000Z',
      event,
    });
  });

  it('reads a payload stored as JSON text', () => {
    expect(parseFailureRecord(record(JSON.stringify(event)), 'x').event).toEqual(event);
  });

  it('refuses documents that are not on-failure records, or carry no event', () => {
    expect(() => parseFailureRecord({ records: {} }, 'a.json')).toThrow(
      /a\.json is not a Kafka event source mapping on-failure record/,
    );
    expect(() => parseFailureRecord(record(undefined), 'b.json')).toThrow(/carries no invocation payload/);
    expect(() => parseFailureRecord(record('{not json'), 'c.json')).toThrow(ValidationError);
  });
});
