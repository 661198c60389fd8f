/**
 * The fast path of fitting-row.ts, gathering columns instead of building row objects: a decoded value
 * that fits the schema as it is (the same test and the same conversions as compileFittingRow) is
 * appended to gathered columns (data/arrow/gathered-rows.ts); one that does not leaves them as they were
 * and answers false. test/unit/evolution/fitting-columns.test.ts checks both give the same rows.
 */
import {
  appendAbsent,
  appendValue,
  columnLength,
  emptyColumns,
  type GatheredColumn,
  type LeafColumn,
  type ListColumn,
  type StructColumn,
  truncateColumn,
  Validity,
} from '../../data/arrow/gathered-rows.js';
import type { IcebergType, StructType, Value } from '../../spec/types.js';
import { isFieldObject, ownValue } from '../value-paths.js';
import type { RawRecord } from '../../records/esm-event.js';
import { KAFKA_FIELD } from '../../records/kafka-lineage.js';
import { compileJsonFields } from './fitting-json.js';
import { compileLineageAppend } from './lineage-columns.js';
import { compilePrimitive, depthOf, inheritedNames, MAX_DEPTH, NOT_FITTING } from './fitting-row.js';

/** Appends a (non-null) value to a column; false when it does not fit (the column may be left partly written). */
type Append = (column: GatheredColumn, v: unknown) => boolean;

function compileType(type: IcebergType): Append {
  if (typeof type === 'string') {
    const convert = compilePrimitive(type);
    return (column, v) => {
      const value = convert(v);
      if (value === NOT_FITTING) return false;
      (column as LeafColumn).pushValue(value);
      return true;
    };
  }
  if (type.type === 'struct') {
    const fields = compileFields(type);
    return (column, v) => isFieldObject(v) && fields(column as StructColumn, v);
  }
  if (type.type === 'list') {
    const element = compileType(type.element);
    const required = type['element-required'];
    return (column, v) => {
      if (!Array.isArray(v)) return false;
      const list = column as ListColumn;
      for (let i = 0; i < v.length; i++) {
        const item = v[i];
        if (item === null || item === undefined) {
          if (required) return false;
          appendAbsent(list.element, false);
        } else if (!element(list.element, item)) return false;
      }
      list.valid.pushValid();
      list.offsets.pushCount(v.length);
      return true;
    };
  }
  return () => false; // maps take the general path
}

/** A struct's fields appended from an object: every key a field, nothing refused. */
function compileFields(type: StructType): (column: StructColumn, obj: Record<string, unknown>) => boolean {
  const names = type.fields.map((f) => f.name);
  const required = type.fields.map((f) => f.required);
  const appends = type.fields.map((f) => compileType(f.type));
  const inherited = inheritedNames(names);
  const n = names.length;
  return (column, obj) => {
    let present = 0;
    for (let i = 0; i < n; i++) {
      const raw = inherited[i] ? ownValue(obj, names[i]) : obj[names[i]];
      const child = column.children[i];
      if (raw === undefined || raw === null) {
        if (raw === null) present++;
        if (required[i]) return false;
        appendAbsent(child, false);
        continue;
      }
      present++;
      if (!appends[i](child, raw)) return false;
    }
    if (Object.keys(obj).length !== present) return false;
    column.valid.pushValid();
    return true;
  };
}

/**
 * The converted fields' values: by field name, or (`record`) the `_kafka` lineage of a record,
 * appended straight into its columns (lineage-columns.ts); other converted fields are then null.
 */
export type Converted = Record<string, unknown> | { readonly [LINEAGE_OF]: RawRecord };

/** The key of a Converted that holds the record whose lineage is appended. */
export const LINEAGE_OF: unique symbol = Symbol('lineage of');

export interface FittingColumns {
  /** The gathered rows so far, one column per schema field. */
  readonly columns: StructColumn;
  /**
   * Appends one row: the schema's value fields from a decoded value, the `converted` fields (e.g.
   * `_kafka`) from `converted` as they are. False, leaving the columns as they were, when the value does
   * not fit the schema as it is.
   */
  append(value: unknown, converted?: Converted): boolean;
  /**
   * The same for a value still as the UTF-8 bytes of JSON text, json[start, end) (fitting-json.ts): false, leaving the columns as they
   * were, also when the text is not JSON or holds anything the scan leaves to the general path.
   */
  appendJson(json: Uint8Array, start: number, end: number, converted?: Converted): boolean;
}

/**
 * Gathered columns for a table schema whose fields named in `convertedFields` come already converted
 * (the lineage) and whose others come from decoded values, sized for `rows` when that is known. Schemas nested deeper than the general
 * path's limit take no value.
 */
export function compileFittingColumns(
  schema: StructType,
  convertedFields: ReadonlySet<string>,
  rows?: number,
): FittingColumns {
  const columns = emptyColumns(schema, rows);
  const valueIndexes: number[] = [];
  const convertedIndexes: number[] = [];
  schema.fields.forEach((f, j) => {
    (convertedFields.has(f.name) ? convertedIndexes : valueIndexes).push(j);
  });
  const valueStruct: StructType = { type: 'struct', fields: valueIndexes.map((j) => schema.fields[j]) };
  const fields = compileFields(valueStruct);
  // A view of the value fields' columns (the same arrays); its own validity is scratch (a count: no
  // row of it is null).
  const valueColumns: StructColumn = {
    kind: 'struct',
    names: valueStruct.fields.map((f) => f.name),
    valid: new Validity(),
    children: valueIndexes.map((j) => columns.children[j]),
  };
  const jsonFields = compileJsonFields(valueStruct);
  const deep = depthOf(schema) > MAX_DEPTH;
  const lineages = convertedIndexes.map((j) =>
    schema.fields[j].name === KAFKA_FIELD ? compileLineageAppend(schema.fields[j].type) : undefined,
  );
  /** Starts a row: the rows so far, or -1 when no value can fit. */
  const begin = (): number => {
    if (deep) return -1;
    return columnLength(columns);
  };
  /** Ends a row whose value fields were appended (`fitted`) or not: the converted fields; all or nothing. */
  const finish = (fitted: boolean, before: number, converted?: Converted): boolean => {
    if (!fitted) {
      truncateColumn(columns, before);
      return false;
    }
    const record = converted !== undefined && LINEAGE_OF in converted ? converted[LINEAGE_OF] : undefined;
    if (record !== undefined) {
      for (let k = 0; k < convertedIndexes.length; k++) {
        const j = convertedIndexes[k];
        const lineage = lineages[k];
        if (lineage) lineage(columns.children[j], record);
        else appendAbsent(columns.children[j], false);
      }
    } else {
      for (const j of convertedIndexes) {
        const values = converted as Record<string, unknown> | undefined;
        appendValue(columns.children[j], (values?.[schema.fields[j].name] ?? null) as Value);
      }
    }
    columns.valid.pushValid();
    return true;
  };
  return {
    columns,
    append: (value, converted) => {
      if (!isFieldObject(value)) return false;
      const before = begin();
      return before >= 0 && finish(fields(valueColumns, value), before, converted);
    },
    appendJson: (json, start, end, converted) => {
      const before = begin();
      return before >= 0 && finish(jsonFields(valueColumns, json, start, end), before, converted);
    },
  };
}
