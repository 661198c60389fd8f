/**
 * One Parquet file from a range of rows: rows → Arrow RecordBatch (JS, typed arrays) → Parquet bytes.
 * floe's own writer (write-batch.ts and the files beside it) encodes the batch directly for ZSTD, GZIP and uncompressed files;
 * SNAPPY (which Node's zlib lacks) and ZSTD on a Node without zlib zstd go through Arrow IPC into
 * parquet-wasm (arrow-rs in WebAssembly), whose footer is then read back for column sizes, counts and
 * split offsets. Both encode a whole batch at once, which is why rolling to several files is planned by
 * the caller (write-data-file.ts) from the sizes this returns.
 */
import * as arrow from 'apache-arrow';
import { LakeError, ValidationError } from '../../../errors.js';
import type { Row, StructType } from '../../../spec/types.js';
import { buildRecordBatch } from '../../arrow/build-record-batch.js';
import type { StatsSink } from '../../arrow/column-stats.js';
import { parquetWasm } from '../parquet-wasm.js';
import type { RecordBatchSource } from '../../arrow/record-batch-source.js';
import { encodeBatchAsParquet, nativeParquetAvailable } from './write-batch.js';
import { type FooterMetrics, readFooterMetrics } from './footer-metrics.js';

export type ParquetCodec = 'zstd' | 'snappy' | 'gzip' | 'uncompressed';

const CODECS: Record<ParquetCodec, 'ZSTD' | 'SNAPPY' | 'GZIP' | 'UNCOMPRESSED'> = {
  zstd: 'ZSTD',
  snappy: 'SNAPPY',
  gzip: 'GZIP',
  uncompressed: 'UNCOMPRESSED',
};

export interface EncodeOptions {
  codec: ParquetCodec;
  rowGroupSizeBytes: number;
  /** Most rows per data page (floe's writer). @default PAGE_ROWS */
  pageRows?: number;
  /**
   * Compressed bytes per row seen in earlier files, to size row groups. Without it the Arrow IPC size
   * is used: larger than the compressed size, so the first file's row groups err on the small side.
   */
  bytesPerRow?: number;
  /** Extra Parquet key-value metadata (`iceberg.schema`). */
  keyValueMetadata: Map<string, string>;
}

export interface EncodeBatchOptions {
  codec: ParquetCodec;
  rowGroupRows: number;
  keyValueMetadata: Map<string, string>;
  pageRows?: number;
  /** @default 'floe' when it supports the codec here, else 'parquet-wasm' */
  writer?: 'floe' | 'parquet-wasm';
}

export interface EncodedFile {
  bytes: Uint8Array;
  rowCount: number;
  stats: StatsSink;
  footer: FooterMetrics;
}

/**
 * Encodes `rows[start, end)` as one Parquet file.
 * @throws ValidationError for rows that do not fit the schema (required null, wrong representation);
 *   LakeError when parquet-wasm fails to encode
 */
export function encodeParquetFile(
  schema: StructType,
  arrowSchema: arrow.Schema,
  rows: Row[] | RecordBatchSource,
  start: number,
  end: number,
  opts: EncodeOptions,
): EncodedFile {
  const rowCount = end - start;
  const stats: StatsSink = new Map();
  const batch = Array.isArray(rows)
    ? buildRecordBatch(schema, arrowSchema, rows, start, end, stats)
    : rows.buildBatch(schema, arrowSchema, start, end, stats);
  // Without a measured size, the Arrow buffers' size: larger than the compressed file, so the first
  // file's row groups err on the small side.
  const bytesPerRow = opts.bytesPerRow ?? batch.data.byteLength / Math.max(rowCount, 1);
  const rowGroupRows = Math.max(1, Math.floor(opts.rowGroupSizeBytes / Math.max(bytesPerRow, 1e-3)));
  const { bytes, footer } = encodeBatch(schema, batch, {
    codec: opts.codec,
    rowGroupRows: Math.min(rowGroupRows, 0x7fffffff),
    keyValueMetadata: opts.keyValueMetadata,
    pageRows: opts.pageRows,
  });
  return { bytes, rowCount, stats, footer };
}

/**
 * An Arrow batch built by build-record-batch.ts → Parquet bytes and their footer metrics.
 * @throws ValidationError for a batch that does not fit the schema; LakeError when parquet-wasm fails
 */
export function encodeBatch(
  schema: StructType,
  batch: arrow.RecordBatch,
  opts: EncodeBatchOptions,
): { bytes: Uint8Array; footer: FooterMetrics } {
  // nativeParquetAvailable is false for snappy, and for zstd on a Node whose zlib lacks it.
  const writer = opts.writer ?? (nativeParquetAvailable(opts.codec) ? 'floe' : 'parquet-wasm');
  if (writer === 'floe') {
    if (opts.codec === 'snappy') throw new ValidationError("floe's Parquet writer has no snappy codec");
    return encodeBatchAsParquet(schema, batch, {
      codec: opts.codec,
      rowGroupRows: opts.rowGroupRows,
      keyValueMetadata: opts.keyValueMetadata,
      pageRows: opts.pageRows,
    });
  }
  let bytes: Uint8Array;
  try {
    // loaded by writeDataFiles (or the caller) for the codecs floe's writer lacks
    const { Compression, Table: WasmTable, WriterPropertiesBuilder, writeParquet } = parquetWasm();
    const ipc = arrow.tableToIPC(new arrow.Table([batch]), 'stream');
    let builder = new WriterPropertiesBuilder()
      .setCompression(Compression[CODECS[opts.codec]])
      // parquet-wasm 0.8 ignores setMaxRowGroupBytes, so the byte target is a row count.
      .setMaxRowGroupSize(opts.rowGroupRows)
      .setKeyValueMetadata(opts.keyValueMetadata)
      // Dictionary pages pay off for low-cardinality text (country, status), rarely for ids, amounts
      // or timestamps: faster and ~25 % smaller files this way.
      .setDictionaryEnabled(false);
    for (const f of schema.fields) {
      if (f.type === 'string') builder = builder.setColumnDictionaryEnabled(f.name, true);
    }
    bytes = writeParquet(WasmTable.fromIPCStream(ipc), builder.build());
  } catch (error) {
    throw new LakeError(`parquet-wasm could not encode ${batch.numRows} rows: ${String(error)}`, {
      cause: error,
    });
  }
  return { bytes, footer: readFooterMetrics(bytes) };
}
