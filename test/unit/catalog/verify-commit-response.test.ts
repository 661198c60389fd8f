/**
 * checkCommitResponse(): what a catalog's "committed" answer must show of the change it answers. The answer
 * applying the change is always accepted; each way of not showing it is named.
 */
import { describe, expect, it } from 'vitest';
import { applyUpdates } from '../../../functions/core/catalog/apply-updates.js';
import type { TableChange } from '../../../functions/core/catalog/requirements-updates.js';
import { checkCommitResponse } from '../../../functions/core/catalog/verify-commit-response.js';
import { newTableMetadata } from '../../../functions/core/spec/metadata.js';
import type { TableMetadata } from '../../../functions/core/spec/types.js';
import { appendChange, CONTRACT_SCHEMA } from '../../contract/catalog-contract.js';

const table = (md: TableMetadata) => ({
  identifier: { namespace: ['db'], name: 't' },
  metadata: md,
  metadataLocation: 'mem://t/metadata/v.metadata.json',
  io: undefined as never,
});

function twoSnapshots(): TableMetadata {
  let md = newTableMetadata({ location: 'mem://t', schema: CONTRACT_SCHEMA });
  for (let i = 0; i < 2; i++) md = applyUpdates(md, appendChange(table(md)).updates);
  return md;
}

describe('checkCommitResponse', () => {
  it('accepts the answer that applied the change, for appends, expiry and schema changes', () => {
    // Prepare
    const base = twoSnapshots();
    const changes: TableChange[] = [
      appendChange(table(base)),
      {
        requirements: [],
        updates: [{ action: 'remove-snapshots', 'snapshot-ids': [base.snapshots[0]['snapshot-id']] }],
      },
      {
        requirements: [],
        updates: [
          {
            action: 'add-schema',
            schema: {
              ...CONTRACT_SCHEMA,
              'schema-id': 1,
              fields: [...CONTRACT_SCHEMA.fields, { id: 50, name: 'x', required: false, type: 'int' }],
            },
            'last-column-id': 50,
          },
          { action: 'set-current-schema', 'schema-id': -1 },
        ],
      },
      {
        requirements: [],
        updates: [{ action: 'set-properties', updates: { 'write.format.default': 'parquet' } }],
      },
    ];

    // Act + Assess
    for (const change of changes) {
      expect(checkCommitResponse(base, change, applyUpdates(base, change.updates))).toBeUndefined();
    }
  });

  it('names each way an answer fails to show the change', () => {
    // Prepare
    const base = twoSnapshots();
    const append = appendChange(table(base));
    const applied = applyUpdates(base, append.updates);
    const other = newTableMetadata({ location: 'mem://other', schema: CONTRACT_SCHEMA });
    const snapshot = applied.snapshots.at(-1)!;
    const relabelled = {
      ...applied,
      snapshots: [
        ...applied.snapshots.slice(0, -1),
        { ...snapshot, summary: { ...snapshot.summary, 'floe.batch-id': 'another-batch' } },
      ],
    };
    const expire: TableChange = {
      requirements: [],
      updates: [{ action: 'remove-snapshots', 'snapshot-ids': [base.snapshots[0]['snapshot-id']] }],
    };

    // Act + Assess
    expect(checkCommitResponse(base, append, other)).toMatch(/another table's metadata/);
    expect(checkCommitResponse(undefined, append, other)).toMatch(/another table's metadata/); // from assert-table-uuid
    expect(checkCommitResponse(base, append, base)).toMatch(/just committed is not in the answer/);
    expect(checkCommitResponse(base, append, relabelled)).toMatch(/carries floe.batch-id another-batch/);
    expect(checkCommitResponse(base, append, { ...applied, refs: base.refs })).toMatch(/ref main points at/);
    expect(checkCommitResponse(base, expire, base)).toMatch(/removed by this commit are still in the answer/);
    expect(
      checkCommitResponse(
        base,
        { requirements: [], updates: [{ action: 'set-current-schema', 'schema-id': 3 }] },
        base,
      ),
    ).toMatch(/current schema in the answer is 0, not 3/);
  });
});
