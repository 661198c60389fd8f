/**
 * Shared by the Parquet DataFile tests: a temp warehouse on the local filesystem and DuckDB, the
 * reader no one here wrote, to check what floe writes.
 */
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  DuckDBBlobValue,
  type DuckDBConnection,
  DuckDBDateValue,
  DuckDBDecimalValue,
  DuckDBInstance,
  type DuckDBListValue,
  type DuckDBMapValue,
  type DuckDBStructValue,
  DuckDBTimeValue,
  DuckDBUUIDValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  type DuckDBValue,
} from '@duckdb/node-api';
import { LocalFileIO } from '../../../functions/core/io/local-file-io.js';
import type { IcebergType, Schema, Value } from '../../../functions/core/spec/types.js';

export interface TempWarehouse {
  dir: string;
  io: LocalFileIO;
  /** A location generator for writeDataFiles: `<dir>/data/<prefix>-<index>.parquet`. */
  locations: (prefix: string) => (index: number) => string;
  cleanup: () => Promise<void>;
}

export async function createTempWarehouse(): Promise<TempWarehouse> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-data-'));
  return {
    dir,
    io: new LocalFileIO(),
    locations: (prefix) => (index) => path.join(dir, 'data', `${prefix}-${index}.parquet`),
    cleanup: () => fs.rm(dir, { recursive: true, force: true }),
  };
}

export interface DuckDB {
  /** Rows as DuckDB value objects (exact: decimals, timestamps keep their integers). */
  rows: (sql: string) => Promise<Record<string, DuckDBValue>[]>;
  /** Rows converted to plain JS values (bigint for BIGINT, arrays for lists). */
  rowsJS: (sql: string) => Promise<Record<string, unknown>[]>;
  run: (sql: string) => Promise<void>;
  close: () => void;
}

export async function openDuckDB(): Promise<DuckDB> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection: DuckDBConnection = await instance.connect();
  return {
    rows: async (sql) => (await connection.runAndReadAll(sql)).getRowObjects(),
    rowsJS: async (sql) =>
      (await connection.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[],
    run: async (sql) => {
      await connection.run(sql);
    },
    close: () => {
      connection.closeSync();
      instance.closeSync();
    },
  };
}

/** A path as a SQL string literal. */
export function sqlString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

export function schemaOf(fields: Schema['fields']): Schema {
  return { type: 'struct', 'schema-id': 0, fields };
}

export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

/** A DuckDB value → floe's Value representation for `type`, written independently of floe's reader. */
export function fromDuckDB(type: IcebergType, v: DuckDBValue): Value {
  if (v === null) return null;
  if (typeof type !== 'string') {
    if (type.type === 'struct') {
      const entries = (v as DuckDBStructValue).entries;
      return Object.fromEntries(type.fields.map((f) => [f.name, fromDuckDB(f.type, entries[f.name])]));
    }
    if (type.type === 'list') return (v as DuckDBListValue).items.map((e) => fromDuckDB(type.element, e));
    return new Map(
      (v as DuckDBMapValue).entries.map((e) => [
        fromDuckDB(type.key, e.key),
        fromDuckDB(type.value, e.value),
      ]),
    );
  }
  if (v instanceof DuckDBDateValue) return v.days;
  if (v instanceof DuckDBTimeValue) return v.micros;
  if (v instanceof DuckDBTimestampValue || v instanceof DuckDBTimestampTZValue) return v.micros;
  if (v instanceof DuckDBDecimalValue) return v.value;
  // A UUID-annotated column reads as DuckDB's UUID (a fixed[16] without the annotation as a BLOB).
  if (v instanceof DuckDBUUIDValue) return v.toString();
  if (v instanceof DuckDBBlobValue) {
    if (type !== 'uuid') return Uint8Array.from(v.bytes);
    const h = Buffer.from(v.bytes).toString('hex');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }
  return v as Value;
}
