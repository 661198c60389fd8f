/**
 * Reads a Parquet data file back into rows, resolving columns by Iceberg field id (Iceberg's rule:
 * names may have changed since the file was written; ids never do).
 */
import * as arrow from 'apache-arrow';
import type { ParquetFile, ReaderOptions, Table as WasmTable } from 'parquet-wasm';
import { LakeError, ValidationError } from '../../../errors.js';
import type { FileIO } from '../../../io/file-io.js';
import type { Row, StructType } from '../../../spec/types.js';
import { exportedBatches } from '../../arrow/arrow-ffi.js';
import { batchesOf, batchRows, type DataBatch, ffiBatchesOf, READ_BATCH_ROWS } from './data-batch.js';
import { type ByteRange, type ByteSource, wholeSource } from './byte-source.js';
import { type FooterLayout, footerLayout, readFileFooter, type Thrift } from './file-footer.js';
import { checkPageIndex } from './page-index-check.js';
import { offsetIndexRanges, type PageSlice, type SliceAt, sliceRanges, slicePages } from './page-slice.js';
import { loadParquetWasm, type ParquetWasm } from '../parquet-wasm.js';
import { type FetchedTail, fetchRanges, fetchTail, fetchWhole } from './ranged-file.js';

type FloeDecoder = typeof import('./native/read-floe-parquet.js');
let floeDecoderModule: Promise<FloeDecoder> | undefined;

/**
 * floe's own decoder, loaded on the first read that can use it: the ingest function bundles this file
 * but never reads a data file on most batches, and should not load the decoder's code at init.
 */
function floeDecoder(): Promise<FloeDecoder> {
  floeDecoderModule ??= import('./native/read-floe-parquet.js');
  return floeDecoderModule;
}

/**
 * Loads both decoders now: for a server about to read data files, so that its first read does not
 * compile parquet-wasm's WebAssembly (~200 ms) while a client waits.
 */
export async function loadDecoders(): Promise<void> {
  await Promise.all([loadParquetWasm(), floeDecoder()]);
}

/** A page slice and, once a read of some of its columns needed it, parquet-wasm's parse of it. */
type OpenSlice = PageSlice & { file?: ParquetFile };

/** Rows [from, to) of a file, in file order (positions, as position deletes count them). */
export interface RowSpan {
  from: number;
  to: number;
}

/**
 * An opened data file: its bytes (for readers of its footer and page index: the whole file, or the
 * ranges fetched so far) and reads of some of its columns over some of its rows. Call `close` when done
 * (parquet-wasm holds WASM memory).
 */
export interface OpenDataFile {
  readonly location: string;
  readonly source: ByteSource;
  /** Whether the file is still read by ranges (false once, or if ever, it was read whole). */
  readonly ranged: boolean;
  readonly rowCount: number;
  /** The file's Thrift FileMetaData (statistics, page index locations). */
  readonly footer: Thrift;
  /**
   * Rows of `spans` (all rows when omitted) projected onto `schema`, in file order.
   * @throws ValidationError as readDataFile
   */
  read(schema: StructType, spans?: readonly RowSpan[]): Promise<Row[]>;
  /**
   * The same rows as Arrow batches, in file order, not yet turned into rows (see `batchRows`).
   * @throws ValidationError as readDataFile
   */
  readBatches(schema: StructType, spans?: readonly RowSpan[]): Promise<DataBatch[]>;
  /**
   * Fetches byte ranges a reader of `source` needs (the page index), or the whole file when they would
   * make up most of it; nothing on a file read whole.
   * @throws as openDataFile
   */
  fetch(ranges: readonly ByteRange[]): Promise<void>;
  close(): void;
}

export interface OpenDataFileOptions {
  /**
   * The file's size as its manifest entry states it: the file is then opened by its tail (footer) and
   * read by ranges, and fetched whole only when a read needs more. Checked against the storage; a size
   * that does not match opens the file whole.
   */
  rangedSize?: number;
}

/**
 * Opens a data file for one or more reads.
 * @throws NotFoundError / TransientIOError from `io.read`; ValidationError when the file is not Parquet
 *   or carries no field ids (name mapping is not supported)
 */
export async function openDataFile(
  io: FileIO,
  location: string,
  options: OpenDataFileOptions = {},
): Promise<OpenDataFile> {
  if (options.rangedSize !== undefined) {
    const tail = await fetchTail(io, location, options.rangedSize);
    const layout = tail && footerLayout(tail.footer);
    if (tail && layout?.hasFieldIds) {
      const file = new WasmDataFile(location, tail.fetched, tail.footer, layout, await loadParquetWasm());
      file.byRange = { io, tail };
      return file;
    }
  }
  const bytes = await io.read(location);
  let footer: Thrift;
  try {
    footer = readFileFooter(bytes);
  } catch (error) {
    throw new ValidationError(`${location} is not a readable Parquet file: ${String(error)}`, {
      cause: error,
    });
  }
  const layout = footerLayout(footer);
  if (!layout.hasFieldIds) {
    throw new ValidationError(`${location} has no Parquet field ids; reading it needs a name mapping`);
  }
  return new WasmDataFile(location, wholeSource(bytes), footer, layout, await loadParquetWasm(), bytes);
}

/**
 * The footer comes from floe's own parse (no Arrow schema round trip per file). A read of every row of
 * every column of a file floe wrote is decoded by floe's own reader (native/); any other first
 * read of every column decodes the bytes in one synchronous call (`readParquet`, which ignores a
 * column list); a read of some columns opens parquet-wasm's ParquetFile once, on first need, and later
 * reads reuse it (it keeps the parsed metadata: cheaper than `readParquet` again on a large file).
 */
class WasmDataFile implements OpenDataFile {
  private file: ParquetFile | undefined;
  private slice: OpenSlice | undefined;
  private slicing = true;
  private readonly byId: Map<number, string>;
  readonly rowCount: number;
  private readonly groupRows: number[];
  /** Set while the file is read by ranges: where from, and what was fetched. */
  byRange: { io: FileIO; tail: FetchedTail } | undefined;

  constructor(
    readonly location: string,
    public source: ByteSource,
    readonly footer: Thrift,
    private readonly layout: FooterLayout,
    private readonly wasm: ParquetWasm,
    private bytes?: Uint8Array,
  ) {
    this.byId = layout.topLevelById;
    this.rowCount = layout.rowCount;
    this.groupRows = layout.groupRows;
  }

  async read(schema: StructType, spans?: readonly RowSpan[]): Promise<Row[]> {
    const batches = await this.readBatches(schema, spans);
    try {
      const rows: Row[] = [];
      for (const batch of batches) for (const row of batchRows(schema, batch)) rows.push(row);
      return rows;
    } catch (error) {
      if (error instanceof LakeError) throw error;
      throw new ValidationError(`cannot read ${this.location}: ${String(error)}`, { cause: error });
    }
  }

  async readBatches(schema: StructType, spans?: readonly RowSpan[]): Promise<DataBatch[]> {
    const wanted = schema.fields.filter((f) => this.byId.has(f.id));
    const total = spans ? spans.reduce((n, s) => n + s.to - s.from, 0) : this.rowCount;
    if (wanted.length === 0) return total === 0 ? [] : [{ length: total, columns: new Map() }];
    const columns = [...new Set(wanted.map((f) => this.byId.get(f.id) as string))];
    try {
      const batches: DataBatch[] = [];
      for (const span of this.byRange && spans ? this.piecesOf(spans) : (spans ?? [undefined])) {
        const expected = span ? span.to - span.from : this.rowCount;
        const read = await this.readSpan(columns, span);
        const got = read.reduce((n, b) => n + b.length, 0);
        if (got !== expected)
          throw new ValidationError(`${this.location}: batches hold ${got} of ${expected} rows`);
        for (const b of read) batches.push(b);
      }
      return batches;
    } catch (error) {
      if (error instanceof LakeError) throw error;
      throw new ValidationError(`cannot read ${this.location}: ${String(error)}`, { cause: error });
    }
  }

  get ranged(): boolean {
    return this.byRange !== undefined;
  }

  async fetch(ranges: readonly ByteRange[]): Promise<void> {
    if (!this.byRange) return;
    const { io, tail } = this.byRange;
    if (!(await fetchRanges(io, this.location, tail.fetched, ranges))) await this.wholeBytes();
  }

  /** The whole file, fetched once on first need when it was opened by ranges. */
  private async wholeBytes(): Promise<Uint8Array> {
    if (this.bytes) return this.bytes;
    const { io, tail } = this.byRange as { io: FileIO; tail: FetchedTail };
    const bytes = await fetchWhole(io, this.location, tail);
    this.bytes = bytes;
    this.source = wholeSource(bytes);
    this.byRange = undefined;
    return bytes;
  }

  /** Spans cut where row groups start (a file read by ranges is sliced one row group at a time). */
  private piecesOf(spans: readonly RowSpan[]): RowSpan[] {
    const out: RowSpan[] = [];
    for (const span of spans) {
      let start = 0;
      for (const rows of this.groupRows) {
        const from = Math.max(span.from, start);
        const to = Math.min(span.to, start + rows);
        if (from < to) out.push({ from, to });
        start += rows;
      }
      if (span.to > start) out.push({ from: Math.max(span.from, start), to: span.to }); // fails below
    }
    return out;
  }

  /**
   * Only the row groups a span touches are decoded: offset and limit count from the first of them. A
   * span inside one row group and past its first page is decoded from a slice of the pages holding it
   * (page-slice.ts): arrow-rs would otherwise decode every page before it. A slice that does not decode
   * to the span's rows is dropped and the file read as it is (the slice rests on the page index, which
   * the file's writer may have got wrong in a way its checks cannot see). A file opened by ranges is
   * fetched whole here when no slice serves the span.
   */
  private async readSpan(columns: string[], rows?: RowSpan): Promise<DataBatch[]> {
    // A span of every row is a read of the whole file, whichever decoder takes it.
    const span = rows && (rows.from > 0 || rows.to < this.rowCount) ? rows : undefined;
    const slice = span && (await this.sliceOf(span));
    if (span && slice) {
      const batches = await this.readSlice(slice, columns, span).catch(() => undefined);
      if (batches && batches.reduce((n, b) => n + b.length, 0) === span.to - span.from) return batches;
      this.dropSlice();
      this.slicing = false;
    }
    const options: ReaderOptions = { batchSize: READ_BATCH_ROWS };
    if (span) {
      const rowGroups: number[] = [];
      let start = 0;
      let first = -1;
      this.groupRows.forEach((n, g) => {
        if (start < span.to && start + n > span.from) {
          if (first < 0) first = start;
          rowGroups.push(g);
        }
        start += n;
      });
      options.rowGroups = rowGroups;
      options.offset = span.from - first;
      options.limit = span.to - span.from;
    }
    const bytes = await this.wholeBytes();
    const every = columns.length === this.layout.topLevelCount;
    // Every row of every column of a file floe wrote: floe's own decoder (native/), the one
    // compaction uses, to the same Arrow Data as parquet-wasm's (56 against 127 ms for the bench's 200 files).
    if (every && span === undefined) {
      const native = (await floeDecoder()).tryDecodeFloeParquet(bytes, READ_BATCH_ROWS);
      if (native) return batchesOf(native);
    }
    // A whole decode of every column reads pages one after the other; row selection and the async
    // reader go by the page index, on which arrow-rs traps when it lies (page-index-check.ts). A read
    // given spans is checked even when they cover the file, as it always was.
    if (rows !== undefined || !every) {
      checkPageIndex(this.location, bytes, this.footer);
    }
    const decode = async (): Promise<WasmTable> => {
      if (!this.file && every) {
        return this.wasm.readParquet(bytes, options);
      }
      this.file ??= await this.wasm.ParquetFile.fromFile(new Blob([bytes]));
      return this.file.read({ ...options, columns });
    };
    return this.exported(decode);
  }

  private async readSlice(slice: OpenSlice, columns: string[], span: RowSpan): Promise<DataBatch[]> {
    const options = {
      batchSize: READ_BATCH_ROWS,
      offset: span.from - slice.from,
      limit: span.to - span.from,
    };
    return this.exported(async () => {
      if (columns.length === this.layout.topLevelCount) return this.wasm.readParquet(slice.bytes, options);
      slice.file ??= await this.wasm.ParquetFile.fromFile(new Blob([slice.bytes]));
      return slice.file.read({ ...options, columns });
    });
  }

  private dropSlice(): void {
    this.slice?.file?.free();
    this.slice = undefined;
  }

  private async exported(decode: () => Promise<WasmTable>): Promise<DataBatch[]> {
    const batches = exportedBatches(this.wasm.wasmMemory(), await decode());
    if (batches) return ffiBatchesOf(batches);
    // A type the FFI reader does not know: decode again and take the IPC route.
    return batchesOf(arrow.tableFromIPC((await decode()).intoIPCStream()));
  }

  /**
   * The page slice holding a span, when the span lies in one row group past its first row (from its
   * first row too on a file read by ranges, whose slice's pages are fetched first). The last slice is
   * kept: it holds every column, so a filter column read first and the other columns read next for the
   * matches in it share one slice (and its parsed ParquetFile).
   */
  private async sliceOf(span: RowSpan): Promise<OpenSlice | undefined> {
    const last = this.slice;
    if (last && last.from <= span.from && span.to <= last.to) return last;
    if (!this.slicing) return undefined;
    let start = 0;
    for (let g = 0; g < this.groupRows.length; g++) {
      const rows = this.groupRows[g];
      if (span.from < start + rows) {
        if (span.to > start + rows || (span.from === start && !this.byRange)) return undefined;
        const at: SliceAt = { group: g, groupStart: start, from: span.from - start, to: span.to - start };
        if (this.byRange) {
          await this.fetch(offsetIndexRanges(this.footer, g));
          const ranges = this.byRange && sliceRanges(this.source, this.footer, at);
          if (ranges) await this.fetch(ranges);
          if (!ranges || (!this.byRange && span.from === start)) return undefined;
        }
        const slice = slicePages(
          this.source,
          this.footer,
          g,
          start,
          at.from,
          at.to,
          this.byRange !== undefined,
        );
        if (!slice) return undefined;
        this.dropSlice();
        this.slice = slice;
        return slice;
      }
      start += rows;
    }
    return undefined;
  }

  close(): void {
    this.file?.free();
    this.file = undefined;
    this.dropSlice();
  }
}

/**
 * Rows of a Parquet file in file order (row index = position, for position deletes), projected onto
 * `schema` by field id: a column renamed in the table schema still maps, a field missing from the file
 * is null, an int column read as long gives bigint, float read as double gives number. Values are in
 * the Iceberg `Value` representation.
 * @throws NotFoundError / TransientIOError from `io.read`; ValidationError when the file is not Parquet,
 *   carries no field ids (name mapping is not supported), or holds a column that cannot be read as the
 *   requested type
 */
export async function readDataFile(io: FileIO, location: string, schema: StructType): Promise<Row[]> {
  const file = await openDataFile(io, location);
  try {
    return await file.read(schema);
  } finally {
    file.close();
  }
}
