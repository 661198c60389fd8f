/**
 * A mapping compiled against a table schema: projection (project-record.ts) plus the row conversion,
 * which applies coercion rules at their column paths and the plain JSON conversion elsewhere, and
 * adds the `_kafka` lineage struct when the schema has it. Compile once per schema (cheap); the
 * schema changes only when evolution commits a new one.
 */
import { RecordDecodeError, ValidationError } from '../errors.js';
import type { IcebergType, PrimitiveType, Row, Schema, StructField, StructType } from '../spec/types.js';
import { canGather, GatheredRows } from '../data/arrow/gathered-rows.js';
import { compileFittingColumns, LINEAGE_OF } from './fast/fitting-columns.js';
import { compileFittingRow, NOT_FITTING } from './fast/fitting-row.js';
import { canPromote, samePrimitive } from './evolution/promotions.js';
import type { RawRecord } from '../records/esm-event.js';
import { jsonToRow, jsonToValue } from '../records/json-to-value.js';
import { hasKafkaSchemaId, hasKafkaValue, KAFKA_FIELD, kafkaLineageRow } from '../records/kafka-lineage.js';
import { type Coercion, coerceValue } from './coercions.js';
import { compileRowConversion } from './convert-row.js';
import type { DecodedRecord } from './decoded-record.js';
import type { MappingConfig } from './mapping-config.js';
import { projectRecord } from './project-record.js';
import type { ValueObject } from './value-paths.js';

/** Rows gathered as columns, a record at a time. */
export interface FittingGatherer {
  readonly rows: GatheredRows;
  /** Appends the record's row; false (nothing appended) when its value does not fit the schema. */
  append(projected: ValueObject, record: RawRecord): boolean;
  /**
   * The same from the value's JSON text, when the mapping projects the value as it is (isPlainMapping):
   * false (nothing appended) also for text that is not JSON. The text is json[start, end) (default: all of it).
   */
  appendJson(json: Uint8Array, record: RawRecord, start?: number, end?: number): boolean;
}

export interface RecordMapper {
  readonly config: MappingConfig;
  readonly schema: Schema;
  /**
   * Types the mapping itself decides, by column path (dotted through structs and list elements): the
   * type rules, the key, header and timestamp columns. Schema evolution uses them for new columns
   * instead of guessing from the decoded value.
   */
  readonly typeHints: ReadonlyMap<string, PrimitiveType>;
  /** @throws RecordDecodeError */
  project(decoded: DecodedRecord): ValueObject;
  /** @throws RecordDecodeError (stage map) naming the column path */
  toRow(projected: ValueObject, record: RawRecord): Row;
  /**
   * The row when the projected value already fits the schema as it is (no schema change, no
   * refusal: evolution/fitting-row.ts), else undefined. Absent when the mapping has type rules (their
   * coercions take the general path).
   */
  readonly fittingRow?: (projected: ValueObject, record: RawRecord) => Row | undefined;
  /**
   * The same fast path gathering columns instead of building rows (evolution/fitting-columns.ts): each
   * call starts an empty set of gathered rows. Absent when fittingRow is, and for schemas with a map.
   */
  readonly gatherFitting?: (rows?: number) => FittingGatherer;
  /** project + toRow. @throws RecordDecodeError (stage map) naming the column path */
  map(decoded: DecodedRecord): Row;
}

function fail(path: string, message: string): never {
  throw new RecordDecodeError(`${path}: ${message}`, 'map');
}

/** The field at a dotted path, going through structs and through list elements transparently. */
export function fieldAtPath(struct: StructType, path: readonly string[]): StructField | undefined {
  let current: IcebergType = struct;
  let field: StructField | undefined;
  for (const step of path) {
    while (typeof current !== 'string' && current.type === 'list') current = current.element;
    if (typeof current === 'string' || current.type !== 'struct') return undefined;
    field = current.fields.find((f) => f.name === step);
    if (!field) return undefined;
    current = field.type;
  }
  return field;
}

function hintsOf(
  config: MappingConfig,
  path: string,
): Map<string, { type: PrimitiveType; configPath: string }> {
  const hints = new Map<string, { type: PrimitiveType; configPath: string }>();
  if (config.key?.kind === 'column' && config.key.as !== 'json') {
    hints.set(config.key.column, { type: config.key.as, configPath: `${path}.key.as` });
  }
  config.headers.forEach((h, i) => {
    hints.set(h.column, { type: h.as, configPath: `${path}.headers[${i}].as` });
  });
  if (config.timestamp)
    hints.set(config.timestamp.column, { type: 'timestamptz', configPath: `${path}.timestamp` });
  for (const rule of config.columns) {
    if (rule.type)
      hints.set(rule.column, { type: rule.type, configPath: `${path}.columns.${rule.column}.type` });
  }
  return hints;
}

/**
 * Whether the mapping projects a decoded value as it is: its fields are the columns, with nothing
 * excluded, renamed, flattened or added (key, headers, timestamp, defaults, type rules).
 */
export function isPlainMapping(config: MappingConfig): boolean {
  return (
    config.value.kind === 'fields' &&
    !config.flatten &&
    config.exclude.length === 0 &&
    !config.key &&
    config.headers.length === 0 &&
    !config.timestamp &&
    config.columns.length === 0
  );
}

/**
 * Compiles a mapping for a schema, checking that its rules fit the table: a type rule on an existing
 * column must be that column's type, one it can be promoted to (evolution promotes it), or one that
 * widens into it; a default must convert. `path` prefixes error paths (e.g. `routes[0].mapping`).
 * @throws ValidationError naming the mapping path
 */
export function compileMapping(config: MappingConfig, schema: Schema, path = 'mapping'): RecordMapper {
  const hints = hintsOf(config, path);
  const coercions = new Map<string, Coercion>();
  for (const [column, hint] of hints) {
    const rule = config.columns.find((r) => r.column === column);
    coercions.set(column, { ...rule, type: hint.type });
    const field = fieldAtPath(schema, column.split('.'));
    if (!field) continue;
    if (typeof field.type !== 'string') {
      throw new ValidationError(
        `${hint.configPath}: column '${column}' is a ${field.type.type}; a type rule needs a primitive column`,
      );
    }
    const t = field.type;
    if (!samePrimitive(t, hint.type) && !canPromote(t, hint.type) && !canPromote(hint.type, t)) {
      throw new ValidationError(
        `${hint.configPath}: the mapping makes '${column}' a ${hint.type}, but the table column is ${t} (not a compatible change)`,
      );
    }
  }
  for (const rule of config.columns) {
    if (rule.default === undefined) continue;
    const field = fieldAtPath(schema, rule.column.split('.'));
    try {
      // The same conversion the rows get: the rule's coercion, else the column's plain conversion.
      if (rule.type) coerceValue({ ...rule, type: rule.type }, rule.default, rule.column);
      else if (field) jsonToValue(field.type, rule.default, rule.column);
    } catch (error) {
      throw new ValidationError(`${path}.columns.${rule.column}.default: ${(error as Error).message}`);
    }
  }
  const lineage = schema.fields.some((f) => f.name === KAFKA_FIELD);
  const withValue = hasKafkaValue(schema);
  const withSchemaId = hasKafkaSchemaId(schema);
  const valueStruct: StructType = {
    type: 'struct',
    fields: schema.fields.filter((f) => f.name !== KAFKA_FIELD),
  };

  const convertStruct = compileRowConversion(coercions);

  const fitting = coercions.size === 0 ? compileFittingRow(valueStruct) : undefined;
  const withLineage = (row: Row, record: RawRecord): Row => {
    if (lineage) row[KAFKA_FIELD] = kafkaLineageRow(record, withValue, withSchemaId);
    return row;
  };

  const mapper: RecordMapper = {
    config,
    schema,
    typeHints: new Map([...hints].map(([column, h]) => [column, h.type])),
    project(decoded) {
      const projected = projectRecord(config, decoded);
      if (lineage && projected[KAFKA_FIELD] !== undefined) {
        fail(
          KAFKA_FIELD,
          `the value has a field '${KAFKA_FIELD}', which is the lineage column; rename or exclude it`,
        );
      }
      return projected;
    },
    toRow(projected, record) {
      if (!fitting) return withLineage(convertStruct(valueStruct, projected), record);
      // Without coercion rules the plain JSON conversion does it all; a fitting value takes the
      // compiled converter, the rest the general one, which explains what does not fit.
      const row = fitting(projected);
      return withLineage(row === NOT_FITTING ? jsonToRow(valueStruct, projected) : row, record);
    },
    // Gathered columns hold no maps: a schema with one takes the row path.
    gatherFitting:
      fitting && canGather(schema)
        ? (rows) => {
            const columns = compileFittingColumns(schema, new Set(lineage ? [KAFKA_FIELD] : []), rows);
            // The record's lineage goes straight into the `_kafka` columns; one holder, reused.
            let source: { [LINEAGE_OF]: RawRecord } | undefined;
            const converted = (record: RawRecord) => {
              if (!lineage) return undefined;
              if (source) source[LINEAGE_OF] = record;
              else source = { [LINEAGE_OF]: record };
              return source;
            };
            return {
              rows: new GatheredRows(columns.columns),
              append: (projected, record) => columns.append(projected, converted(record)),
              appendJson: (json, record, start = 0, end = json.length) =>
                columns.appendJson(json, start, end, converted(record)),
            };
          }
        : undefined,
    fittingRow: fitting
      ? (projected, record) => {
          const row = fitting(projected);
          return row === NOT_FITTING ? undefined : withLineage(row, record);
        }
      : undefined,
    map(decoded) {
      return mapper.toRow(mapper.project(decoded), decoded.record);
    },
  };
  return mapper;
}
