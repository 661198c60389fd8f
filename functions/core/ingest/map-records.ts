/**
 * Where a batch is mapped: one table's records of a batch → rows of the (possibly evolved) schema,
 * with the dead letters and the schema change to commit. The path is chosen here, and only here:
 *   plain JSON values with no `when` → their text straight into columns where they fit the schema
 *     (mapping/fast/gather-json.ts; the rest decoded and mapped by the general path);
 *   anything else → decoded by the route's format (routing/decode-for-route.ts), taken by the route's
 *     `when` (routing/select-for-route.ts), mapped by mapping/map-batch.ts (which takes its own fast
 *     path for values that fit).
 * Both give the same rows and dead letters (the equivalence property tests in test/unit/mapping).
 */
import type { TableMetadata } from '../spec/types.js';
import type { DeadLetter } from '../records/dead-letters.js';
import type { RawRecord } from '../records/esm-event.js';
import type { DecodedRecord } from '../mapping/decoded-record.js';
import { evolutionPolicyOf } from '../mapping/evolution/evolution-policy.js';
import { gatherJsonBatch } from '../mapping/fast/gather-json.js';
import { type MappedBatch, mapBatch } from '../mapping/map-batch.js';
import { DEFAULT_MAPPING } from '../mapping/mapping-config.js';
import { decodeFor } from '../routing/decode-for-route.js';
import type { TableRoute } from '../routing/routes.js';
import { selectForRoute } from '../routing/select-for-route.js';

export interface MappedRecords {
  batch: MappedBatch;
  /** Records that could not be decoded, that no route takes, or that do not map (in that order). */
  deadLetters: DeadLetter[];
  /** The records decoded and taken by the route (decoded on first call when the fast path skipped that). */
  decoded(): Promise<DecodedRecord[]>;
  /**
   * Maps decoded records again on a base that moved (a new schema), with the same mapping and policy:
   * the general path, rows not columns. @throws as mapRecords
   */
  remap(decoded: readonly DecodedRecord[], metadata: TableMetadata): MappedBatch;
}

/**
 * Maps one table's records of a batch against the table's metadata.
 * @param allRoutes every route of the event: records another route's `when` takes are not dead letters
 * @throws ValidationError when the mapping does not fit the table; SchemaEvolutionError under policy block
 * @throws LakeError from decoding (a registry outage): nothing is dead-lettered then
 */
export async function mapRecords(
  route: TableRoute,
  records: RawRecord[],
  metadata: TableMetadata,
  allRoutes: readonly TableRoute[] = [route],
): Promise<MappedRecords> {
  const mapOptions = {
    mapping: route.mapping ?? DEFAULT_MAPPING,
    metadata,
    policy: evolutionPolicyOf(metadata.properties, route.schemaEvolution),
    columnar: true,
  };
  const remap = (decoded: readonly DecodedRecord[], moved: TableMetadata) =>
    mapBatch(decoded, { mapping: mapOptions.mapping, metadata: moved, policy: mapOptions.policy });
  // JSON whose text fits the schema as it is skips decoding into objects (only the rest is decoded).
  const scanned = !route.format && !route.when ? gatherJsonBatch(records, mapOptions) : undefined;
  if (scanned) {
    let decoded: DecodedRecord[] | undefined;
    return {
      batch: scanned,
      deadLetters: scanned.deadLetters,
      decoded: async () => {
        decoded ??= (await decodeFor(route, records)).decoded;
        return decoded;
      },
      remap,
    };
  }
  const { decoded, deadLetters: decodeLetters } = await decodeFor(route, records);
  const selected = selectForRoute(route, allRoutes, decoded);
  const batch = mapBatch(selected.mine, mapOptions);
  return {
    batch,
    deadLetters: [...decodeLetters, ...selected.unrouted, ...batch.deadLetters],
    decoded: async () => selected.mine,
    remap,
  };
}
