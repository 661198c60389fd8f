import { parseIdentifier } from '../../core/catalog/catalog.js';
import { readManifestEntries } from '../../core/manifest/manifest-reader.js';
import { readManifestList } from '../../core/manifest/manifest-list.js';
import { currentSchema, currentSnapshot, defaultSpec } from '../../core/spec/metadata.js';
import { formatPartitionSpec } from '../../core/spec/partition-spec.js';
import { stringifyJson } from '../../core/spec/json-codec.js';
import { typeToString } from '../../core/spec/schema.js';
import { openCatalog } from '../catalog-options.js';
import { type ParsedOptions, requireOption } from '../options.js';
import { printTable } from '../print-table.js';

const CONTENT = ['data', 'position-deletes', 'equality-deletes'];

interface LiveFile extends Record<string, unknown> {
  content: string | undefined;
  path: string;
  records: bigint;
  bytes: bigint;
  seq: bigint | null;
  snapshot: bigint | null;
}

export async function runInspect(values: ParsedOptions): Promise<number> {
  const id = parseIdentifier(requireOption(values, 'table'));
  const { catalog } = await openCatalog(values);
  const table = await catalog.loadTable(id);
  const md = table.metadata;
  const schema = currentSchema(md);
  const current = currentSnapshot(md);
  const files: LiveFile[] = [];
  if (current) {
    for (const manifest of await readManifestList(table.io, current['manifest-list'])) {
      for (const e of await readManifestEntries(table.io, manifest)) {
        if (e.status === 2) continue;
        // bigints, not Numbers: snapshot ids are 63-bit and a double would round them (and any count
        // past 2^53); printTable and stringifyJson both write them exactly.
        files.push({
          content: CONTENT[e.data_file.content],
          path: e.data_file.file_path.slice(md.location.length + 1),
          records: e.data_file.record_count,
          bytes: e.data_file.file_size_in_bytes,
          seq: e.sequence_number,
          snapshot: e.snapshot_id,
        });
      }
    }
  }
  if (values.json) {
    process.stdout.write(
      `${stringifyJson({ metadataLocation: table.metadataLocation, metadata: md, files }, 2)}\n`,
    );
    return 0;
  }
  process.stdout.write(`table ${requireOption(values, 'table')}  (${md['table-uuid']})\n`);
  process.stdout.write(`location  ${md.location}\nmetadata  ${table.metadataLocation}\n`);
  if (md['format-version'] !== 2) {
    const lineage = md['format-version'] >= 3 ? `, next-row-id ${md['next-row-id'] ?? 0}` : '';
    process.stdout.write(`format    v${md['format-version']}${lineage}\n`);
  }
  process.stdout.write(
    `schema ${schema['schema-id']}: ${schema.fields.map((f) => `${f.name} ${typeToString(f.type)}${f.required ? ' not null' : ''}`).join(', ')}\n`,
  );
  process.stdout.write(
    `partition spec ${md['default-spec-id']}: ${formatPartitionSpec(defaultSpec(md), schema) || 'unpartitioned'}\n\n`,
  );
  process.stdout.write(`snapshots (${md.snapshots.length}):\n`);
  printTable(
    md.snapshots.map((s) => ({
      'snapshot-id': s['snapshot-id'],
      seq: s['sequence-number'],
      time: new Date(s['timestamp-ms']).toISOString(),
      operation: s.summary.operation,
      'added-records': s.summary['added-records'] ?? '0',
      'total-records': s.summary['total-records'] ?? '?',
      'total-files': s.summary['total-data-files'] ?? '?',
      'eq-deletes': s.summary['total-equality-deletes'] ?? '0',
      'batch-id': s.summary['floe.batch-id'] ?? '',
    })),
    40,
  );
  const totalBytes = files.reduce((s, f) => s + f.bytes, 0n);
  process.stdout.write(`\nlive files (${files.length}, ${totalBytes} bytes):\n`);
  printTable(files, 80);
  return 0;
}
