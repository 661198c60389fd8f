/**
 * A decoded batch keeps each distinct header key once (record-columns.ts): a batch's records carry
 * the same few headers, and a key string per header was an array grown header by header. Every
 * header still reads its own key, in order, whatever the keys repeat or alternate.
 */
import { describe, expect, it } from 'vitest';
import { decodeEsmEvent } from '../../../functions/core/records/esm-event.js';
import { BatchRecord } from '../../../functions/core/records/record-columns.js';

const bytes = (text: string) => [...Buffer.from(text)];

function event(headers: Record<string, number[] | null>[][]) {
  return {
    eventSource: 'aws:kafka',
    records: {
      'orders-0': headers.map((hs, i) => ({
        topic: 'orders',
        partition: 0,
        offset: i,
        timestamp: 1_700_000_000_000,
        timestampType: 'CREATE_TIME',
        value: Buffer.from(`{"i":${i}}`).toString('base64'),
        headers: hs,
      })),
    },
  };
}

describe('header keys of a decoded batch', () => {
  it('are held once each, and every header reads its own', () => {
    // Prepare
    const headers: Record<string, number[] | null>[][] = [
      [{ 'trace-id': bytes('a1') }, { span: bytes('s1') }],
      [{ 'trace-id': bytes('a2') }, { span: null }],
      [],
      [{ span: bytes('s3') }, { 'trace-id': bytes('a3') }, { other: bytes('') }],
      [{ 'trace-id': bytes('a4') }],
    ];
    // Act
    const records = decodeEsmEvent(event(headers)).records;
    // Assess
    expect(records.every((r) => r instanceof BatchRecord)).toBe(true);
    const columns = (records[0] as BatchRecord).columns;
    expect(columns.headerKeys).toEqual(['trace-id', 'span', 'other']);
    expect(Array.from({ length: columns.headerCount }, (_, h) => columns.headerKeyAt(h))).toEqual([
      'trace-id',
      'span',
      'trace-id',
      'span',
      'span',
      'trace-id',
      'other',
      'trace-id',
    ]);
    expect(
      records.map((r) => r.headers.map((h) => [h.key, h.value && Buffer.from(h.value).toString()])),
    ).toEqual(
      headers.map((hs) =>
        hs.flatMap((h) => Object.entries(h).map(([k, v]) => [k, v && Buffer.from(v).toString()])),
      ),
    );
  });
});
