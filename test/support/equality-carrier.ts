/** floe's first form of a v3 version carrier, for tests that a table written before still reads and keeps. */
import { randomUUID } from 'node:crypto';
import type { Catalog } from '../../functions/core/catalog/catalog.js';
import { lineageFields, lineageIds } from '../../functions/core/cdc/change-version.js';
import { keySchema } from '../../functions/core/cdc/write-changes.js';
import { writeDataFiles } from '../../functions/core/data/parquet/write/write-data-file.js';
import { joinLocation } from '../../functions/core/io/location.js';
import { currentSchema } from '../../functions/core/spec/metadata.js';
import type { TableIdentifier } from '../../functions/core/spec/types.js';
import { rowDelta } from '../../functions/core/table/actions/row-delta.js';

/**
 * Commits what floe wrote for a key left deleted on v3 before carriers were data files: an equality
 * delete (of the unpartitioned spec 0, key field id 1) named `key-versions-`, holding the key and the
 * deleting change's `_kafka` topic, partition 0 and offset.
 */
export async function commitEqualityCarrier(
  catalog: Catalog,
  identifier: TableIdentifier,
  topic: string,
  id: bigint,
  offset: bigint,
): Promise<void> {
  const table = await catalog.loadTable(identifier);
  const schema = currentSchema(table.metadata);
  const lineage = lineageFields(schema);
  if (!lineage) throw new Error(`${identifier.name} has no _kafka lineage`);
  const deleteFiles = await writeDataFiles([{ id, _kafka: { topic, partition: 0, offset } }], {
    io: table.io,
    schema: keySchema(schema, new Set([1, ...lineageIds(lineage)])),
    specId: 0,
    partition: {},
    content: 2,
    equalityIds: [1],
    nextLocation: () =>
      joinLocation(
        table.metadata.location,
        'data',
        `0123456789ab-key-versions-${randomUUID()}-00000.parquet`,
      ),
  });
  const { change } = await rowDelta(table, { dataFiles: [], deleteFiles });
  await catalog.commitTable(identifier, change.requirements, change.updates);
}
