/**
 * `floe verify`: audits one snapshot of a table (functions/core/verify/): exit 0 when floe's promises
 * hold, 1 with each finding (what, where, how many), 2 for usage errors. Reads only.
 */
import { parseArgs } from 'node:util';
import { parseIdentifier } from '../../core/catalog/catalog.js';
import { dlqIdentifier } from '../../core/records/dead-letters.js';
import { stringifyJson } from '../../core/spec/json-codec.js';
import type { VerifyReport } from '../../core/verify/findings.js';
import { verifyTable } from '../../core/verify/verify-table.js';
import { CATALOG_USAGE, openCatalog } from '../catalog-options.js';
import { helpFor } from '../help.js';
import { OPTIONS, UsageError } from '../options.js';

const VERIFY_FLAGS = {
  snapshot: { type: 'string' },
  deep: { type: 'boolean' },
  'allow-holes': { type: 'boolean' },
  'dlq-table': { type: 'string' },
} as const;

function verifyOptions() {
  // Built on call, as rebase-offsets.ts's: the CLI's modules import each other.
  return { ...OPTIONS, ...VERIFY_FLAGS };
}

function printReport(report: VerifyReport): void {
  const out: string[] = [];
  const at = report.snapshotId === null ? 'no snapshot' : `snapshot ${report.snapshotId}`;
  const counts = Object.entries(report.counts)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  out.push(`${report.table} at ${at}${report.deep ? ' (deep)' : ''}: ${counts || 'nothing read'}`);
  for (const f of report.findings)
    out.push(`FINDING ${f.check}: ${f.what}\n  where: ${f.where}\n  count: ${f.count}`);
  for (const n of report.notes) out.push(`note: ${n}`);
  out.push(report.findings.length === 0 ? 'verify: clean' : `verify: ${report.findings.length} finding(s)`);
  process.stdout.write(`${out.join('\n')}\n`);
}

/** Runs `floe verify`; returns the exit code (0 clean, 1 findings). @throws UsageError for bad flags */
export async function runVerify(args: string[]): Promise<number> {
  let values: ReturnType<typeof parseArgs<{ options: ReturnType<typeof verifyOptions> }>>['values'];
  try {
    const parsed = parseArgs({ args, options: verifyOptions(), allowPositionals: true, strict: true });
    if (parsed.positionals.length > 0)
      throw new UsageError(`verify takes no arguments, got '${parsed.positionals[0]}'`);
    values = parsed.values;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError((error as Error).message);
  }
  if (values.help) {
    process.stdout.write(`${helpFor('verify')!}\n${CATALOG_USAGE}`);
    return 0;
  }
  if (!values.table) throw new UsageError('verify needs --table NS.NAME');
  const snapshotText = values.snapshot;
  if (snapshotText !== undefined && !/^-?\d+$/.test(snapshotText))
    throw new UsageError(`--snapshot takes a snapshot id (an integer), got '${snapshotText}'`);
  const id = parseIdentifier(values.table);
  const { catalog } = await openCatalog(values);
  const table = await catalog.loadTable(id);
  const dlqId = dlqIdentifier(id, values['dlq-table']);
  const deadLetters =
    values.deep && (await catalog.tableExists(dlqId)) ? await catalog.loadTable(dlqId) : undefined;
  const report = await verifyTable(table, {
    snapshotId: snapshotText === undefined ? undefined : BigInt(snapshotText),
    deep: values.deep === true,
    allowHoles: values['allow-holes'] === true,
    deadLetters,
  });
  if (values.json) process.stdout.write(`${stringifyJson(report, 2)}\n`);
  else printReport(report);
  return report.findings.length === 0 ? 0 : 1;
}
