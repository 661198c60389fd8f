/**
 * The declarative record mapping of one table, read and checked once at start-up so a typo is one
 * clear ValidationError naming its path (`mapping.columns.order_ts.format: ...`), not a dead letter
 * per record. JSON form (every key optional):
 *
 *   {
 *     "value": "fields" | { "column": "payload" },      // object fields become columns (default), or one column
 *     "flatten": true | { "separator": "_", "maxDepth": 8 }, // shipping.city → shipping_city
 *     "exclude": ["debug", "meta.trace"],                // source paths dropped
 *     "key": { "column": "key", "as": "string" | "binary" | "long" | "json", "required": false }
 *          | { "fields": true, "prefix": "", "required": false },   // a JSON-object key's fields as columns
 *     "headers": [{ "header": "entity", "column": "entity", "as": "string" | "binary", "required": false }],
 *     "timestamp": "kafka_ts" | { "column": "kafka_ts" },  // the record timestamp as a timestamptz column
 *     "columns": {                                       // per target column (dotted = nested struct field)
 *       "order_ts": { "from": "created", "type": "timestamptz", "format": "dd/MM/yyyy HH:mm:ss", "zone": "+01:00" },
 *       "paid_at":  { "type": "timestamptz", "epoch": "seconds" },   // days|seconds|millis|micros|nanos
 *       "opens":    { "type": "time", "epoch": "micros" },           // a time: since midnight
 *       "amount":   { "type": "decimal(12, 2)" },
 *       "city":     { "from": "shipping.city" },
 *       "status":   { "default": "NEW" }                 // used when the field is missing
 *     }
 *   }
 */
import { checkSettings, refuseSetting as fail } from '../check-settings.js';
import { parseType } from '../spec/schema.js';
import type { PrimitiveType } from '../spec/types.js';
import {
  EPOCH_UNITS,
  type KEY_FORMATS,
  type MappingSettings,
  MappingSettingsSchema,
} from './mapping-schema.js';
import { compileTimestampFormat, parseZoneOffset, type TimestampFormat } from './timestamp-format.js';

export type KeyFormat = (typeof KEY_FORMATS)[number];
/** Units of numbers: since the epoch (timestamps, dates), or since midnight (times; not `days`). */
export type EpochUnit = (typeof EPOCH_UNITS)[number];

export type KeyMapping =
  | { kind: 'column'; column: string; as: KeyFormat; required: boolean }
  | { kind: 'fields'; prefix: string; required: boolean };

export interface HeaderMapping {
  header: string;
  column: string;
  as: 'string' | 'binary';
  required: boolean;
}

export interface ColumnRule {
  /** Target column path, dotted through structs (`shipping.zip`). */
  column: string;
  /** Source path the value is taken from (a rename or move); default: the column path itself. */
  from?: string;
  /** The type the value is converted to (a coercion); default: the table column's type. */
  type?: PrimitiveType;
  /** Pattern for text → timestamp/date. */
  format?: TimestampFormat;
  /** Offset (minutes east of UTC) for timestamptz text written without one. */
  zoneMinutes?: number;
  /**
   * Unit of numbers → timestamp/date (since the epoch; default millis, Kafka's convention) or → time
   * (since midnight; Debezium's Time, MicroTime, NanoTime).
   */
  epoch?: EpochUnit;
  /** JSON value used when the field is missing. */
  default?: unknown;
}

export interface MappingConfig {
  value: { kind: 'fields' } | { kind: 'column'; column: string };
  flatten?: { separator: string; maxDepth: number };
  exclude: string[];
  key?: KeyMapping;
  headers: HeaderMapping[];
  timestamp?: { column: string };
  columns: ColumnRule[];
}

/** What floe does with no mapping configured: the value's fields are the columns. */
export const DEFAULT_MAPPING: MappingConfig = {
  value: { kind: 'fields' },
  exclude: [],
  headers: [],
  columns: [],
};

const TEMPORAL = new Set(['timestamp', 'timestamptz', 'date']);

/** A column name: the schema made it a non-empty string; dots would make it a path. */
function nameAt(v: string, path: string): string {
  if (v.includes('.')) fail(path, `'${v}' must not contain '.' (dots separate nested fields)`);
  if (v === '__proto__') fail(path, "'__proto__' cannot be a column name here");
  return v;
}

function pathAt(v: string, path: string): string {
  if (v.split('.').some((s) => s === '')) fail(path, 'must be a dotted field path like "shipping.city"');
  if (v.split('.').includes('__proto__') && !path.endsWith('.from') && !path.includes('.exclude[')) {
    fail(path, "'__proto__' cannot be a column name (map it from there to another name)");
  }
  return v;
}

function readKey(key: NonNullable<MappingSettings['key']>, path: string): KeyMapping {
  const required = key.required ?? false;
  if ('fields' in key) {
    const prefix = key.prefix ?? '';
    if (prefix.includes('.')) fail(`${path}.prefix`, "must be a string without '.'");
    return { kind: 'fields', prefix, required };
  }
  return {
    kind: 'column',
    column: nameAt(key.column ?? 'key', `${path}.column`),
    as: key.as ?? 'string',
    required,
  };
}

function readHeaders(headers: NonNullable<MappingSettings['headers']>, path: string): HeaderMapping[] {
  return headers.map((h, i) => ({
    header: h.header,
    column: nameAt(h.column ?? h.header, `${path}[${i}].column`),
    as: h.as ?? 'string',
    required: h.required ?? false,
  }));
}

function readRule(
  column: string,
  obj: NonNullable<MappingSettings['columns']>[string],
  path: string,
): ColumnRule {
  const rule: ColumnRule = { column };
  if (obj.from !== undefined) rule.from = pathAt(obj.from, `${path}.from`);
  if (obj.type !== undefined) {
    const type = parseType(obj.type, `${path}.type`);
    if (typeof type !== 'string')
      fail(`${path}.type`, 'must be a primitive type (nested types come from the value)');
    rule.type = type;
  }
  const temporal = rule.type !== undefined && TEMPORAL.has(rule.type);
  if (obj.format !== undefined) {
    if (!temporal) fail(`${path}.format`, 'needs "type" to be timestamp, timestamptz or date');
    try {
      rule.format = compileTimestampFormat(obj.format);
    } catch (error) {
      fail(`${path}.format`, (error as Error).message);
    }
    if (rule.format.hasOffset && rule.type !== 'timestamptz') {
      fail(`${path}.format`, 'an offset in the pattern (X, Z) needs "type": "timestamptz"');
    }
  }
  if (obj.zone !== undefined) {
    if (rule.type !== 'timestamptz') fail(`${path}.zone`, 'needs "type": "timestamptz"');
    try {
      rule.zoneMinutes = parseZoneOffset(obj.zone);
    } catch (error) {
      fail(`${path}.zone`, (error as Error).message);
    }
  }
  if (obj.epoch !== undefined) {
    const time = rule.type === 'time';
    if (!temporal && !time) fail(`${path}.epoch`, 'needs "type" to be timestamp, timestamptz, date or time');
    if (rule.format) fail(`${path}.epoch`, 'give either "format" (text) or "epoch" (numbers), not both');
    if (time && obj.epoch === 'days')
      fail(
        `${path}.epoch`,
        `must be one of ${EPOCH_UNITS.filter((u) => u !== 'days').join(', ')} (since midnight, for a time)`,
      );
    rule.epoch = obj.epoch;
  }
  if (Object.hasOwn(obj, 'default')) {
    if (obj.default === null || obj.default === undefined)
      fail(`${path}.default`, 'must not be null (leave it out)');
    // Config JSON is parsed with plain JSON.parse: integers past 2^53 would already be rounded.
    if (
      typeof obj.default === 'number' &&
      Number.isInteger(obj.default) &&
      !Number.isSafeInteger(obj.default)
    ) {
      fail(`${path}.default`, 'integers beyond 2^53 lose digits in JSON; write them as a string');
    }
    rule.default = obj.default;
  }
  return rule;
}

/**
 * Reads a mapping from its JSON form (a route's `mapping`). `path` prefixes error paths.
 * @throws RouteConfigError (a ValidationError) listing the problems the schema finds, else naming the
 *   first a schema cannot express (a dotted name, an unknown type, a column filled twice)
 */
export function parseMappingConfig(json: unknown, path = 'mapping'): MappingConfig {
  if (json === undefined || json === null) return DEFAULT_MAPPING;
  checkSettings(MappingSettingsSchema, json, path);
  const obj = json as MappingSettings;
  const config: MappingConfig = { value: { kind: 'fields' }, exclude: [], headers: [], columns: [] };

  if (obj.value !== undefined && obj.value !== 'fields') {
    config.value = { kind: 'column', column: nameAt(obj.value.column, `${path}.value.column`) };
  }
  if (obj.flatten !== undefined && obj.flatten !== false) {
    if (config.value.kind !== 'fields') fail(`${path}.flatten`, 'needs "value": "fields"');
    const f = obj.flatten === true ? {} : obj.flatten;
    const separator = f.separator ?? '_';
    if (separator.includes('.')) fail(`${path}.flatten.separator`, "must be a non-empty string without '.'");
    config.flatten = { separator, maxDepth: f.maxDepth ?? 16 };
  }
  if (obj.exclude !== undefined)
    config.exclude = obj.exclude.map((e, i) => pathAt(e, `${path}.exclude[${i}]`));
  if (obj.key !== undefined) config.key = readKey(obj.key, `${path}.key`);
  if (obj.headers !== undefined) config.headers = readHeaders(obj.headers, `${path}.headers`);
  if (obj.timestamp !== undefined) {
    const column = typeof obj.timestamp === 'string' ? obj.timestamp : obj.timestamp.column;
    config.timestamp = { column: nameAt(column, `${path}.timestamp.column`) };
  }
  if (obj.columns !== undefined) {
    config.columns = Object.entries(obj.columns).map(([column, rule]) => {
      const p = `${path}.columns.${column}`;
      if (column === '') fail(p, 'must be a dotted field path like "shipping.city"');
      pathAt(column, p);
      if (config.flatten && column.includes('.'))
        fail(p, 'with "flatten", columns are top-level names (no dots)');
      return readRule(column, rule, p);
    });
  }
  checkCollisions(config, path);
  return config;
}

/** Every column the mapping itself fills must have one source. */
function checkCollisions(config: MappingConfig, path: string): void {
  const owners = new Map<string, string>();
  const claim = (column: string, owner: string) => {
    const previous = owners.get(column);
    if (previous) fail(`${path}.${owner}`, `column '${column}' is already filled by ${path}.${previous}`);
    owners.set(column, owner);
  };
  if (config.value.kind === 'column') claim(config.value.column, 'value.column');
  if (config.key?.kind === 'column') claim(config.key.column, 'key.column');
  config.headers.forEach((h, i) => {
    claim(h.column, `headers[${i}].column`);
  });
  if (config.timestamp) claim(config.timestamp.column, 'timestamp.column');
  for (const rule of config.columns) {
    if (owners.has(rule.column)) {
      fail(
        `${path}.columns.${rule.column}`,
        `column '${rule.column}' is filled by ${path}.${owners.get(rule.column)}; rules apply to value fields`,
      );
    }
  }
  const sources = new Map<string, string>();
  for (const rule of config.columns) {
    if (rule.from === undefined) continue;
    const other = sources.get(rule.from);
    if (other)
      fail(`${path}.columns.${rule.column}.from`, `'${rule.from}' is already moved to column '${other}'`);
    sources.set(rule.from, rule.column);
    if (config.exclude.some((e) => rule.from === e || rule.from!.startsWith(`${e}.`))) {
      fail(`${path}.columns.${rule.column}.from`, `'${rule.from}' is excluded by ${path}.exclude`);
    }
  }
}
