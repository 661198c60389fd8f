import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import { decodeBase64, decodeEsmEvent } from '../../../functions/core/records/esm-event.js';

const awsSample = () => JSON.parse(readFileSync('test/fixtures/aws-docs-msk-event.json', 'utf8'));

describe('decodeEsmEvent', () => {
  it("decodes AWS's own sample MSK event, non-canonical key included", () => {
    const { eventSource, records } = decodeEsmEvent(awsSample());
    expect(eventSource).toBe('aws:kafka');
    expect(records).toHaveLength(1);
    const [r] = records;
    expect(r.decodeError).toBeUndefined();
    expect(r).toMatchObject({
      topic: 'mytopic',
      partition: 0,
      offset: 15n,
      timestamp: 1545084650987,
      timestampType: 'CREATE_TIME',
    });
    expect(Buffer.from(r.value!).toString()).toBe('Hello, this is a test.');
    expect(r.key!.length).toBeGreaterThan(0);
    expect(r.headers).toEqual([{ key: 'headerKey', value: Uint8Array.from(Buffer.from('headerValue')) }]);
  });

  it('accepts SelfManagedKafka and sorts records by topic, partition, offset', () => {
    const event = {
      eventSource: 'SelfManagedKafka',
      records: {
        'b-1': [
          { topic: 'b', partition: 1, offset: 9, timestamp: 1, timestampType: 'CREATE_TIME', value: null },
        ],
        'a-0': [
          { topic: 'a', partition: 0, offset: 3, timestamp: 1, timestampType: 'CREATE_TIME' },
          { topic: 'a', partition: 0, offset: 2, timestamp: 1, timestampType: 'CREATE_TIME' },
        ],
      },
    };
    const { records } = decodeEsmEvent(event);
    expect(records.map((r) => `${r.topic}-${r.partition}@${r.offset}`)).toEqual(['a-0@2', 'a-0@3', 'b-1@9']);
    expect(records[2].value).toBeNull();
    expect(records[0].key).toBeNull();
  });

  it.each([
    [null, 'not an object'],
    [[], 'not an object'],
    [{ eventSource: 'aws:sqs', records: {} }, 'eventSource is "aws:sqs"'],
    [{ eventSource: 'aws:kafka' }, 'records must be an object'],
    [{ eventSource: 'aws:kafka', records: { 'a-0': 'x' } }, 'must be an array'],
  ])('rejects a non-ESM event %#', (event, message) => {
    expect(() => decodeEsmEvent(event)).toThrow(ValidationError);
    expect(() => decodeEsmEvent(event)).toThrow(message);
  });

  it('marks bad records instead of failing the batch', () => {
    const event = awsSample();
    const good = event.records['mytopic-0'][0];
    event.records['mytopic-0'].push(
      { ...good, offset: 16, value: '***not base64***' },
      { ...good, offset: 17, headers: [{ h: 'not bytes' }] },
      { ...good, offset: 18, headers: 'nope' },
      { ...good, offset: -1 },
      { ...good, offset: 19, key: 42 },
      { ...good, offset: 20, headers: [{ h: [1, 2, 999] }] },
    );
    const { records } = decodeEsmEvent(event);
    expect(records.filter((r) => r.decodeError === undefined)).toHaveLength(1);
    const errors = records.map((r) => r.decodeError).filter(Boolean);
    expect(errors).toEqual(
      expect.arrayContaining([
        'value is not valid base64',
        "header 'h' is not an array of bytes",
        'headers must be an array',
        'record offset -1 is not a Kafka offset (an integer from 0 to 9223372036854775807)',
        'key must be a base64 string',
      ]),
    );
    expect(records.find((r) => r.offset === 16n)?.original).toMatchObject({ value: '***not base64***' });
  });

  it('makes a record with a timestamp that is not whole epoch milliseconds a dead letter, not a failed batch', () => {
    // Arrange
    const event = awsSample();
    const good = event.records['mytopic-0'][0];
    event.records['mytopic-0'].push(
      { ...good, offset: 16, timestamp: 1.5 },
      { ...good, offset: 17, timestamp: 1e300 },
      { ...good, offset: 18, timestamp: '1545084650987' },
      { ...good, offset: 19, timestamp: -1 }, // Kafka's "no timestamp"
      { ...good, offset: 20, timestamp: undefined },
    );

    // Act
    const { records } = decodeEsmEvent(event);

    // Assess
    expect(records.map((r) => [r.offset, r.decodeError, r.timestamp])).toEqual([
      [15n, undefined, 1545084650987],
      [16n, 'record timestamp 1.5 is not an integer number of epoch milliseconds', 0],
      [17n, 'record timestamp 1e+300 is not an integer number of epoch milliseconds', 0],
      [18n, 'record timestamp "1545084650987" is not an integer number of epoch milliseconds', 0],
      [19n, undefined, -1],
      [20n, undefined, 0],
    ]);
  });

  it('refuses partitions and offsets the int and long lineage columns cannot hold; a record with no valid partition is placed nowhere', () => {
    // Arrange
    const event = awsSample();
    const good = event.records['mytopic-0'][0];
    event.records['mytopic-0'].push(
      { ...good, offset: 16, partition: 2 ** 31 },
      { ...good, offset: 17, partition: -1e300 },
      { ...good, offset: 18, partition: '0' },
      { ...good, offset: 19, partition: null },
      { ...good, offset: '9223372036854775808' },
      { ...good, offset: '9223372036854775807' },
    );

    // Act
    const { records } = decodeEsmEvent(event);

    // Assess: a bad partition leaves the record at partition -1, offset -1 (it claims no offset; its
    // values as given are in the message and its original); a bad offset keeps its valid partition.
    const partitionError = (p: string) =>
      `record partition ${p} is not a Kafka partition number (an integer from 0 to 2147483647)`;
    expect(records.map((r) => [r.partition, r.offset, r.decodeError])).toEqual([
      [-1, -1n, partitionError('2147483648')],
      [-1, -1n, partitionError('-1e+300')],
      [-1, -1n, partitionError('"0"')],
      [
        0,
        -1n,
        'record offset "9223372036854775808" is not a Kafka offset (an integer from 0 to 9223372036854775807)',
      ],
      [0, 15n, undefined],
      [0, 19n, undefined],
      [0, 9223372036854775807n, undefined],
    ]);
  });

  it('maps signed header bytes from Java producers to unsigned', () => {
    const event = awsSample();
    event.records['mytopic-0'][0].headers = [{ sig: [-1, -128, 127] }];
    expect(decodeEsmEvent(event).records[0].headers[0].value).toEqual(Uint8Array.of(255, 128, 127));
  });
});

describe('decodeBase64', () => {
  it('accepts missing padding and base64url, rejects foreign characters', () => {
    expect(Buffer.from(decodeBase64('aGk', 'v')).toString()).toBe('hi');
    expect(decodeBase64('-_8', 'v')).toEqual(Uint8Array.of(0xfb, 0xff));
    expect(() => decodeBase64('a$b=', 'v')).toThrow('v is not valid base64');
    expect(() => decodeBase64('abcde', 'v')).toThrow('bad length');
  });
});
