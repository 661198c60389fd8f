/** Builders for mapping and evolution tests: raw records, decoded records, a table metadata. */
import { decodeEsmEvent, type RawRecord } from '../../../functions/core/records/esm-event.js';
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

/**
 * The records as the ESM delivers them and decodeEsmEvent decodes them (columnar records where
 * the shape allows: BatchRecord), in the order given (offsets must differ within a topic-partition).
 */
export function throughEsmEvent(records: readonly RawRecord[]): RawRecord[] {
  const groups: Record<string, unknown[]> = {};
  for (const r of records) {
    const offset = Number(r.offset);
    const group = `${r.topic}-${r.partition}`;
    groups[group] ??= [];
    groups[group].push({
      topic: r.topic,
      partition: r.partition,
      offset: Number.isSafeInteger(offset) ? offset : String(r.offset),
      timestamp: r.timestamp,
      timestampType: r.timestampType,
      key: r.key === null ? null : Buffer.from(r.key).toString('base64'),
      value: r.value === null ? null : Buffer.from(r.value).toString('base64'),
      headers: r.headers.map((h) => ({ [h.key]: h.value === null ? null : [...h.value] })),
    });
  }
  const decoded = decodeEsmEvent({ eventSource: 'aws:kafka', records: groups }).records;
  const at = (r: RawRecord) => `${r.topic}\u0000${r.partition}\u0000${r.offset}`;
  const byKey = new Map(decoded.map((r) => [at(r), r]));
  return records.map((r) => byKey.get(at(r)) as RawRecord);
}
