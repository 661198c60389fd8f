/**
 * The fitting decision of fitting-columns.ts made on the JSON value's UTF-8 bytes themselves: one pass
 * over a record's bytes appends its values to gathered columns, with no JSON.parse, no string for the
 * text, no object per record or nested struct, and no projection copy. Strings are copied byte for
 * byte into the column's UTF-8 buffer; numbers, decimals and canonical timestamps become exact doubles
 * in its typed storage (data/leaf-column.ts). A text it takes gives exactly what decoding the bytes
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
import type { ListColumn, StructColumn } from '../../data/gathered-rows.js';
import { appendAbsent } from '../../data/gathered-rows.js';
import type { IcebergType, StructType } from '../../spec/types.js';
import {
  afterItem,
  at,
  BAD,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  cursor,
  DONE,
  type JsonAppend,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  skipSpace,
  valueOrNull,
} from './json-cursor.js';
import { compilePrimitiveAppend } from './json-leaves.js';

function compileType(type: IcebergType): JsonAppend {
  if (typeof type === 'string') return compilePrimitiveAppend(type);
  if (type.type === 'struct') return compileFields(type) as JsonAppend;
  if (type.type === 'list') return compileList(type.element, type['element-required']);
  return () => false; // maps take the general path
}

function compileList(elementType: IcebergType, required: boolean): JsonAppend {
  const element = compileType(elementType);
  const appendList: JsonAppend = (column) => {
    if (at(cursor.pos) !== OPEN_BRACKET) return false;
    cursor.pos++;
    const list = column as ListColumn;
    let count = 0;
    if (skipSpace() !== CLOSE_BRACKET) {
      for (;;) {
        if (!valueOrNull(element, list.element, !required)) return false;
        count++;
        const after = afterItem(CLOSE_BRACKET);
        if (after === DONE) break;
        if (after === BAD) return false;
      }
    }
    cursor.pos++;
    list.valid.push(true);
    list.offsets.push(list.offsets[list.offsets.length - 1] + count);
    return true;
  };
  return appendList;
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
  // A name JSON writes with an escape never matches the text as written.
  const matchable = names.map((name) => JSON.stringify(name) === `"${name}"`);
  const required = type.fields.map((f) => f.required);
  const appends = type.fields.map((f) => compileType(f.type));
  const n = names.length;
  // seen[i] === the current row's mark: field i was in this object (a second time is a repeated key).
  const seen = new Array<number>(n).fill(0);
  let mark = 0;
  // Names as the UTF-8 bytes a key written as it is has (a matchable name is well-formed).
  const codes = names.map((name) => [...Buffer.from(name, 'utf8')]);
  // Whether the key at the cursor is field i's name, written as it is: compared byte by byte (names
  // are short; cheaper than a call per key).
  const keyIs = (i: number): boolean => {
    const name = codes[i];
    const len = name.length;
    const { buf, pos } = cursor;
    if (!matchable[i] || pos + len >= cursor.end || buf[pos + len] !== QUOTE) return false;
    for (let k = 0; k < len; k++) if (buf[pos + k] !== name[k]) return false;
    return true;
  };
  const appendStruct = (column: StructColumn): boolean => {
    if (at(cursor.pos) !== OPEN_BRACE) return false;
    cursor.pos++;
    const row = ++mark;
    let found = 0;
    let next = 0;
    if (skipSpace() !== CLOSE_BRACE) {
      for (;;) {
        if (at(cursor.pos) !== QUOTE) return false;
        cursor.pos++;
        let i = next < n && keyIs(next) ? next : -1;
        if (i < 0) {
          for (let j = 0; j < n; j++) {
            if (j !== next && keyIs(j)) {
              i = j;
              break;
            }
          }
        }
        if (i < 0 || seen[i] === row) return false;
        seen[i] = row;
        found++;
        cursor.pos += codes[i].length + 1;
        if (skipSpace() !== COLON) return false;
        cursor.pos++;
        skipSpace();
        if (!valueOrNull(appends[i], column.children[i], !required[i])) return false;
        next = i + 1;
        const after = afterItem(CLOSE_BRACE);
        if (after === DONE) break;
        if (after === BAD) return false;
      }
    }
    cursor.pos++;
    if (found < n) {
      for (let i = 0; i < n; i++) {
        if (seen[i] === row) continue;
        if (required[i]) return false;
        appendAbsent(column.children[i], false);
      }
    }
    column.valid.push(true);
    return true;
  };
  return appendStruct;
}

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
    cursor.pos = start;
    if (end - start >= 3 && json[start] === 0xef && json[start + 1] === 0xbb && json[start + 2] === 0xbf)
      cursor.pos += 3;
    try {
      if (skipSpace() !== OPEN_BRACE || !fields(column)) return false;
      skipSpace();
      return cursor.pos === cursor.end;
    } finally {
      cursor.buf = EMPTY; // keep no record alive
      cursor.end = 0;
      cursor.escaped = undefined;
    }
  };
}

const EMPTY = new Uint8Array(0);
