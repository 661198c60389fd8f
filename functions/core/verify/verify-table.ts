/**
 * `floe verify`: an audit of one snapshot of a table against what floe promises — every file
 * registered once and present at its size, the summary's totals true, and (deep) every committed
 * Kafka offset held by exactly one live row or dead letter, and every key by at most one live row.
 * Reads only; the rules are in functions/core/verify/README.md.
 */
import { formatIdentifier, type LoadedTable } from '../catalog/catalog.js';
import { lineageFields } from '../cdc/change-version.js';
import { ValidationError } from '../errors.js';
import { planScan } from '../scan/plan-scan.js';
import { readScan } from '../scan/read-scan.js';
import { currentSchema, currentSnapshot, snapshotById } from '../spec/metadata.js';
import { findFieldByName } from '../spec/schema-index.js';
import { readIngestProperties } from '../spec/table-properties.js';
import type { Schema, Snapshot, StructType, TableMetadata } from '../spec/types.js';
import { type CommittedState, readCommittedState } from '../table/source-offsets.js';
import { checkFiles, checkSummaryTotals } from './check-files.js';
import { checkKeys } from './check-keys.js';
import { compareOffsets, type TableKind } from './compare-offsets.js';
import { FindingList, type VerifyReport } from './findings.js';
import { type LineagePaths, OffsetTally } from './offset-tally.js';

export interface VerifyOptions {
  /** The snapshot to check. @default the current snapshot */
  snapshotId?: bigint;
  /** Read the rows' `_kafka` offsets and key columns too. @default false */
  deep?: boolean;
  /** Holes in an append table's committed ranges are notes, not findings. @default false */
  allowHoles?: boolean;
  /** The table's dead-letter table, when it has one (deep: its letters account for offsets). */
  deadLetters?: LoadedTable;
  /** Keys one key pass holds (check-keys.ts). @default DEFAULT_KEYS_PER_PASS */
  keysPerPass?: number;
}

/** The columns that make a table a dead-letter table (records/dead-letters.ts DLQ_SCHEMA). */
const DLQ_COLUMNS = ['topic', 'partition', 'offset', 'stage', 'error', 'target_table'];

function isDeadLetterTable(schema: Schema): boolean {
  return DLQ_COLUMNS.every((name) => schema.fields.some((f) => f.name === name));
}

/**
 * The key columns floe knows the table by: the schema's identifier fields, else `floe.identifier-columns`.
 * @throws ValidationError for a malformed property or a column not in the schema
 */
function keyIdsOf(metadata: TableMetadata, schema: Schema): number[] {
  const declared = schema['identifier-field-ids'] ?? [];
  if (declared.length > 0) return [...declared];
  const names = readIngestProperties(metadata.properties ?? {}).identifierColumns ?? [];
  return names.map((name) => {
    const field = findFieldByName(schema, name);
    if (!field)
      throw new ValidationError(`floe.identifier-columns names '${name}', which is not in the schema`);
    return field.id;
  });
}

/** Metadata whose main branch is `snapshot`, so the committed state is read as of it. */
function asOf(metadata: TableMetadata, snapshot: Snapshot): TableMetadata {
  const id = snapshot['snapshot-id'];
  const main = metadata.refs.main;
  return {
    ...metadata,
    'current-snapshot-id': id,
    refs: { ...metadata.refs, main: { ...(main ?? { type: 'branch' }), 'snapshot-id': id } },
  };
}

/** Where the lineage sits, and the struct that reads only it. */
function lineageRead(
  schema: Schema,
  kind: TableKind,
): { paths: LineagePaths; struct: StructType } | undefined {
  if (kind === 'dead-letters') {
    const fields = ['topic', 'partition', 'offset'].map((n) => schema.fields.find((f) => f.name === n)!);
    return {
      paths: { topic: ['topic'], partition: ['partition'], offset: ['offset'] },
      struct: { type: 'struct', fields },
    };
  }
  const lineage = lineageFields(schema);
  if (!lineage) return undefined;
  const name = lineage.field.name;
  return {
    paths: {
      topic: [name, lineage.topic.name],
      partition: [name, lineage.partition.name],
      offset: [name, lineage.offset.name],
    },
    struct: {
      type: 'struct',
      fields: [
        {
          ...lineage.field,
          type: { type: 'struct', fields: [lineage.topic, lineage.partition, lineage.offset] },
        },
      ],
    },
  };
}

/** The offsets of the letters `dlq` holds for `target` (its current snapshot). */
async function readDeadLetters(dlq: LoadedTable, target: string): Promise<OffsetTally> {
  const tally = new OffsetTally({ topic: ['topic'], partition: ['partition'], offset: ['offset'] });
  const schema = currentSchema(dlq.metadata);
  if (!isDeadLetterTable(schema)) {
    throw new ValidationError(
      `${formatIdentifier(dlq.identifier)} is not a dead-letter table (no ${DLQ_COLUMNS.join(', ')})`,
    );
  }
  const fields = ['topic', 'partition', 'offset', 'target_table'].map(
    (n) => schema.fields.find((f) => f.name === n)!,
  );
  const plan = await planScan(dlq);
  for await (const row of readScan(dlq, plan, { schema: { type: 'struct', fields } })) {
    if (row.target_table === target || row.target_table === null) tally.addRow(row);
  }
  return tally;
}

/**
 * Verifies one snapshot of `table`.
 * @throws ValidationError for an unknown snapshot id, or table properties and summaries floe cannot read
 * @throws TransientIOError when storage fails in a way a retry may fix
 */
export async function verifyTable(table: LoadedTable, options: VerifyOptions = {}): Promise<VerifyReport> {
  const md = table.metadata;
  const name = formatIdentifier(table.identifier);
  const snapshot =
    options.snapshotId === undefined ? currentSnapshot(md) : snapshotById(md, options.snapshotId);
  if (options.snapshotId !== undefined && !snapshot) {
    throw new ValidationError(`${name} has no snapshot ${options.snapshotId} (it may have expired)`);
  }
  const findings = new FindingList();
  const notes: string[] = [];
  const report: VerifyReport = {
    table: name,
    snapshotId: snapshot?.['snapshot-id'] ?? null,
    deep: options.deep === true,
    findings: [],
    notes,
    counts: {},
  };
  if (!snapshot) {
    notes.push('the table has no snapshot: nothing to check');
    return report;
  }
  const files = await checkFiles(table, snapshot, findings);
  report.counts = {
    manifests: files.manifests,
    'live-files': files.liveFiles,
    'files-checked': files.filesStatted,
  };
  if (files.complete) checkSummaryTotals(snapshot, files.totals, findings, notes);
  else notes.push('metadata files are missing: summary totals and deep checks skipped');
  const broken = findings.findings.some((f) => f.check === 'missing-file');
  if (options.deep && !broken) {
    await verifyRows(table, snapshot, files.totals['total-records'], options, findings, notes, report);
  } else if (options.deep) {
    notes.push('files are missing: the deep checks (offsets, keys) were skipped');
  }
  report.findings = findings.all();
  return report;
}

async function verifyRows(
  table: LoadedTable,
  snapshot: Snapshot,
  rowsAtMost: bigint,
  options: VerifyOptions,
  findings: FindingList,
  notes: string[],
  report: VerifyReport,
): Promise<void> {
  const md = table.metadata;
  const schema = currentSchema(md);
  const mode = readIngestProperties(md.properties ?? {}).mode;
  const keyIds = keyIdsOf(md, schema);
  // Keyed by its mode, not by identifier fields alone: an append table keeps every record, and two
  // records with one key at two offsets are two rows there (Iceberg does not enforce identifier fields).
  const kind: TableKind = isDeadLetterTable(schema)
    ? 'dead-letters'
    : mode === 'debezium' || mode === 'upsert'
      ? 'keyed'
      : 'append';
  const plan = await planScan(table, { snapshotId: snapshot['snapshot-id'] });
  const lineage = lineageRead(schema, kind);
  if (lineage) {
    const rows = new OffsetTally(lineage.paths);
    for await (const row of readScan(table, plan, { schema: lineage.struct })) rows.addRow(row);
    report.counts['rows-read'] = rows.rows;
    const deadLetters =
      kind === 'dead-letters' || !options.deadLetters
        ? undefined
        : await readDeadLetters(options.deadLetters, report.table);
    let committed: CommittedState;
    try {
      committed = readCommittedState(asOf(md, snapshot));
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      findings.add({
        check: 'summary-offsets',
        what: `the committed offsets cannot be read: ${error.message}`,
        where: `snapshot ${snapshot['snapshot-id']} or an ancestor's summary`,
        count: 1n,
      });
      return;
    }
    compareOffsets(
      {
        table: table.identifier,
        kind,
        committed,
        rows,
        deadLetters,
        allowHoles: options.allowHoles === true,
      },
      findings,
      notes,
    );
  } else {
    notes.push(
      'the table has no _kafka lineage (an aggregate result, or a route without it): offsets not checked',
    );
  }
  if (kind === 'keyed' && keyIds.length > 0) {
    const passes = await checkKeys(
      table,
      plan,
      { keyIds, rowsAtMost, keysPerPass: options.keysPerPass },
      findings,
    );
    report.counts['key-passes'] = BigInt(passes);
  } else if (kind === 'keyed') {
    notes.push(`mode ${mode} without key columns: keys not checked`);
  } else if (keyIds.length > 0) {
    notes.push('identifier fields on an append table: keys not checked (it keeps every record)');
  }
}
