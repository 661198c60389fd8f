/**
 * The records of a table's live rows taken straight from the `_kafka` columns of their batches
 * (read-scan-batches.ts): offsets and timestamps from their typed arrays, keys and kept values as views
 * of the column's bytes (no copy: the batch encoder copies them once, into the batch), headers read
 * only when some row has any. No row object is built for `_kafka`; a row of the value columns only
 * for a record whose value is re-encoded.
 *
 * A batch whose `_kafka` struct has a null, or whose columns are not laid out as floe writes them,
 * goes through the row path (the rows as readScan gives them, then lineageOf), which names what is
 * wrong with it: a first read spends its time in the common case, and the rare one stays exact.
 */
import * as arrow from 'apache-arrow';
import { getArrowFieldId } from '../../data/arrow/arrow-schema.js';
import { readColumnValues } from '../../data/arrow/arrow-to-values.js';
import { batchRows } from '../../data/parquet/read/data-batch.js';
import { KAFKA_FIELD, KAFKA_SCHEMA_ID_FIELD, KAFKA_VALUE_FIELD } from '../../records/kafka-lineage.js';
import { lineageOf } from '../../records/replay-records.js';
import type { LiveBatch } from '../../scan/read-scan-batches.js';
import type { IcebergType, Row, StructField, StructType } from '../../spec/types.js';
import type { ColdRecord } from './record-batches.js';

/**
 * A record value for a row of the table's value columns (every column but `_kafka`) and the registry
 * schema id its record had (`_kafka.schema_id`, null when the table keeps none); a promise while that
 * schema is fetched (value-encoding.ts).
 */
export type ValueEncoder = (row: Row, schemaId: number | null) => Buffer | Promise<Buffer>;

/**
 * Appends the records of `live`'s rows to `out`, in the batch's order.
 * @throws ValidationError for a row without `_kafka` lineage, or a column that cannot be read as its type;
 *   what the value encoder's promise rejects with
 */
export async function appendColdRecords(
  live: LiveBatch,
  encodeValue: ValueEncoder,
  out: ColdRecord[],
): Promise<void> {
  const lineage = live.struct.fields.find((f) => f.name === KAFKA_FIELD);
  const data = lineage && live.batch.columns.get(lineage.id);
  const columns = lineage && data && kafkaColumns(lineage, data);
  if (!columns) {
    await rowRecords(live, encodeValue, out);
    return;
  }
  const rows = live.rows;
  const n = rows.length;
  const offsets = readColumnValues(columns.offset.type, columns.offset.data, '_kafka.offset', rows);
  if (offsets.some((o) => o === null)) {
    await rowRecords(live, encodeValue, out);
    return;
  }
  const stamps = columns.timestamp
    ? readColumnValues(columns.timestamp.type, columns.timestamp.data, '_kafka.timestamp', rows)
    : undefined;
  const keys = columns.key ? binaryViews(columns.key, '_kafka.key', rows) : undefined;
  const headers = columns.headers ? headerLists(columns.headers, rows) : undefined;
  const kept = columns.value ? binaryViews(columns.value, '_kafka.value', rows) : undefined;
  // Values re-encoded: only the rows without kept bytes, from the value columns alone.
  const missing: number[] = [];
  for (let k = 0; k < n; k++) if (!kept || kept[k] === null) missing.push(k);
  const encoded: (Buffer | Promise<Buffer>)[] = new Array(n);
  let pending = false;
  if (missing.length > 0) {
    const ids = columns.schemaId
      ? readColumnValues(columns.schemaId.type, columns.schemaId.data, '_kafka.schema_id', rows)
      : undefined;
    const valueStruct: StructType = {
      type: 'struct',
      fields: live.struct.fields.slice(0, live.projected).filter((f) => f.name !== KAFKA_FIELD),
    };
    const valueRows = batchRows(
      valueStruct,
      live.batch,
      Int32Array.from(missing, (k) => rows[k]),
    );
    for (let i = 0; i < missing.length; i++) {
      const id = ids?.[missing[i]];
      const value = encodeValue(valueRows[i], typeof id === 'number' ? id : null);
      encoded[missing[i]] = value;
      if (value instanceof Promise) pending = true;
    }
  }
  // Only a schema id's first read waits (its schema is fetched once, then compiled encoders answer).
  if (pending) {
    const values = await Promise.all(missing.map((k) => encoded[k]));
    for (let i = 0; i < missing.length; i++) encoded[missing[i]] = values[i];
  }
  for (let k = 0; k < n; k++) {
    const micros = stamps?.[k];
    out.push({
      offset: BigInt(offsets[k] as bigint),
      timestampMs:
        micros === null || micros === undefined ? -1n : BigInt(Number(BigInt(micros as bigint) / 1000n)),
      key: keys?.[k] ?? null,
      value: kept?.[k] ?? (encoded[k] as Buffer),
      headers: headers?.[k] ?? [],
    });
  }
}

interface Column {
  type: IcebergType;
  data: arrow.Data;
}

interface KafkaColumns {
  offset: Column;
  timestamp?: Column;
  key?: Column;
  headers?: Column;
  value?: Column;
  schemaId?: Column;
}

/** `_kafka`'s columns by field id, or undefined where the fast path cannot take the struct. */
function kafkaColumns(lineage: StructField, data: arrow.Data): KafkaColumns | undefined {
  const type = lineage.type;
  if (typeof type === 'string' || type.type !== 'struct') return undefined;
  if (data.type.typeId !== arrow.Type.Struct || data.nullCount > 0) return undefined;
  const fileFields = (data.type as arrow.Struct).children;
  const column = (name: string): Column | undefined | null => {
    const field = type.fields.find((f) => f.name === name);
    if (!field) return undefined;
    const k = fileFields.findIndex((f) => getArrowFieldId(f) === field.id);
    // A field the file lacks reads as null (a file written before `_kafka.value` was added).
    if (k < 0) return undefined;
    const child = data.children[k];
    // A child that does not line up with its struct: the row path judges it.
    if (child === undefined || child.length !== data.length) return null;
    return { type: field.type, data: child };
  };
  const offset = column('offset');
  const parts = {
    timestamp: column('timestamp'),
    key: column('key'),
    headers: column('headers'),
    value: column(KAFKA_VALUE_FIELD),
    schemaId: column(KAFKA_SCHEMA_ID_FIELD),
  };
  if (!offset || Object.values(parts).some((c) => c === null)) return undefined;
  return {
    offset,
    timestamp: parts.timestamp ?? undefined,
    key: parts.key ?? undefined,
    headers: parts.headers ?? undefined,
    value: parts.value ?? undefined,
    schemaId: parts.schemaId ?? undefined,
  };
}

/** A binary column's values of `rows` as Buffers over the column's bytes (null where null). */
function binaryViews(column: Column, path: string, rows: Int32Array): (Buffer | null)[] {
  const { data } = column;
  const id = data.type.typeId;
  if (column.type !== 'binary' || (id !== arrow.Type.Binary && id !== arrow.Type.LargeBinary)) {
    return readColumnValues(column.type, data, path, rows).map((v) =>
      v instanceof Uint8Array ? Buffer.from(v) : null,
    );
  }
  const bytes = data.values as Uint8Array;
  const offsets = data.valueOffsets as Int32Array | BigInt64Array;
  const bitmap = data.nullCount > 0 ? data.nullBitmap : undefined;
  const out: (Buffer | null)[] = new Array(rows.length);
  for (let k = 0; k < rows.length; k++) {
    const i = rows[k];
    const slot = data.offset + i;
    if (bitmap && ((bitmap[slot >> 3] >> (slot & 7)) & 1) === 0) {
      out[k] = null;
      continue;
    }
    const from = Number(offsets[i]);
    out[k] = Buffer.from(bytes.buffer, bytes.byteOffset + from, Number(offsets[i + 1]) - from);
  }
  return out;
}

/** The headers of `rows` (lineageOf's reading), or undefined when no row of the batch has any. */
function headerLists(column: Column, rows: Int32Array): ColdRecord['headers'][] | undefined {
  if ((column.data.children[0]?.length ?? 0) === 0) return undefined;
  return readColumnValues(column.type, column.data, '_kafka.headers', rows).map((list) =>
    ((list as Row[] | null) ?? []).map((h) => ({
      key: String(h.key),
      value: h.value instanceof Uint8Array ? Buffer.from(h.value) : null,
    })),
  );
}

/** The row path: rows as readScan builds them, read as lineageOf reads them. */
async function rowRecords(live: LiveBatch, encodeValue: ValueEncoder, out: ColdRecord[]): Promise<void> {
  const projection: StructType = { type: 'struct', fields: live.struct.fields.slice(0, live.projected) };
  for (const row of batchRows(projection, live.batch, live.rows)) {
    const lineage = lineageOf(row);
    const kafka = row[KAFKA_FIELD] as Row | null;
    const kept = kafka?.[KAFKA_VALUE_FIELD];
    const id = kafka?.[KAFKA_SCHEMA_ID_FIELD];
    const { [KAFKA_FIELD]: _lineage, ...values } = row;
    out.push({
      offset: lineage.offset,
      timestampMs: lineage.timestampMs === undefined ? -1n : BigInt(lineage.timestampMs),
      key: lineage.key === null ? null : Buffer.from(lineage.key),
      value:
        kept instanceof Uint8Array
          ? Buffer.from(kept)
          : await encodeValue(values as Row, typeof id === 'number' ? id : null),
      headers: lineage.headers.map((h) => ({
        key: h.key,
        value: h.value === null ? null : Buffer.from(h.value),
      })),
    });
  }
}
