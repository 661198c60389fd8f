/**
 * The Iceberg table properties floe honours, read in one place with Iceberg's names and defaults
 * (https://iceberg.apache.org/docs/latest/configuration/#table-properties). Retries are read by
 * commit-loop.ts (`commit.retry.*`), maintenance by maintenance/maintenance-settings.ts.
 */
import type { ParquetCodec } from '../data/parquet/write/encode-parquet.js';
import { PAGE_ROWS } from '../data/parquet/write/write-batch.js';
import { ValidationError } from '../errors.js';

/** Iceberg's `write.target-file-size-bytes` default: 512 MiB. */
const DEFAULT_TARGET_FILE_SIZE_BYTES = 512 * 1024 * 1024;

const PARQUET_CODECS: readonly ParquetCodec[] = ['zstd', 'snappy', 'gzip', 'uncompressed'];

/** `write.avro.compression-codec` (default deflate, as gzip in Java); `uncompressed` → the null codec. */
export function avroCodec(properties: Record<string, string>): 'deflate' | 'null' {
  const v = (properties['write.avro.compression-codec'] ?? 'deflate').toLowerCase();
  return v === 'uncompressed' || v === 'null' || v === 'none' ? 'null' : 'deflate';
}

/**
 * `write.parquet.compression-codec` (default zstd, as Iceberg since 1.4).
 * @throws ValidationError for a codec floe does not write
 */
export function parquetCodec(properties: Record<string, string>): ParquetCodec {
  const v = (properties['write.parquet.compression-codec'] ?? 'zstd').toLowerCase();
  const codec = PARQUET_CODECS.find((c) => c === v);
  if (codec === undefined) {
    throw new ValidationError(
      `write.parquet.compression-codec ${JSON.stringify(v)} is not one floe writes (${PARQUET_CODECS.join(', ')})`,
    );
  }
  return codec;
}

/** `write.target-file-size-bytes` (default 512 MiB); a malformed value counts as absent. */
export function targetFileSizeBytes(properties: Record<string, string>): number {
  return intProperty(properties, 'write.target-file-size-bytes', DEFAULT_TARGET_FILE_SIZE_BYTES);
}

/**
 * `write.parquet.page-row-limit`: most rows per data page. floe's default is 5,000 (Iceberg's is
 * 20,000; data/parquet/write-batch.ts says why); a malformed value counts as absent.
 */
export function pageRowLimit(properties: Record<string, string>): number {
  return Math.floor(intProperty(properties, 'write.parquet.page-row-limit', PAGE_ROWS));
}

/** A positive integer property, or the default when absent or malformed. */
export function intProperty(properties: Record<string, string>, key: string, fallback: number): number {
  const v = Number(properties[key]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
}
