/** Iceberg table properties floe honours, with Iceberg's names and defaults. */

/** `write.avro.compression-codec` (default deflate, as gzip in Java); `uncompressed` → the null codec. */
export function avroCodec(properties: Record<string, string>): 'deflate' | 'null' {
  const v = (properties['write.avro.compression-codec'] ?? 'deflate').toLowerCase();
  return v === 'uncompressed' || v === 'null' || v === 'none' ? 'null' : 'deflate';
}

/** A positive integer property, or the default when absent or malformed. */
export function intProperty(properties: Record<string, string>, key: string, fallback: number): number {
  const v = Number(properties[key]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
}
