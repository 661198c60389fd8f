/** Builders for mapping and evolution tests: raw records, decoded records, a table metadata. */
import type { RawRecord } from '../../../functions/core/records/esm-event.js';
import type { DecodedRecord } from '../../../functions/core/mapping/decoded-record.js';
import { newTableMetadata } from '../../../functions/core/spec/metadata.js';
import type { PartitionSpec, Schema, TableMetadata } from '../../../functions/core/spec/types.js';

const enc = new TextEncoder();

export function rawRecord(over: Partial<RawRecord> = {}): RawRecord {
  return {
    topic: 'orders',
    partition: 0,
    offset: 0n,
    timestamp: 1_795_168_800_123,
    timestampType: 'CREATE_TIME',
    key: null,
    value: null,
    headers: [],
    ...over,
  };
}

export function header(key: string, value: string | Uint8Array) {
  return { key, value: typeof value === 'string' ? enc.encode(value) : value };
}

export function decoded(
  value: unknown,
  over: Partial<RawRecord> & { decodedKey?: unknown } = {},
): DecodedRecord {
  const { decodedKey, ...rest } = over;
  const record = rawRecord(rest);
  return { value, key: decodedKey !== undefined ? decodedKey : record.key, record };
}

export function metadataOf(schema: Schema, spec?: PartitionSpec): TableMetadata {
  return newTableMetadata({ location: 'file:///tmp/never-written', schema, spec });
}

export const bytes = (s: string) => enc.encode(s);
