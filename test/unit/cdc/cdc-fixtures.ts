/** Small builders for CDC unit tests: raw Kafka records and key columns. */
import type { KeyColumn } from '../../../functions/core/routing/table-mode.js';
import type { RawRecord } from '../../../functions/core/records/esm-event.js';

const bytes = (text: string) => new Uint8Array(Buffer.from(text));

/** A Kafka record with JSON (or raw text) key and value; `null` = absent. */
export function rawRecord(
  offset: number,
  key: unknown,
  value: unknown,
  options: { partition?: number; topic?: string; rawKey?: boolean } = {},
): RawRecord {
  const encode = (v: unknown, raw = false) =>
    v === null ? null : bytes(raw && typeof v === 'string' ? v : JSON.stringify(v));
  return {
    topic: options.topic ?? 'db.public.items',
    partition: options.partition ?? 0,
    offset: BigInt(offset),
    timestamp: 1_795_000_000_000 + offset,
    timestampType: 'CREATE_TIME',
    key: encode(key, options.rawKey),
    value: encode(value),
    headers: [],
  };
}

export const ID_KEY: KeyColumn[] = [{ id: 1, name: 'id', path: ['id'], type: 'long' }];
