import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import {
  advanceCheckpoint,
  alreadyReplayed,
  type Checkpoint,
  CHECKPOINT_HEADER,
  checkpointFromTail,
  formatCheckpoint,
  formatSource,
  parseCheckpoint,
  parseSource,
  SOURCE_HEADER,
} from '../../../functions/core/records/replay-source.js';

const header = (key: string, text: string | null) => ({
  key,
  value: text === null ? null : Buffer.from(text),
});

describe('floe-source header', () => {
  it('round-trips topic/partition/offset, offsets beyond 2^53 exactly', () => {
    // Prepare
    const position = { topic: 'orders.v1', partition: 3, offset: 9_007_199_254_740_993n };
    // Act
    const text = formatSource(position);
    // Assess
    expect(text).toBe('orders.v1/3/9007199254740993');
    expect(parseSource(text)).toEqual(position);
  });

  it.each(['orders', 'orders/1', 'orders/x/1', '/1/2', 'orders/1/-2', 'orders/1/2.5'])(
    'rejects %s',
    (text) => {
      expect(() => parseSource(text)).toThrow(ValidationError);
    },
  );
});

describe('checkpoint header', () => {
  it('round-trips per topic and partition, in a stable order', () => {
    // Prepare
    const checkpoint: Checkpoint = new Map([
      ['b', new Map([[1, 5n]])],
      [
        'a',
        new Map([
          [2, 9_007_199_254_740_993n],
          [0, 0n],
        ]),
      ],
    ]);
    // Act
    const text = formatCheckpoint(checkpoint);
    // Assess
    expect(text).toBe('{"a":{"0":"0","2":"9007199254740993"},"b":{"1":"5"}}');
    expect(parseCheckpoint(text)).toEqual(checkpoint);
  });

  it.each(['not json', '[]', '{"a":[1]}', '{"a":{"0":5}}', '{"a":{"x":"5"}}', '{"a":{"0":"-1"}}'])(
    'rejects %s',
    (text) => {
      expect(() => parseCheckpoint(text)).toThrow(ValidationError);
    },
  );

  it('advances only forward and tells what is already replayed', () => {
    // Prepare
    const checkpoint: Checkpoint = new Map();
    // Act
    advanceCheckpoint(checkpoint, { topic: 't', partition: 0, offset: 7n });
    advanceCheckpoint(checkpoint, { topic: 't', partition: 0, offset: 3n });
    // Assess
    expect(checkpoint.get('t')?.get(0)).toBe(7n);
    expect(alreadyReplayed(checkpoint, { topic: 't', partition: 0, offset: 7n })).toBe(true);
    expect(alreadyReplayed(checkpoint, { topic: 't', partition: 0, offset: 8n })).toBe(false);
    expect(alreadyReplayed(checkpoint, { topic: 't', partition: 1, offset: 0n })).toBe(false);
    expect(alreadyReplayed(undefined, { topic: 't', partition: 0, offset: 0n })).toBe(false);
  });
});

describe('checkpointFromTail', () => {
  it('takes the newest checkpoint header and the floe-source of every record after it', () => {
    // Prepare: a batch ended at a/0@4 (checkpoint), then a batch of b/0 whose end the tail shows
    const tail = [
      { headers: [header(SOURCE_HEADER, 'a/0/3')] },
      {
        headers: [header(SOURCE_HEADER, 'a/0/4'), header(CHECKPOINT_HEADER, '{"a":{"0":"4"},"b":{"0":"1"}}')],
      },
      { headers: [header(SOURCE_HEADER, 'b/0/2')] },
      { headers: [header('other', null)] }, // a foreign writer's record
      { headers: [header(SOURCE_HEADER, 'b/0/3')] },
    ];
    // Act
    const checkpoint = checkpointFromTail(tail);
    // Assess
    expect(checkpoint).toEqual(
      new Map([
        ['a', new Map([[0, 4n]])],
        ['b', new Map([[0, 3n]])],
      ]),
    );
  });

  it('is undefined when no record in the window carries a checkpoint', () => {
    expect(
      checkpointFromTail([{ headers: [header(SOURCE_HEADER, 'a/0/1')] }, { headers: [] }]),
    ).toBeUndefined();
    expect(checkpointFromTail([])).toBeUndefined();
  });
});
