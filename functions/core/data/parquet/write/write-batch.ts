/**
 * Arrow RecordBatch → one Parquet file, in TypeScript, laid out as Iceberg Java writes DataFiles (field
 * ids everywhere, data page V1, PLAIN values, RLE levels, statistics), with the footer metrics computed
 * while writing.
 *
 * Why hand-written: parquet-wasm (arrow-rs in WASM) needs the batch serialised to Arrow IPC and copied
 * into WASM memory, and cannot take the typed columns as they are: on the 10,000-row orders bench batch
 * that costs about three times the CPU of this writer, zstd included. hyparquet-writer (npm 0.17.0,
 * checked) is pure JS but takes arrays of JS values (every Arrow value would be boxed again), writes
 * data page V2 only and brings no codec but snappy; the parquetjs forks write neither field ids nor
 * zstd. Node's zlib has zstd from 22.15, so no dependency is added.
 */
import type * as arrow from 'apache-arrow';
import { ValidationError } from '../../../errors.js';
import type { StructType } from '../../../spec/types.js';
import type { FooterMetrics } from './footer-metrics.js';
import { type ChunkStats, dictionaryStats } from './chunk-stats.js';
import { dictionaryPageStats, plainPageStats } from './page-stats.js';
import { type ColumnChunkMeta, encodeFooter, footerMetrics, type RowGroupMeta } from './footer.js';
import { type LeafLevels, shredBatch } from './levels.js';
import {
  CODEC_IDS,
  ChunkOutput,
  codecAvailable,
  Encoding,
  emitDataPage,
  PageScratch,
  PageType,
  type PageCodec,
  writeLevels,
} from './pages.js';
import { toParquetSchema } from './parquet-schema.js';
import { encodePlain, pageBreaks } from './plain-values.js';
import { tryDictionaryChunk } from './dictionary.js';
import { encodeColumnIndex, encodeOffsetIndex, type IndexedChunk } from './page-index.js';

export interface ArrowParquetOptions {
  codec: 'zstd' | 'gzip' | 'uncompressed';
  /** Rows per row group (the caller sizes row groups). */
  rowGroupRows: number;
  keyValueMetadata: Map<string, string>;
  /** Dictionary-encode low-cardinality string columns. @default true */
  dictionary?: boolean;
  /** Target uncompressed bytes per data page. @default PAGE_BYTES (1 MiB) */
  pageBytes?: number;
  /** Most rows per data page (Iceberg `write.parquet.page-row-limit`). @default PAGE_ROWS (5,000) */
  pageRows?: number;
}

/**
 * floe's default `write.parquet.page-row-limit` (Iceberg's is 20,000; a caller's limit, e.g. the table
 * property, wins). A point read decodes the whole page holding its row in every column, so the page is
 * the unit a query by key pays for: on the bench's compacted 50,000-row orders file one row of every
 * column cost 9.8-15.7 ms with 20,000-row pages and 3.5-4 ms with 5,000 (read from a slice of the pages
 * holding it, parquet/read/page-slice.ts). The cost, measured on the same rows: files 0.5 % (10,000 rows) to
 * 1.1 % (50,000) larger, write CPU within noise (+2 % at 50,000); 2,000-row pages added 2 % bytes and
 * 28 % write CPU at 50,000 rows for a smaller gain. Batches under 5,000 rows are one page either way.
 */
export const PAGE_ROWS = 5_000;

/** Target uncompressed bytes per data page (parquet-mr's default page size). */
export const PAGE_BYTES = 1 << 20;

const MAGIC = new Uint8Array([0x50, 0x41, 0x52, 0x31]); // PAR1

/** Whether this writer can produce `codec` here: not snappy, and zstd only when zlib has it. */
export function nativeParquetAvailable(codec: string): boolean {
  return codecAvailable(codec);
}

/**
 * The Parquet file of `batch` (built for `schema` by build-record-batch.ts) and its footer metrics.
 * @throws ValidationError when the codec is unavailable, the batch does not match the schema, or a
 *   required value is null
 */
export function encodeBatchAsParquet(
  schema: StructType,
  batch: arrow.RecordBatch,
  opts: ArrowParquetOptions,
): { bytes: Uint8Array; footer: FooterMetrics } {
  const codec = opts.codec;
  if (!codecAvailable(codec)) throw new ValidationError(`Parquet codec '${codec}' is not available here`);
  const pq = toParquetSchema(schema);
  const leaves = shredBatch(pq, batch);
  const numRows = batch.numRows;
  const groupRows = Math.max(1, Math.floor(opts.rowGroupRows) || 1);
  const groupStarts: number[] = [];
  for (let r = 0; r < numRows; r += groupRows) groupStarts.push(r);
  const bounds = leaves.map((l) => levelBounds(l, groupStarts, numRows));

  const parts: Uint8Array[] = [MAGIC];
  let offset = MAGIC.length;
  const scratch = new PageScratch();
  const pageBytes = Math.max(1, opts.pageBytes ?? PAGE_BYTES);
  const pageRows = Math.max(1, Math.floor(opts.pageRows ?? PAGE_ROWS));
  const rowGroups: RowGroupMeta[] = [];
  const indexed: IndexedChunk[][] = [];
  groupStarts.forEach((start, g) => {
    const columns: ColumnChunkMeta[] = [];
    const fileOffset = offset;
    let totalByteSize = 0;
    let totalCompressed = 0;
    const groupChunks: IndexedChunk[] = [];
    leaves.forEach((levels, c) => {
      const from = bounds[c][g];
      const to = bounds[c][g + 1];
      const chunk = writeChunk(
        levels,
        from,
        to,
        { codec, scratch, pageBytes, pageRows, dictionary: opts.dictionary !== false },
        offset,
      );
      groupChunks.push({
        levels,
        from,
        start: offset,
        pages: chunk.out.pages,
        stats: chunk.meta.stats,
        pageStats: chunk.pageStats,
      });
      for (const part of chunk.out.parts) parts.push(part);
      offset += chunk.out.compressedBytes;
      totalByteSize += chunk.out.uncompressedBytes;
      totalCompressed += chunk.out.compressedBytes;
      columns.push(chunk.meta);
    });
    rowGroups.push({
      columns,
      numRows: Math.min(numRows, start + groupRows) - start,
      fileOffset,
      totalByteSize,
      totalCompressed,
    });
    indexed.push(groupChunks);
  });

  // The page index goes between the row groups and the footer, every ColumnIndex first and then every
  // OffsetIndex (parquet-mr's layout), so a reader fetches each kind in one contiguous range.
  rowGroups.forEach((group, g) => {
    group.columns.forEach((meta, c) => {
      const bytes = encodeColumnIndex(indexed[g][c]);
      if (!bytes) return;
      meta.columnIndex = { offset, length: bytes.byteLength };
      parts.push(bytes);
      offset += bytes.byteLength;
    });
  });
  rowGroups.forEach((group, g) => {
    group.columns.forEach((meta, c) => {
      const bytes = encodeOffsetIndex(indexed[g][c]);
      meta.offsetIndex = { offset, length: bytes.byteLength };
      parts.push(bytes);
      offset += bytes.byteLength;
    });
  });

  const footerBytes = encodeFooter({
    schema: pq.elements,
    numRows,
    rowGroups,
    keyValueMetadata: opts.keyValueMetadata,
    leafCount: pq.leaves.length,
  });
  const tail = new Uint8Array(8);
  new DataView(tail.buffer).setUint32(0, footerBytes.byteLength, true);
  tail.set(MAGIC, 4);
  parts.push(footerBytes, tail);

  const bytes = new Uint8Array(offset + footerBytes.byteLength + tail.byteLength);
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.byteLength;
  }
  return {
    bytes,
    footer: footerMetrics(
      pq.leaves.map((l) => l.id),
      rowGroups,
      numRows,
      footerBytes.byteLength,
    ),
  };
}

/** Level index where each row group starts, plus the level count at the end. */
function levelBounds(levels: LeafLevels, groupStarts: number[], numRows: number): number[] {
  const bounds = [...groupStarts, numRows];
  const reps = levels.reps;
  if (reps === null) return bounds; // one level per row
  const out = [0];
  let g = 1;
  let row = 0;
  for (let k = 0; k < levels.count && g < groupStarts.length; k++) {
    if (reps[k] !== 0) continue;
    if (row === groupStarts[g]) out[g++] = k;
    row++;
  }
  out.push(levels.count);
  return out;
}

interface WrittenChunk {
  out: ChunkOutput;
  meta: ColumnChunkMeta;
  /** Statistics of each data page, in order. */
  pageStats: ChunkStats[];
}

interface ChunkSettings {
  codec: PageCodec;
  scratch: PageScratch;
  pageBytes: number;
  pageRows: number;
  dictionary: boolean;
}

function writeChunk(
  levels: LeafLevels,
  from: number,
  to: number,
  settings: ChunkSettings,
  offset: number,
): WrittenChunk {
  const { codec, scratch, pageBytes, pageRows, dictionary } = settings;
  const leaf = levels.leaf;
  const base = { physical: leaf.physical, path: leaf.path, codec: CODEC_IDS[codec], numValues: to - from };
  if (dictionary && leaf.isString) {
    const dict = tryDictionaryChunk(levels, from, to, codec, scratch, pageBytes, pageRows);
    if (dict) {
      const { out, dictionaryBytes, dataPages } = dict;
      const stats = dictionaryStats(levels, from, to, dict.distinct, dict.size);
      return {
        out,
        pageStats: dataPages === 1 ? [stats] : dictionaryPageStats(levels, dict),
        meta: {
          ...base,
          stats,
          encodings: [Encoding.PLAIN, Encoding.RLE, Encoding.RLE_DICTIONARY],
          totalUncompressed: out.uncompressedBytes,
          totalCompressed: out.compressedBytes,
          dataPageOffset: offset + dictionaryBytes,
          dictionaryPageOffset: offset,
          encodingStats: [
            { pageType: PageType.DICTIONARY_PAGE, encoding: Encoding.PLAIN, count: 1 },
            { pageType: PageType.DATA_PAGE, encoding: Encoding.RLE_DICTIONARY, count: dataPages },
          ],
        },
      };
    }
  }
  const out = new ChunkOutput();
  const pages = pageBreaks(levels, from, to, pageBytes, pageRows);
  const stats = plainPageStats(levels, pages);
  for (let p = 0; p + 1 < pages.length; p++) {
    const a = pages[p];
    const b = pages[p + 1];
    const body = scratch.body;
    body.reset();
    writeLevels(levels, a, b, scratch);
    encodePlain(levels, a, b, body);
    emitDataPage(codec, scratch, a, b, Encoding.PLAIN, out);
  }
  return {
    out,
    pageStats: stats.pages,
    meta: {
      ...base,
      stats: stats.chunk,
      encodings: [Encoding.PLAIN, Encoding.RLE],
      totalUncompressed: out.uncompressedBytes,
      totalCompressed: out.compressedBytes,
      dataPageOffset: offset,
      encodingStats: [{ pageType: PageType.DATA_PAGE, encoding: Encoding.PLAIN, count: pages.length - 1 }],
    },
  };
}
