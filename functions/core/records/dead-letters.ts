/**
 * Dead letters: records that could not be decoded or mapped are kept, with their raw bytes and the
 * reason, in an Iceberg table of their own (`<table>__dlq` by default). Nothing is dropped silently.
 */
import type { Schema, TableIdentifier } from '../spec/types.js';
import type { Row } from '../spec/types.js';
import type { RawRecord } from './esm-event.js';
import { headersValue, timestampMicros } from './kafka-lineage.js';

/**
 * Where a record failed; `duplicate`: its offset was held twice in one batch (the first is kept);
 * `late`: an aggregate route's record for a window the watermark had already closed.
 */
export type FailedStage = 'decode' | 'map' | 'schema' | 'write' | 'duplicate' | 'late';

export interface DeadLetter {
  record: RawRecord;
  stage: FailedStage;
  error: string;
}

export const DLQ_SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'topic', required: true, type: 'string' },
    { id: 2, name: 'partition', required: true, type: 'int' },
    { id: 3, name: 'offset', required: true, type: 'long' },
    { id: 4, name: 'timestamp', required: false, type: 'timestamptz' },
    { id: 5, name: 'key', required: false, type: 'binary' },
    { id: 6, name: 'value', required: false, type: 'binary' },
    {
      id: 7,
      name: 'headers',
      required: false,
      type: {
        type: 'list',
        'element-id': 8,
        'element-required': true,
        element: {
          type: 'struct',
          fields: [
            { id: 9, name: 'key', required: true, type: 'string' },
            { id: 10, name: 'value', required: false, type: 'binary' },
          ],
        },
      },
    },
    { id: 11, name: 'stage', required: true, type: 'string' },
    { id: 12, name: 'error', required: true, type: 'string' },
    { id: 13, name: 'failed_at', required: true, type: 'timestamptz' },
    { id: 14, name: 'target_table', required: true, type: 'string' },
    { id: 15, name: 'original', required: false, type: 'string' },
  ],
};

export function dlqIdentifier(table: TableIdentifier, name?: string): TableIdentifier {
  if (name) {
    const parts = name.split('.');
    return parts.length > 1
      ? { namespace: parts.slice(0, -1), name: parts[parts.length - 1] }
      : { namespace: table.namespace, name };
  }
  return { namespace: table.namespace, name: `${table.name}__dlq` };
}

export function deadLetterRow(letter: DeadLetter, targetTable: string, nowMs: number): Row {
  const r = letter.record;
  return {
    topic: r.topic,
    partition: r.partition,
    offset: r.offset,
    timestamp: timestampMicros(r.timestamp),
    key: r.key,
    value: r.value,
    headers: headersValue(r.headers),
    stage: letter.stage,
    error: letter.error,
    failed_at: BigInt(nowMs) * 1000n,
    target_table: targetTable,
    original: r.original === undefined ? null : JSON.stringify(r.original),
  };
}
