/**
 * A catalog's "committed" answer is checked against the change it answers, not trusted. A REST catalog
 * answered 200 with another table's metadata, and with the unchanged metadata, and floe reported both
 * batches committed while the table held none of their rows. The metadata a commit returns must show
 * the change sent: the same table (`table-uuid` of the base), and each update's effect —
 *   add-snapshot        → that snapshot is there, by id, with the same `floe.batch-id` as sent;
 *   set-snapshot-ref    → the ref (for appends, rewrites and row deltas: `main`) points at the id sent;
 *   remove-snapshots    → none of those snapshots is left (expiry deletes files on the strength of it);
 *   remove-snapshot-ref → the ref is gone;
 *   set-current-schema  → the current schema is the one added (a server may renumber an added schema,
 *                         so the fields are compared), or the id set when none was added.
 * Property, spec and sort-order updates are not checked: servers may normalise them, and nothing floe
 * deletes or reports depends on them having landed. A mismatch is an unknown outcome, not a failure:
 * the commit may well have landed, so the commit loop reloads and looks for it.
 */
import { stringifyJson } from '../spec/json-codec.js';
import { schemaById } from '../spec/metadata.js';
import type { TableMetadata } from '../spec/types.js';
import type { TableChange } from './requirements-updates.js';

/** table/source-offsets.ts's BATCH_ID_KEY (the catalog folder sits below table/ and cannot import it). */
const BATCH_ID_KEY = 'floe.batch-id';

/** The uuid a change is conditional on: its base's, else its `assert-table-uuid` requirement's. */
function expectedUuid(base: TableMetadata | undefined, change: TableChange): string | undefined {
  if (base) return base['table-uuid'];
  for (const r of change.requirements) if (r.type === 'assert-table-uuid') return r.uuid;
  return undefined;
}

/**
 * What is wrong with `answer` as the result of committing `change` on `base`, or undefined when it shows
 * the change. Never throws.
 */
export function checkCommitResponse(
  base: TableMetadata | undefined,
  change: TableChange,
  answer: TableMetadata,
): string | undefined {
  const uuid = expectedUuid(base, change);
  if (uuid !== undefined && answer['table-uuid'] !== uuid) {
    return `the answer is another table's metadata (table-uuid ${answer['table-uuid']}, the table committed to is ${uuid})`;
  }
  const snapshots = new Map(answer.snapshots.map((s) => [s['snapshot-id'], s]));
  let addedSchema: { id: number; fields: string } | undefined;
  for (const update of change.updates) {
    switch (update.action) {
      case 'add-snapshot': {
        const sent = update.snapshot;
        const got = snapshots.get(sent['snapshot-id']);
        if (!got) return `snapshot ${sent['snapshot-id']} just committed is not in the answer`;
        const batch = sent.summary[BATCH_ID_KEY];
        if (batch !== undefined && got.summary?.[BATCH_ID_KEY] !== batch) {
          return `snapshot ${sent['snapshot-id']} in the answer carries ${BATCH_ID_KEY} ${String(got.summary?.[BATCH_ID_KEY])}, not ${batch}`;
        }
        break;
      }
      case 'set-snapshot-ref': {
        const ref =
          answer.refs?.[update['ref-name']]?.['snapshot-id'] ??
          (update['ref-name'] === 'main' ? answer['current-snapshot-id'] : undefined);
        if (ref !== update['snapshot-id']) {
          return `ref ${update['ref-name']} points at ${String(ref ?? 'nothing')} in the answer, not at ${update['snapshot-id']} just committed`;
        }
        break;
      }
      case 'remove-snapshots': {
        const left = update['snapshot-ids'].filter((id) => snapshots.has(id));
        if (left.length > 0)
          return `snapshot(s) ${left.join(', ')} removed by this commit are still in the answer`;
        break;
      }
      case 'remove-snapshot-ref':
        if (answer.refs?.[update['ref-name']] !== undefined) {
          return `ref ${update['ref-name']} removed by this commit is still in the answer`;
        }
        break;
      case 'add-schema':
        addedSchema = { id: update.schema['schema-id'], fields: stringifyJson(update.schema.fields) };
        break;
      case 'set-current-schema': {
        const id = update['schema-id'];
        const current = schemaById(answer, answer['current-schema-id']);
        if (addedSchema && (id === -1 || id === addedSchema.id)) {
          if (!current || stringifyJson(current.fields) !== addedSchema.fields) {
            return `the current schema in the answer (id ${answer['current-schema-id']}) is not the schema just added`;
          }
        } else if (id !== -1 && answer['current-schema-id'] !== id) {
          return `the current schema in the answer is ${answer['current-schema-id']}, not ${id} just set`;
        }
        break;
      }
      default:
        break;
    }
  }
  return undefined;
}
