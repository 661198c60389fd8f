/**
 * A table's ingest mode and key, as stored with the table: `floe.mode` and `floe.identifier-columns`
 * table properties, and the schema's `identifier-field-ids` (the key Iceberg engines see). A route
 * may set them when floe creates the table; later ingests read them back, so they need no flags.
 */
import { ValidationError } from '../errors.js';
import type { Coercion } from '../mapping/coercions.js';
import type { IngestMode, TableRoute } from './routes.js';
import { parseSchema, schemaFieldPaths } from '../spec/schema.js';
import { findField, findFieldByName, maxFieldId } from '../spec/schema-index.js';
import type { PrimitiveType, Schema, StructField, StructType } from '../spec/types.js';
import { cdcCoercions } from '../mapping/cdc-mapping.js';
import {
  IDENTIFIER_PROPERTY,
  MODE_PROPERTY,
  readIngestProperties,
  SOURCE_COLUMN_PROPERTY,
} from '../spec/table-properties.js';

// Defined with the other table properties floe reads.
export { IDENTIFIER_PROPERTY, MODE_PROPERTY, SOURCE_COLUMN_PROPERTY };

export type CdcMode = Exclude<IngestMode, 'append'>;

/** One identifier column: its id, dotted name, path of struct field names and primitive type. */
export interface KeyColumn {
  id: number;
  name: string;
  path: string[];
  type: PrimitiveType;
  /** How the column's values are written, when the route's mapping has a type rule for it. */
  coercion?: Coercion;
}

export interface CdcSettings {
  mode: CdcMode;
  key: KeyColumn[];
  /** The column for the Debezium `source` block, when the table keeps it. */
  sourceColumn?: StructField;
  /** The route mapping's type rules, by column path (cdc-mapping.ts); none when absent. */
  coercions?: ReadonlyMap<string, Coercion>;
}

/**
 * The mode a route and a table's properties give (route first, then `floe.mode`, else append).
 * @throws ValidationError when the route's mode differs from the table's stored mode, or the stored
 *   one is not a mode
 */
export function resolveMode(route: TableRoute, properties: Record<string, string>): IngestMode {
  const stored = readIngestProperties(properties).mode;
  if (route.mode && stored && route.mode !== stored) {
    // Feeding change events into an append table (or rows into a CDC table) would silently
    // produce the wrong table: a configuration error, said once.
    throw new ValidationError(
      `route mode '${route.mode}' conflicts with the table's ${MODE_PROPERTY}='${stored}'`,
    );
  }
  return route.mode ?? stored ?? 'append';
}

/** Field ids of dotted column names. @throws ValidationError for a name not in the schema */
function idsOfNames(schema: StructType, names: readonly string[], what: string): number[] {
  return names.map((name) => {
    const field = findFieldByName(schema, name);
    if (!field) throw new ValidationError(`${what}: column '${name}' is not in the schema`);
    return field.id;
  });
}

/**
 * The schema with `identifier-field-ids` set to the named columns (checked as Iceberg Java does:
 * required primitives, not float/double, reachable through required structs only).
 * @throws ValidationError for an unknown column or one that cannot be a key
 */
export function withIdentifierFields(schema: Schema, names: readonly string[]): Schema {
  if (names.length === 0) throw new ValidationError('identifier columns: at least one column is needed');
  const ids = idsOfNames(schema, names, 'identifier columns');
  if (new Set(ids).size !== ids.length) throw new ValidationError('identifier columns: a column is repeated');
  return parseSchema({ ...schema, 'identifier-field-ids': ids }, 'schema');
}

/**
 * Debezium's `source` block as floe keeps it when the schema does not declare the column itself:
 * the fields common to Debezium's connectors, all optional (connectors fill different ones).
 */
export function defaultSourceType(firstId: number): StructType {
  const fields: [string, PrimitiveType][] = [
    ['version', 'string'],
    ['connector', 'string'],
    ['name', 'string'],
    ['ts_ms', 'timestamptz'],
    ['snapshot', 'string'],
    ['db', 'string'],
    ['sequence', 'string'],
    ['schema', 'string'],
    ['table', 'string'],
    ['txId', 'long'],
    ['lsn', 'long'],
    ['xmin', 'long'],
    ['file', 'string'],
    ['pos', 'long'],
    ['row', 'int'],
    ['server_id', 'long'],
    ['gtid', 'string'],
  ];
  return {
    type: 'struct',
    fields: fields.map(([name, type], i) => ({ id: firstId + i, name, required: false, type })),
  };
}

/**
 * The schema floe creates a CDC table with: identifier fields set, and the source column appended
 * (fresh ids) when the properties ask for one the schema lacks.
 * @throws ValidationError when no key is given or a key column cannot be a key
 */
export function cdcCreateSchema(
  schema: Schema,
  mode: CdcMode,
  identifierColumns: readonly string[] | undefined,
  properties: Record<string, string>,
): Schema {
  let out = schema;
  if (identifierColumns && identifierColumns.length > 0) out = withIdentifierFields(out, identifierColumns);
  if (!out['identifier-field-ids'] || out['identifier-field-ids'].length === 0) {
    throw new ValidationError(
      `mode '${mode}' needs identifier columns (--identifier COL[,COL], the route's identifierColumns, or identifier-field-ids in the schema)`,
    );
  }
  const sourceName = readIngestProperties(properties).cdcSourceColumn;
  if (sourceName && !out.fields.some((f) => f.name === sourceName)) {
    const id = maxFieldId(out) + 1;
    out = {
      ...out,
      fields: [...out.fields, { id, name: sourceName, required: false, type: defaultSourceType(id + 1) }],
    };
  }
  return out;
}

/** The table properties a CDC table is created with (mode and key names, for people and later ingests). */
export function cdcTableProperties(mode: IngestMode, schema: Schema): Record<string, string> {
  const paths = schemaFieldPaths(schema);
  const ids = schema['identifier-field-ids'] ?? [];
  return {
    [MODE_PROPERTY]: mode,
    ...(ids.length > 0 ? { [IDENTIFIER_PROPERTY]: ids.map((id) => paths.get(id)!).join(',') } : {}),
  };
}

function sameIds(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && [...a].sort().join() === [...b].sort().join();
}

/**
 * The key and source column of a CDC table: the schema's `identifier-field-ids`, else the route's
 * identifier columns, else the `floe.identifier-columns` property.
 * @throws ValidationError when there is no key, a key column cannot be a key, the route names a
 *   different key than the schema's, the source column is not a struct, or the route's mapping
 *   says what a CDC table cannot apply (cdc-mapping.ts)
 */
export function resolveCdcSettings(
  mode: CdcMode,
  schema: Schema,
  route: TableRoute,
  properties: Record<string, string>,
): CdcSettings {
  const declared = schema['identifier-field-ids'] ?? [];
  const fromRoute = route.identifierColumns?.length
    ? idsOfNames(schema, route.identifierColumns, 'route identifierColumns')
    : undefined;
  const stored = readIngestProperties(properties);
  const fromProperty = stored.identifierColumns
    ? idsOfNames(schema, stored.identifierColumns, IDENTIFIER_PROPERTY)
    : undefined;
  if (declared.length > 0 && fromRoute && !sameIds(fromRoute, declared)) {
    throw new ValidationError(
      `route identifierColumns ${route.identifierColumns!.join(',')} differ from the table's identifier fields`,
    );
  }
  const ids = declared.length > 0 ? declared : (fromRoute ?? fromProperty ?? []);
  if (ids.length === 0) {
    throw new ValidationError(
      `mode '${mode}' needs identifier columns: the table has no identifier-field-ids and the route names none`,
    );
  }
  // parseSchema checks each id can be a key, with Iceberg's rules and messages.
  const checked = parseSchema({ ...schema, 'identifier-field-ids': ids }, 'schema');
  const paths = schemaFieldPaths(checked);
  const coercions = cdcCoercions(route.mapping, schema);
  const key = ids.map((id): KeyColumn => {
    const field = findField(checked, id)!;
    const name = paths.get(id)!;
    const coercion = coercions.get(name);
    return {
      id,
      name,
      path: name.split('.'),
      type: field.type as PrimitiveType,
      ...(coercion ? { coercion } : {}),
    };
  });
  const sourceName = stored.cdcSourceColumn;
  let sourceColumn: StructField | undefined;
  if (sourceName) {
    sourceColumn = schema.fields.find((f) => f.name === sourceName);
    if (!sourceColumn || typeof sourceColumn.type === 'string' || sourceColumn.type.type !== 'struct') {
      throw new ValidationError(
        `${SOURCE_COLUMN_PROPERTY}='${sourceName}' must name a top-level struct column of the table`,
      );
    }
  }
  return { mode, key, sourceColumn, ...(coercions.size > 0 ? { coercions } : {}) };
}
