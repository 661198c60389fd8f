/**
 * Partition evolution: a new default spec applies to data written from now on; files already written
 * keep the spec they were written with (the planner and readers handle every spec). A field that the
 * new spec shares with an earlier one (same source column and transform) keeps its field id and name,
 * as Iceberg Java does, so partition summaries and filters stay comparable across specs.
 */
import type { Catalog } from '../../catalog/catalog.js';
import type { TableChange, TableRequirement } from '../../catalog/requirements-updates.js';
import { currentSchema, defaultSpec } from '../../spec/metadata.js';
import { parsePartitionExpression } from '../../spec/partition-spec.js';
import type { PartitionSpec, TableIdentifier, TableMetadata } from '../../spec/types.js';
import { type CommitOptions, type CommitResult, commitWithRetry } from '../commit-loop.js';

/**
 * What every change of the table's specs commits on: no other writer added a spec or changed the default
 * meanwhile (a new spec would take the same spec id, its new fields the same field ids). Never throws.
 */
export function specsUnchanged(metadata: TableMetadata): TableRequirement[] {
  return [
    {
      type: 'assert-last-assigned-partition-id',
      'last-assigned-partition-id': metadata['last-partition-id'],
    },
    { type: 'assert-default-spec-id', 'default-spec-id': metadata['default-spec-id'] },
  ];
}

/**
 * A spec added to the table without becoming its default, committed with the files written in it (a CDC
 * batch's unpartitioned deletes, cdc/delete-scope.ts). Never throws.
 */
export function addSpec(metadata: TableMetadata, spec: PartitionSpec): TableChange {
  return { requirements: specsUnchanged(metadata), updates: [{ action: 'add-spec', spec }] };
}

/**
 * Makes `expression` the table's default partition spec (unchanged if it already is).
 * @throws ValidationError for an expression that does not fit the current schema
 * @throws CommitFailedError / CommitStateUnknownError from the commit loop
 */
export async function evolvePartitionSpec(
  catalog: Catalog,
  id: TableIdentifier,
  expression: string,
  options: CommitOptions = {},
): Promise<CommitResult & { spec: PartitionSpec }> {
  const result = await commitWithRetry(
    catalog,
    id,
    {
      prepare: async (base) => {
        const md = base.metadata;
        const specs = md['partition-specs'];
        const parsed = parsePartitionExpression(
          expression,
          currentSchema(md),
          Math.max(...specs.map((s) => s['spec-id'])) + 1,
          md['last-partition-id'] + 1,
        );
        const earlier = specs.flatMap((s) => s.fields);
        let nextId = md['last-partition-id'];
        const fields = parsed.fields.map((f) => {
          const same = earlier.find((e) => e['source-id'] === f['source-id'] && e.transform === f.transform);
          return same
            ? { ...f, 'field-id': same['field-id'], name: same.name }
            : { ...f, 'field-id': ++nextId };
        });
        const existing = specs.find((s) => JSON.stringify(s.fields) === JSON.stringify(fields));
        const requirements: TableRequirement[] = [
          { type: 'assert-table-uuid', uuid: md['table-uuid'] },
          ...specsUnchanged(md),
        ];
        if (existing) {
          return { requirements, updates: [{ action: 'set-default-spec', 'spec-id': existing['spec-id'] }] };
        }
        return {
          requirements,
          updates: [
            { action: 'add-spec', spec: { ...parsed, fields } },
            { action: 'set-default-spec', 'spec-id': -1 },
          ],
        };
      },
    },
    options,
  );
  // The table as committed says which spec is the default now (a catalog may number a new one itself).
  return { ...result, spec: defaultSpec(result.table.metadata) };
}
