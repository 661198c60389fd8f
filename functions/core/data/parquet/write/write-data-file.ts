/**
 * Rows → Parquet DataFiles (or equality DeleteFiles) with Iceberg column metrics, rolled at
 * `write.target-file-size-bytes`.
 *
 * Rolling: the encoder (encode-parquet.ts) writes a whole batch at once and cannot append, so file sizes are planned
 * ahead. The first encode covers up to PROBE_ROWS rows; its size gives bytes per row (footer excluded),
 * which sizes every later file. A file that still comes out above the target is re-encoded with fewer
 * rows (at most MAX_SHRINKS times), so files stay ≤ target unless a single row is larger than the
 * target or every re-estimate overshoots; a probe far below the target while rows remain is discarded
 * and re-encoded at the estimated size rather than left as a small file. Cost: none for inputs that fit
 * one file (every ingest batch); otherwise one extra encode of at most PROBE_ROWS rows, plus a re-encode
 * of any file whose estimate overshot.
 */
import { ValidationError } from '../../../errors.js';
import type { DataFile, PartitionValues, Row, Schema, StructType } from '../../../spec/types.js';
import type { FileIO } from '../../../io/file-io.js';
import { toArrowSchema } from '../../arrow/arrow-schema.js';
import type { GatheredRows } from '../../arrow/gathered-rows.js';
import { encodeBounds } from '../../arrow/column-stats.js';
import { type EncodedFile, type ParquetCodec, encodeParquetFile } from './encode-parquet.js';
import { nativeParquetAvailable, PAGE_ROWS } from './write-batch.js';
import { loadParquetWasm } from '../parquet-wasm.js';
import type { RecordBatchSource } from '../../arrow/record-batch-source.js';

export interface WriteDataFilesOptions {
  io: FileIO;
  /** The table schema the rows follow (rows keyed by field name, Value representation). */
  schema: Schema;
  specId: number;
  /** Already computed by the caller; copied into each DataFile. */
  partition: PartitionValues;
  /** Called for each new file (index 0,1,2...) → full location URI, e.g. `${tableLocation}/data/${partitionPath}/${uuid}-${index}.parquet` */
  nextLocation: (index: number) => string;
  /** @default 512 MiB (Iceberg `write.target-file-size-bytes`); roll to a new file when exceeded */
  targetFileSizeBytes?: number;
  /** @default 'zstd' (Iceberg `write.parquet.compression-codec`) */
  codec?: ParquetCodec;
  /** @default 128 MiB (Iceberg `write.parquet.row-group-size-bytes`, compressed bytes) */
  rowGroupSizeBytes?: number;
  /**
   * Rows per page, what the page index prunes and a point read decodes (Iceberg
   * `write.parquet.page-row-limit`). @default PAGE_ROWS: 5,000, floe's default (Iceberg's is 20,000)
   */
  pageRowLimit?: number;
  /** 2 = equality delete file; then equalityIds is required. @default 0 */
  /** 1 = position deletes: the schema must be Iceberg's (file_path 2147483546, pos 2147483545). */
  content?: 0 | 1 | 2;
  equalityIds?: number[];
  sortOrderId?: number;
  /** @default 16 (Iceberg `write.metadata.metrics.default` truncate(16)) */
  metricsTruncateLength?: number;
}

const DEFAULT_TARGET_FILE_SIZE = 512 * 1024 * 1024;
const DEFAULT_ROW_GROUP_SIZE = 128 * 1024 * 1024;
const DEFAULT_TRUNCATE_LENGTH = 16;
/** Rows in the first encode: every ingest batch (≤ 10,000 records) fits in one. */
const PROBE_ROWS = 65_536;
const MAX_SHRINKS = 4;
/** Aim a little below the target: compression varies from one slice of rows to the next. */
const SIZE_SAFETY = 0.95;

/**
 * Writes `rows` (row objects, or rows gathered as columns) as one or more Parquet files through `opts.io` and returns their DataFile entries,
 * in row order (file i holds the rows after those of file i-1). An empty `rows` writes nothing.
 * On failure, files already written by this call are deleted (best effort) before the error is thrown.
 * @throws ValidationError for bad options, a null in a required field or a value of the wrong
 *   representation; LakeError when parquet-wasm fails; whatever `io.write` throws (TransientIOError...)
 */
export async function writeDataFiles(
  rows: Row[] | GatheredRows,
  opts: WriteDataFilesOptions,
): Promise<DataFile[]> {
  return writeFiles(rows, opts);
}

/**
 * Writes the rows of `source` (columns that build their own Arrow batches, e.g. compaction's gathered
 * file columns) exactly as writeDataFiles writes the same rows: the same files, split at the same
 * target size, with the same statistics.
 * @throws as writeDataFiles
 */
export async function writeBatchSourceFiles(
  source: RecordBatchSource,
  opts: WriteDataFilesOptions,
): Promise<DataFile[]> {
  return writeFiles(source, opts);
}

async function writeFiles(rows: Row[] | RecordBatchSource, opts: WriteDataFilesOptions): Promise<DataFile[]> {
  const settings = resolveOptions(opts);
  if (rows.length === 0) return [];
  // snappy (and zstd on a Node without it in zlib) is written by parquet-wasm, loaded only then
  if (!nativeParquetAvailable(settings.codec)) await loadParquetWasm();
  const arrowSchema = toArrowSchema(opts.schema);
  const keyValueMetadata = new Map([['iceberg.schema', JSON.stringify(opts.schema, stringifyBigint)]]);
  const model = new FileSizeModel();
  const target = settings.targetFileSizeBytes;
  const files: DataFile[] = [];
  const written: string[] = [];
  let pending: Promise<void> | undefined;
  try {
    let start = 0;
    while (start < rows.length) {
      const remaining = rows.length - start;
      const probing = !model.known;
      let count = probing ? Math.min(remaining, PROBE_ROWS) : Math.min(remaining, model.rowsFitting(target));
      const encode = (n: number): EncodedFile => {
        const file = encodeParquetFile(opts.schema, arrowSchema, rows, start, start + n, {
          codec: settings.codec,
          rowGroupSizeBytes: settings.rowGroupSizeBytes,
          pageRows: settings.pageRowLimit,
          bytesPerRow: model.known ? model.bytesPerRow : undefined,
          keyValueMetadata,
        });
        model.observe(file);
        return file;
      };
      let file = encode(count);
      for (let shrink = 0; file.bytes.byteLength > target && count > 1 && shrink < MAX_SHRINKS; shrink++) {
        count = Math.max(1, Math.min(count - 1, model.rowsFitting(target)));
        file = encode(count);
      }
      if (probing && count < remaining && model.rowsFitting(target) > count * 1.25) continue;

      const location = opts.nextLocation(files.length);
      const dataFile = toDataFile(file, location, opts, settings.metricsTruncateLength);
      await pending; // one upload in flight while the next file is encoded
      pending = opts.io.write(location, file.bytes);
      pending.catch(() => undefined); // observed by the next await; this only avoids an unhandled rejection
      written.push(location);
      files.push(dataFile);
      start += count;
    }
    await pending;
    return files;
  } catch (error) {
    await pending?.catch(() => undefined);
    await Promise.all(written.map((location) => opts.io.delete(location).catch(() => undefined)));
    throw error;
  }
}

/**
 * Bytes per row of the last file encoded, footer excluded, to plan how many rows fit a target. Only the
 * last file counts: bytes per row depend on how many rows share a dictionary and a compression
 * window, so the most recent file — sized near the target — predicts the next one best.
 */
class FileSizeModel {
  private rows = 0;
  private dataBytes = 0;
  private overhead = 0;

  get known(): boolean {
    return this.rows > 0;
  }

  get bytesPerRow(): number {
    return Math.max(this.dataBytes / this.rows, 1e-3);
  }

  observe(file: EncodedFile): void {
    this.rows = file.rowCount;
    this.dataBytes = Math.max(0, file.bytes.byteLength - file.footer.overheadBytes);
    this.overhead = file.footer.overheadBytes;
  }

  rowsFitting(target: number): number {
    const room = target - this.overhead;
    return Math.max(1, Math.floor((Math.max(room, 0) / this.bytesPerRow) * SIZE_SAFETY));
  }
}

function toDataFile(
  file: EncodedFile,
  location: string,
  opts: WriteDataFilesOptions,
  truncateLength: number,
): DataFile {
  const bounds = encodeBounds(file.stats, truncateLength);
  const content = opts.content ?? 0;
  return {
    content,
    file_path: location,
    file_format: 'PARQUET',
    spec_id: opts.specId,
    partition: { ...opts.partition },
    record_count: BigInt(file.rowCount),
    file_size_in_bytes: BigInt(file.bytes.byteLength),
    column_sizes: file.footer.columnSizes,
    value_counts: file.footer.valueCounts,
    null_value_counts: file.footer.nullValueCounts,
    nan_value_counts: bounds.nanCounts,
    lower_bounds: bounds.lower,
    upper_bounds: bounds.upper,
    key_metadata: null,
    split_offsets: file.footer.splitOffsets,
    equality_ids: content === 2 ? [...(opts.equalityIds ?? [])] : null,
    sort_order_id: opts.sortOrderId ?? null,
  };
}

interface ResolvedOptions {
  targetFileSizeBytes: number;
  rowGroupSizeBytes: number;
  pageRowLimit: number;
  codec: ParquetCodec;
  metricsTruncateLength: number;
}

function resolveOptions(opts: WriteDataFilesOptions): ResolvedOptions {
  const resolved: ResolvedOptions = {
    targetFileSizeBytes: opts.targetFileSizeBytes ?? DEFAULT_TARGET_FILE_SIZE,
    rowGroupSizeBytes: opts.rowGroupSizeBytes ?? DEFAULT_ROW_GROUP_SIZE,
    pageRowLimit: opts.pageRowLimit ?? PAGE_ROWS,
    codec: opts.codec ?? 'zstd',
    metricsTruncateLength: opts.metricsTruncateLength ?? DEFAULT_TRUNCATE_LENGTH,
  };
  for (const key of [
    'targetFileSizeBytes',
    'rowGroupSizeBytes',
    'pageRowLimit',
    'metricsTruncateLength',
  ] as const) {
    const v = resolved[key];
    if (!Number.isInteger(v) || v < 1)
      throw new ValidationError(`${key} must be a positive integer, got ${v}`);
  }
  if (!['zstd', 'snappy', 'gzip', 'uncompressed'].includes(resolved.codec)) {
    throw new ValidationError(`unsupported parquet codec '${resolved.codec}'`);
  }
  const content = opts.content ?? 0;
  if (content !== 0 && content !== 1 && content !== 2)
    throw new ValidationError(`unsupported file content ${String(content)}`);
  if (content === 1) {
    const ids = opts.schema.fields.map((f) => f.id);
    if (ids[0] !== 2147483546 || ids[1] !== 2147483545) {
      throw new ValidationError(
        'a position delete file starts with file_path (id 2147483546) and pos (id 2147483545)',
      );
    }
  }
  if (content === 2) checkEqualityIds(opts.schema, opts.equalityIds);
  else if (opts.equalityIds !== undefined && opts.equalityIds.length > 0) {
    throw new ValidationError('equalityIds are only for equality delete files (content 2)');
  }
  return resolved;
}

/** Equality ids must name primitive fields reachable through structs only (not in lists or maps). */
function checkEqualityIds(schema: StructType, ids: number[] | undefined): void {
  if (!ids || ids.length === 0) throw new ValidationError('an equality delete file needs equalityIds');
  const allowed = new Set<number>();
  const visit = (struct: StructType): void => {
    for (const f of struct.fields) {
      if (typeof f.type === 'string') allowed.add(f.id);
      else if (f.type.type === 'struct') visit(f.type);
    }
  };
  visit(schema);
  for (const id of ids) {
    if (!allowed.has(id)) {
      throw new ValidationError(
        `equality id ${id} is not a primitive field of the schema outside lists and maps`,
      );
    }
  }
}

function stringifyBigint(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}
