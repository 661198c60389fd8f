/**
 * PyIceberg built from its source (test/interop/pyiceberg/setup.sh), run as a reader of floe's tables:
 * one Python process (test/interop/pyiceberg/read_tables.py) serves every read of a test file, since
 * its start-up (PyArrow's and PyIceberg's imports) costs more than reading a small table. Rows come back as exact JSON, and
 * floe's own rows are put in the same form (`exactRow`) so the two compare field by field.
 */
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect } from 'vitest';
import type { Catalog } from '../../functions/core/catalog/catalog.js';
import { planScan } from '../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../functions/core/scan/read-scan.js';
import { currentSchema } from '../../functions/core/spec/metadata.js';
import type {
  IcebergType,
  Row,
  StructType,
  TableIdentifier,
  Value,
} from '../../functions/core/spec/types.js';

/** Where setup.sh puts the venv, from the repository root (vitest's working directory). */
export const PYICEBERG_VENV_PYTHON = '.cache/pyiceberg/venv/bin/python';
const SCRIPT = resolve('test/interop/pyiceberg/read_tables.py');

/** A value in exact text: integers, timestamps (µs) and decimals as text, floats too, binary as hex. */
export type Exact = string | boolean | null | Exact[] | { [field: string]: Exact };

/** A value as read_tables.py prints it: `Exact`, but floats are JSON numbers. */
export type Printed = string | boolean | number | null | Printed[] | { [field: string]: Printed };

export type PyIcebergAnswer =
  | { rows: Record<string, Printed>[]; deletes: Record<string, number> }
  | { error: { stage: 'load' | 'plan' | 'read'; type: string; message: string } };

/**
 * The Python that runs PyIceberg: `FLOE_PYICEBERG_PYTHON`, else setup.sh's venv when it exists;
 * undefined when neither is there (the tests that need it are skipped).
 * @throws Error when the named Python cannot import pyiceberg and pyroaring (a broken setup is not a
 *   reason to skip)
 */
export function pyicebergPython(): string | undefined {
  const python =
    process.env.FLOE_PYICEBERG_PYTHON ??
    (existsSync(PYICEBERG_VENV_PYTHON) ? resolve(PYICEBERG_VENV_PYTHON) : undefined);
  if (python === undefined) return undefined;
  const probe = spawnSync(python, ['-c', 'import pyiceberg, pyroaring'], { encoding: 'utf8' });
  if (probe.status !== 0)
    throw new Error(`${python} cannot import pyiceberg and pyroaring: ${probe.stderr || probe.error}`);
  return python;
}

/**
 * One read_tables.py process serving many reads, one at a time (`read` waits for its answer line
 * before the next request is written). `close` ends it.
 */
export class PyIcebergReader {
  /** The versions the process runs (its first line): PyIceberg, pyroaring, CRoaring, PyArrow. */
  readonly versions: Promise<Record<string, string>>;
  private buffered = '';
  private waiting?: { done: (line: string) => void; fail: (error: Error) => void };
  private stderr = '';
  private exited?: Error;

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    this.versions = new Promise<string>((done, fail) => {
      this.waiting = { done, fail };
    }).then((line) => JSON.parse(line) as Record<string, string>);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text: string) => {
      this.buffered += text;
      // One request is in flight at a time, so one line at most is awaited.
      const end = this.buffered.indexOf('\n');
      if (end < 0 || !this.waiting) return;
      const line = this.buffered.slice(0, end);
      this.buffered = this.buffered.slice(end + 1);
      const { done } = this.waiting;
      this.waiting = undefined;
      done(line);
    });
    child.stderr.on('data', (b: Buffer) => {
      this.stderr = (this.stderr + b.toString()).slice(-8000);
    });
    const stop = (why: string) => {
      this.exited = new Error(`read_tables.py ${why}: ${this.stderr}`);
      this.waiting?.fail(this.exited);
      this.waiting = undefined;
    };
    child.on('error', (e) => stop(`failed (${e.message})`));
    child.on('close', (code) => stop(`exited ${code}`));
  }

  /** Starts read_tables.py under `python` (see pyicebergPython). Never throws; a failed start shows on `read`. */
  static start(python: string): PyIcebergReader {
    return new PyIcebergReader(spawn(python, [SCRIPT], { stdio: ['pipe', 'pipe', 'pipe'] }));
  }

  /**
   * Reads each metadata file (a path or file:// URI) with PyIceberg.
   * @throws Error when the process failed (a table PyIceberg refuses is an answer, not a failure)
   */
  async read(locations: readonly string[]): Promise<PyIcebergAnswer[]> {
    await this.versions;
    if (this.exited) throw this.exited;
    return new Promise<string>((done, fail) => {
      this.waiting = { done, fail };
      this.child.stdin.write(`${JSON.stringify(locations)}\n`);
    }).then((line) => JSON.parse(line) as PyIcebergAnswer[]);
  }

  /** Closes its stdin and waits for it to exit. Never throws. */
  async close(): Promise<void> {
    if (this.exited) return;
    const closed = new Promise((done) => this.child.once('close', done));
    this.child.stdin.end();
    await closed;
  }
}

/** A decimal's unscaled value as the text of the number (scale 2: -1250n → "-12.50"). */
export function decimalText(unscaled: bigint, scale: number): string {
  const digits = (unscaled < 0n ? -unscaled : unscaled).toString().padStart(scale + 1, '0');
  const sign = unscaled < 0n ? '-' : '';
  return scale === 0 ? `${sign}${digits}` : `${sign}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

function exactValue(type: IcebergType, value: Value | undefined): Exact {
  if (value === null || value === undefined) return null;
  if (typeof type !== 'string') {
    if (type.type === 'struct') return exactRow(type, value as Row);
    if (type.type === 'list') return (value as Value[]).map((v) => exactValue(type.element, v));
    return [...(value as Map<Value, Value>)].map(([k, v]) => [
      exactValue(type.key, k),
      exactValue(type.value, v),
    ]);
  }
  const scale = /^decimal\(\d+,\s*(\d+)\)$/.exec(type);
  if (scale) return decimalText(value as bigint, Number(scale[1]));
  if (value instanceof Uint8Array) return Buffer.from(value).toString('hex');
  if (typeof value === 'boolean' || typeof value === 'string') return value;
  return String(value);
}

/** floe's row in read_tables.py's form, field by field of `struct` (a table's schema). */
export function exactRow(struct: StructType, row: Row): Record<string, Exact> {
  return Object.fromEntries(struct.fields.map((f) => [f.name, exactValue(f.type, row[f.name])]));
}

/** PyIceberg's row with its floats as text too (JSON numbers only stand for floats there). */
export function exactAnswerRow(row: Record<string, Printed>): Record<string, Exact> {
  const fix = (v: Printed): Exact =>
    typeof v === 'number'
      ? String(v)
      : Array.isArray(v)
        ? v.map(fix)
        : v !== null && typeof v === 'object'
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fix(x)]))
          : v;
  return fix(row) as Record<string, Exact>;
}

/** Rows in one order whatever the order of their fields, for comparing multisets of rows. */
export function sortedRows(rows: readonly Record<string, Exact>[]): Record<string, Exact>[] {
  const text = (v: Exact): string =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? `{${Object.keys(v)
          .sort()
          .map((k) => `${k}:${text(v[k])}`)
          .join(',')}}`
      : JSON.stringify(v);
  return [...rows].sort((a, b) => (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0));
}

/** A table as it was after one batch: its metadata file, the model's rows (as keys) and floe's rows. */
export interface Seen {
  label: string;
  location: string;
  model: string[];
  floe: Record<string, Exact>[];
}

/** The table as it is now: its metadata file and floe's rows, beside the model's. */
export async function see(
  catalog: Catalog,
  id: TableIdentifier,
  label: string,
  model: string[],
): Promise<Seen> {
  const table = await catalog.loadTable(id);
  const schema = currentSchema(table.metadata);
  const rows = await readScanRows(table, await planScan(table));
  return {
    label,
    location: table.metadataLocation,
    model,
    floe: sortedRows(rows.map((r) => exactRow(schema, r))),
  };
}

/**
 * PyIceberg's rows of an answer that must have rows, in exact form and sorted.
 * @throws Error naming `label` when PyIceberg refused the table
 */
export function rowsOf(answer: PyIcebergAnswer, label: string): Record<string, Exact>[] {
  if ('error' in answer) throw new Error(`${label}: PyIceberg refused: ${JSON.stringify(answer.error)}`);
  return sortedRows(answer.rows.map(exactAnswerRow));
}

/** How many distinct delete files of a kind (`POSITION_DELETES/PARQUET`, `…/PUFFIN`) a read planned. */
export function planned(answer: PyIcebergAnswer, kind: string): number {
  return 'deletes' in answer ? (answer.deletes[kind] ?? 0) : 0;
}

/**
 * Asserts that floe's rows of each table state are the model's (by `key`), and that PyIceberg's answer
 * for it has the model's rows and floe's rows field by field.
 */
export function expectEachAsFloe(
  seen: readonly Seen[],
  answers: readonly PyIcebergAnswer[],
  key: (row: Record<string, Exact>) => string,
): void {
  seen.forEach((s, i) => {
    const rows = rowsOf(answers[i], s.label);
    expect(s.floe.map(key).sort(), `${s.label}: floe vs the model`).toEqual(s.model);
    expect(rows.map(key).sort(), `${s.label}: PyIceberg vs the model`).toEqual(s.model);
    expect(rows, `${s.label}: PyIceberg vs floe`).toEqual(s.floe);
  });
}
