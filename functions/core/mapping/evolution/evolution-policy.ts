/**
 * What a table does when a batch needs a different schema (table property `floe.schema-evolution`, or
 * the route's `schemaEvolution`, or a CLI flag):
 *   - `evolve` (default): compatible changes commit with the data; records needing incompatible ones go
 *     to the DLQ with the reason.
 *   - `block`: compatible changes commit; a record needing an incompatible one fails the whole batch
 *     (SchemaEvolutionError, not retryable: the ESM retries, alarms fire, nothing is dead-lettered).
 *   - `dlq`: the schema never changes; records that would need any change go to the DLQ.
 */
import { ValidationError } from '../../errors.js';
import {
  EVOLUTION_POLICIES,
  EVOLUTION_PROPERTY,
  type EvolutionPolicy,
  readIngestProperties,
} from '../../spec/table-properties.js';

// Defined with the table property that stores them (floe.schema-evolution).
export { EVOLUTION_POLICIES, EVOLUTION_PROPERTY, type EvolutionPolicy };

/** @throws ValidationError naming `path` when the value is not a policy */
export function parseEvolutionPolicy(value: unknown, path: string): EvolutionPolicy {
  if (!EVOLUTION_POLICIES.includes(value as EvolutionPolicy)) {
    throw new ValidationError(
      `${path}: must be one of ${EVOLUTION_POLICIES.join(', ')}, got ${JSON.stringify(value)}`,
    );
  }
  return value as EvolutionPolicy;
}

/**
 * The policy of a table: an explicit override (route or CLI) first, then the table property, then
 * `evolve`.
 * @throws ValidationError when the property holds something else
 */
export function evolutionPolicyOf(
  properties: Record<string, string> | undefined,
  override?: EvolutionPolicy,
): EvolutionPolicy {
  return override ?? readIngestProperties(properties).schemaEvolution ?? 'evolve';
}
