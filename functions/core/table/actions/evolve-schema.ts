/**
 * Schema evolution (Iceberg's UpdateSchema): a new schema made current. It commits in the same snapshot
 * as the rows written with it (as the pre-updates of append-files.ts or row-delta.ts), on the condition
 * that no other writer evolved the schema meanwhile — the base's current schema id and last assigned
 * field id. If one did, the caller reconciles again on the new base (mapping/evolution/), and the new
 * column ids are drawn above the other writer's, so no id is ever used twice.
 */
import type { TableChange } from '../../catalog/requirements-updates.js';
import type { Schema } from '../../spec/types.js';

/** The table's schema as the evolution was planned on. */
export interface SchemaBase {
  schemaId: number;
  lastColumnId: number;
}

/** The requirements + updates that make `schema` current on a table still at `base`. Never throws. */
export function evolveSchema(base: SchemaBase, schema: Schema, lastColumnId: number): TableChange {
  return {
    updates: [
      { action: 'add-schema', schema, 'last-column-id': lastColumnId },
      { action: 'set-current-schema', 'schema-id': schema['schema-id'] },
    ],
    requirements: [
      { type: 'assert-current-schema-id', 'current-schema-id': base.schemaId },
      { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': base.lastColumnId },
    ],
  };
}
