/**
 * A registry schema's references, resolved the way serializers register them: each `(subject,
 * version)` once, dependencies before the schemas that import them, so a compiler can take them in
 * order. Shared by the decoder (ingest) and the encoder (kafka-serve).
 */
import { RecordDecodeError } from '../errors.js';
import type { SchemaText } from './compiled-schema.js';
import type { RegistryReference, RegistrySchema, SchemaRegistryClient } from './schema-registry-client.js';

/** References deeper than this are refused (a cycle, or a registry answering nonsense). */
const MAX_REFERENCE_DEPTH = 32;

/**
 * Appends the texts of `references` (and theirs, first) to `out`, skipping those in `seen`.
 * @throws RecordDecodeError when they nest deeper than 32 or one is not found
 * @throws TransientIOError / LakeError when the registry cannot be asked
 */
export async function resolveReferences(
  client: SchemaRegistryClient,
  references: readonly RegistryReference[],
  out: SchemaText[] = [],
  seen: Set<string> = new Set(),
  depth = 0,
): Promise<SchemaText[]> {
  if (depth > MAX_REFERENCE_DEPTH) {
    throw new RecordDecodeError(`schema references nest deeper than ${MAX_REFERENCE_DEPTH}`, 'decode');
  }
  for (const ref of references) {
    const key = JSON.stringify([ref.subject, ref.version]);
    if (seen.has(key)) continue;
    seen.add(key);
    const referenced: RegistrySchema = await client.getSchemaByVersion(ref.subject, ref.version);
    // Dependencies first: a referenced schema's own references are compiled before it.
    await resolveReferences(client, referenced.references, out, seen, depth + 1);
    out.push({ name: ref.name, schemaType: referenced.schemaType, schema: referenced.schema });
  }
  return out;
}
