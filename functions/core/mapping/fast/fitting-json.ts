/**
 * The fitting decision of fitting-columns.ts made on the JSON value's UTF-8 bytes themselves: one pass
 * over a record's bytes appends its values to gathered columns, with no JSON.parse, no string for the
 * text, no object per record or nested struct, and no projection copy. Strings are copied byte for
 * byte into the column's UTF-8 buffer; numbers, decimals and canonical timestamps become exact doubles
 * in its typed storage (data/arrow/leaf-column.ts). A text it takes gives exactly what decoding the bytes
 * (parse-json.ts) and compileFittingColumns' append would give; for anything else (invalid JSON or
 * UTF-8, a key that is not a field, a repeated key, an escaped key, a number of 16+ characters, a
 * value of the wrong kind) it answers false and the record takes the general path, which decides and
 * explains.
 *
 * Why by hand: the JSON parsers on npm build objects (what this avoids) or are native add-ons; none
 * reads bytes straight into schema-shaped columns with JSON.parse's exact semantics. The scanner
 * validates everything it accepts (grammar, string control characters, UTF-8 sequences, escapes
 * through JSON.parse of that one string), so a text it takes is a text JSON.parse takes. The
 * per-value conversions are fitting-row.ts' own (compilePrimitive) or byte ports of their fast paths
 * (byte-values.ts), applied to the same values JSON.parse would give: strings, booleans, and numbers
 * rounded as V8 rounds them (test/unit/evolution/fitting-json.test.ts holds the two equal on
 * generated schemas and texts).
 */
import type { GatheredColumn, LeafColumn, ListColumn, StructColumn } from '../../data/arrow/gathered-rows.js';
import { appendAbsent } from '../../data/arrow/gathered-rows.js';
import type { IcebergType, StructType } from '../../spec/types.js';
import {
  CLOSE_BRACE,
  BAD,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  cursor,
  DONE,
  type JsonAppend,
  LOWER_N,
  nextItem,
  nullAt,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  spaceEnd,
} from './json-cursor.js';
import {
  compileLeafPlan,
  LEAF_DECIMAL,
  LEAF_DOUBLE,
  LEAF_FLOAT,
  LEAF_INT,
  LEAF_LONG,
  LEAF_OTHER,
  LEAF_STRING,
  LEAF_TIMESTAMP,
  LEAF_TIMESTAMPTZ,
  type LeafPlan,
  scanDecimal,
  scanNumber,
  scanOther,
  scanString,
  scanTimestamp,
} from './json-leaves.js';

/** A type's scan: a primitive's plan (read by appendField's switch), or a struct's, list's or map's closure. */
interface FieldPlan {
  readonly kind: number;
  readonly leaf: LeafPlan | undefined;
  readonly append: JsonAppend | undefined;
}

const FIELD_STRUCT = -1;
const FIELD_LIST = -2;
const FIELD_MAP = -3;

function compileType(type: IcebergType): FieldPlan {
  if (typeof type === 'string') {
    const leaf = compileLeafPlan(type);
    return { kind: leaf.kind, leaf, append: undefined };
  }
  if (type.type === 'struct')
    return { kind: FIELD_STRUCT, leaf: undefined, append: compileFields(type) as JsonAppend };
  if (type.type === 'list')
    return { kind: FIELD_LIST, leaf: undefined, append: compileList(type.element, type['element-required']) };
  return { kind: FIELD_MAP, leaf: undefined, append: () => false }; // maps take the general path
}

function compileList(elementType: IcebergType, required: boolean): JsonAppend {
  const plan = compileType(elementType);
  const appendList: JsonAppend = (column) => {
    const { buf, end } = cursor;
    let pos = cursor.pos;
    if (pos >= end || buf[pos] !== OPEN_BRACKET) return false;
    pos = spaceEnd(buf, pos + 1, end);
    if (pos >= end) return false;
    const list = column as ListColumn;
    const element = list.element;
    let count = 0;
    if (buf[pos] !== CLOSE_BRACKET) {
      for (;;) {
        // pos is at a non-space byte inside the bytes. A null or a value, then the separator: the
        // steps of appendStruct's member loop, written out in both (one helper for the two measured
        // ~0.5 ms slower on the 10,000-record bench batch).
        if (buf[pos] === LOWER_N) {
          if (required || !nullAt(buf, pos, end)) return false;
          pos += 4;
          appendAbsent(element, false);
        } else {
          cursor.pos = pos;
          if (!appendField(plan, element)) return false;
          pos = cursor.pos;
        }
        count++;
        // Most items are followed by a comma and the next item at once (no call for them).
        if (pos + 1 < end && buf[pos] === COMMA && buf[pos + 1] > 32) pos++;
        else {
          const after = nextItem(buf, pos, end, CLOSE_BRACKET);
          if (after === DONE) break;
          if (after === BAD) return false;
          pos = after;
        }
      }
    } else cursor.pos = pos + 1;
    list.valid.pushValid();
    list.offsets.pushCount(count);
    return true;
  };
  return appendList;
}

/** The value at the cursor (not null) appended to `column` as `plan` reads it. */
function appendField(plan: FieldPlan, column: GatheredColumn): boolean {
  const leaf = plan.leaf;
  switch (plan.kind) {
    case LEAF_STRING:
      return scanString(column as LeafColumn);
    case LEAF_INT:
    case LEAF_LONG:
    case LEAF_DOUBLE:
    case LEAF_FLOAT:
      return scanNumber(column as LeafColumn, plan.kind);
    case LEAF_TIMESTAMP:
    case LEAF_TIMESTAMPTZ:
      return scanTimestamp(column as LeafColumn, plan.kind === LEAF_TIMESTAMP, (leaf as LeafPlan).convert);
    case LEAF_DECIMAL: {
      const { precision, scale, convert } = leaf as LeafPlan;
      return scanDecimal(column as LeafColumn, precision, scale, convert);
    }
    case LEAF_OTHER:
      return scanOther(column as LeafColumn, (leaf as LeafPlan).convert);
  }
  return (plan.append as JsonAppend)(column);
}

/** A field's key as bytes, and its first bytes four at a time (little-endian): fewer compares a key. */
interface Key {
  readonly bytes: Uint16Array;
  readonly words: Int32Array;
}

function keyOf(bytes: readonly number[]): Key {
  const words = new Int32Array(bytes.length >> 2);
  for (let w = 0; w < words.length; w++) {
    const k = w * 4;
    words[w] = bytes[k] | (bytes[k + 1] << 8) | (bytes[k + 2] << 16) | (bytes[k + 3] << 24);
  }
  return { bytes: Uint16Array.from(bytes), words };
}

/** Whether buf[pos, end) starts with the key's first len bytes. */
function keyAt(key: Key, len: number, buf: Uint8Array, pos: number, end: number): boolean {
  if (pos + len > end) return false;
  const words = key.words;
  let k = 0;
  for (; k + 4 <= len; k += 4) {
    const p = pos + k;
    if ((buf[p] | (buf[p + 1] << 8) | (buf[p + 2] << 16) | (buf[p + 3] << 24)) !== words[k >> 2])
      return false;
  }
  const bytes = key.bytes;
  for (; k < len; k++) if (buf[pos + k] !== bytes[k]) return false;
  return true;
}

/**
 * An object's fields appended to a struct column. Keys are matched as they are written (a key with
 * an escape, or a field name that would need one, never matches: the general path decides those);
 * the field after the last one matched is tried first, as producers write fields in one order.
 * Children are appended in the text's key order; each gets exactly one value per row, and the
 * fields the text does not have get null afterwards.
 */
function compileFields(type: StructType): (column: StructColumn) => boolean {
  const names = type.fields.map((f) => f.name);
  const required = type.fields.map((f) => f.required);
  const plans = type.fields.map((f) => compileType(f.type));
  const n = names.length;
  // seen[i] === the current row's mark: field i was in this object (a second time is a repeated key).
  const seen = new Array<number>(n).fill(0);
  let mark = 0;
  // Each name's key as written without an escape, with its quotes and the colon: `"name":` in UTF-8.
  // A name JSON writes with an escape has none (the text as written never matches it).
  const keys = names.map((name) =>
    JSON.stringify(name) === `"${name}"`
      ? keyOf([QUOTE, ...Buffer.from(name, 'utf8'), QUOTE, COLON])
      : NO_KEY,
  );
  /** The field whose key, up to its closing quote, is at pos, or -1. */
  const fieldAt = (buf: Uint8Array, pos: number, end: number): number => {
    for (let j = 0; j < n; j++) if (keyAt(keys[j], keys[j].bytes.length - 1, buf, pos, end)) return j;
    return -1;
  };
  const appendStruct = (column: StructColumn): boolean => {
    const { buf, end } = cursor;
    let pos = cursor.pos;
    if (pos >= end || buf[pos] !== OPEN_BRACE) return false;
    pos = spaceEnd(buf, pos + 1, end);
    const row = ++mark;
    let found = 0;
    let next = 0;
    if (pos >= end) return false;
    if (buf[pos] !== CLOSE_BRACE) {
      for (;;) {
        // pos is at a non-space byte inside the bytes. The common case: the predicted field's key
        // and its colon as one run; otherwise any field's key, and the colon after any whitespace.
        const predicted = next < n ? next : 0;
        const key = keys[predicted];
        let i = predicted;
        const len = key.bytes.length;
        if (keyAt(key, len, buf, pos, end)) pos += len;
        else {
          i = fieldAt(buf, pos, end);
          if (i < 0) return false;
          pos = spaceEnd(buf, pos + keys[i].bytes.length - 1, end);
          if (pos >= end || buf[pos] !== COLON) return false;
          pos++;
        }
        if (seen[i] === row) return false;
        seen[i] = row;
        found++;
        if (pos < end && buf[pos] <= 32) pos = spaceEnd(buf, pos, end);
        if (pos >= end) return false;
        const child = column.children[i];
        if (buf[pos] === LOWER_N) {
          if (required[i] || !nullAt(buf, pos, end)) return false;
          pos += 4;
          appendAbsent(child, false);
        } else {
          cursor.pos = pos;
          if (!appendField(plans[i], child)) return false;
          pos = cursor.pos;
        }
        next = i + 1;
        // Most items are followed by a comma and the next item at once (no call for them).
        if (pos + 1 < end && buf[pos] === COMMA && buf[pos + 1] > 32) pos++;
        else {
          const after = nextItem(buf, pos, end, CLOSE_BRACE);
          if (after === DONE) break;
          if (after === BAD) return false;
          pos = after;
        }
      }
    } else cursor.pos = pos + 1;
    if (found < n) {
      for (let i = 0; i < n; i++) {
        if (seen[i] === row) continue;
        if (required[i]) return false;
        appendAbsent(column.children[i], false);
      }
    }
    column.valid.pushValid();
    return true;
  };
  return appendStruct;
}

/** A key no bytes match (256 is no byte), even without its last. */
const NO_KEY = keyOf([256, 256]);

/**
 * Compiles the scan of a JSON object's UTF-8 bytes (json[start, end)) into a struct column (whose children are the
 * struct's fields, in order). The returned function appends one row, or answers false; on false the
 * columns may be partly written (the caller truncates them, as for fitting-columns.ts). A leading
 * byte-order mark is skipped, as the UTF-8 decoding of parse-json.ts drops it.
 */
export function compileJsonFields(
  type: StructType,
): (column: StructColumn, json: Uint8Array, start: number, end: number) => boolean {
  const fields = compileFields(type);
  return (column, json, start, end) => {
    cursor.buf = json;
    cursor.end = end;
    const bom =
      end - start >= 3 && json[start] === 0xef && json[start + 1] === 0xbb && json[start + 2] === 0xbf;
    cursor.pos = spaceEnd(json, bom ? start + 3 : start, end);
    try {
      if (!fields(column)) return false;
      return spaceEnd(json, cursor.pos, end) === end;
    } finally {
      cursor.buf = EMPTY; // keep no record alive
      cursor.end = 0;
      cursor.escaped = undefined;
    }
  };
}

const EMPTY = new Uint8Array(0);
