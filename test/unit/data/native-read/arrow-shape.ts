/**
 * An Arrow table as plain data, for comparing two readers' tables value by value and type by type:
 * every field's name, type, nullability and metadata, every batch's length, and per column each
 * slot's validity and value (bytes as hex, 64-bit values as decimal strings).
 */
import * as arrow from 'apache-arrow';

export interface FieldShape {
  name: string;
  type: string;
  nullable: boolean;
  metadata: [string, string][];
  children: FieldShape[];
}

export function fieldShape(f: arrow.Field): FieldShape {
  const t = f.type;
  let type = String(t);
  if (t instanceof arrow.Map_) type += ` keysSorted=${t.keysSorted}`;
  if (t instanceof arrow.Timestamp) type += ` tz=${String(t.timezone)}`;
  return {
    name: f.name,
    type: `${type} id=${t.typeId}`,
    nullable: f.nullable,
    metadata: [...f.metadata.entries()].sort(),
    children: (t.children ?? []).map(fieldShape),
  };
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** Slots [from, to) of `data` (indices before its own offset): null where invalid, nested as arrays. */
export function dataShape(data: arrow.Data, from = 0, to = data.length): unknown[] {
  const out: unknown[] = [];
  for (let i = from; i < to; i++) out.push(isValid(data, i) ? slotValue(data, i) : null);
  return [String(data.type), to - from, out];
}

function isValid(data: arrow.Data, i: number): boolean {
  const bitmap = data.nullBitmap;
  if (bitmap === undefined || bitmap.length === 0) return true;
  const at = data.offset + i;
  return ((bitmap[at >> 3] >> (at & 7)) & 1) === 1;
}

// The raw value of an invalid slot is not compared (arrow-rs zero-fills; so does floe's reader).
function slotValue(data: arrow.Data, i: number): unknown {
  const t = data.type;
  const at = data.offset + i;
  switch (t.typeId) {
    case arrow.Type.Struct:
      return data.children.map((c) => dataShape(c, at - c.offset + c.offset, at + 1));
    case arrow.Type.List:
    case arrow.Type.Map: {
      const o = data.valueOffsets as Int32Array;
      return ['list', o[at + 1] - o[at], dataShape(data.children[0], o[at], o[at + 1])];
    }
    case arrow.Type.Utf8:
    case arrow.Type.Binary: {
      const o = data.valueOffsets as Int32Array;
      return hex((data.values as Uint8Array).subarray(o[at], o[at + 1]));
    }
    case arrow.Type.Bool: {
      const v = data.values as Uint8Array;
      return ((v[at >> 3] >> (at & 7)) & 1) === 1;
    }
    case arrow.Type.FixedSizeBinary: {
      const w = (t as arrow.FixedSizeBinary).byteWidth;
      return hex((data.values as Uint8Array).subarray(at * w, (at + 1) * w));
    }
    case arrow.Type.Decimal: {
      const v = data.values as Uint32Array;
      return hex(new Uint8Array(v.buffer, v.byteOffset + at * 16, 16));
    }
    default: {
      const v = data.values as ArrayLike<number | bigint> & ArrayBufferView;
      const width = (v as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT;
      // Bytes, so NaN payloads and -0 compare exactly.
      return `${String(v[at])}:${hex(new Uint8Array(v.buffer, v.byteOffset + at * width, width))}`;
    }
  }
}

/** The whole table: schema, batch lengths, each column's slots; plus each Data's own offset (0). */
export function tableShape(table: arrow.Table): unknown {
  return {
    schema: table.schema.fields.map(fieldShape),
    schemaMetadata: [...table.schema.metadata.entries()],
    batches: table.batches.map((b) => ({
      rows: b.numRows,
      columns: b.data.children.map((c) => [c.offset, c.nullCount, dataShape(c)]),
    })),
  };
}
