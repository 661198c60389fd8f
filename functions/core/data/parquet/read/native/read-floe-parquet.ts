/**
 * floe's own Parquet files decoded in TypeScript straight into Arrow Data, as parquet-wasm (arrow-rs)
 * would hand them over through arrow-ffi.ts: the same Arrow types, field metadata (`PARQUET:field_id`)
 * and nullability, batches of the same rows. Compaction reads almost only files floe wrote, whose
 * layout floe's writer (parquet/write/) fixes; decoding them here saves parquet-wasm's decode and the
 * copy out of WASM memory (~45 % of compacting 200 small files). A file of another writer, or one
 * that is not exactly what floe's writer emits (another encoding, codec, page type, logical type or
 * layout; any size, count or offset that does not add up), throws NotNativeError, and the caller reads
 * it with parquet-wasm as before.
 *
 * The door of parquet/read/native/, and its scope, which is frozen: this decoder reads only files floe's
 * own writer wrote, exactly as that writer writes them, and nothing else. It is not to grow toward a
 * general Parquet reader: another writer's file, or another encoding, codec, page version, logical
 * type or layout, is for parquet-wasm to read (and hyparquet to look into, for a written file's footer
 * metrics); a format the writer starts to emit is taken here only in the same change that teaches the
 * writer, and only exactly as the writer emits it. It imports the writer's own constants
 * (parquet/write/) for that reason.
 */
import * as arrow from 'apache-arrow';
import { Slab } from '../../../arrow/arrow-ffi.js';
import { CREATED_BY } from '../../write/footer.js';
import { type LeafCursor, assembleBatch } from './assemble.js';
import { Arena } from './arena.js';
import { type ChunkScratch, type LeafColumn, decodeLeaf } from './column-chunk.js';
import { notNative } from './compact-reader.js';
import { footerSpan } from '../../parquet-trailer.js';
import { footerRange, readFileMeta, readSchemaElements } from './file-meta.js';
import { type FloeSchema, toFloeSchema } from './floe-schema.js';
import { ZstdInflater } from './zstd-inflate.js';

export { NotNativeError } from './compact-reader.js';

const CREATED_BY_BYTES = Buffer.from(CREATED_BY, 'utf8');

/** Parsed schemas by their footer bytes (a table's files share one; a few after evolution). */
const schemas = new Map<string, FloeSchema>();
const SCHEMA_ENTRIES = 16;

const scratch: ChunkScratch = { zstd: new ZstdInflater(), indices: new Int32Array(1024), arena: new Arena() };

/** Whether the footer names floe's writer at all: a cheap look before anything is parsed. */
function mentionsFloe(file: Uint8Array, start: number, end: number): boolean {
  const footer = Buffer.from(file.buffer, file.byteOffset + start, end - start);
  return footer.lastIndexOf(CREATED_BY_BYTES) >= 0;
}

/**
 * Whether `file` may be one floe's writer wrote (its footer names it), without throwing: other
 * writers' files are told apart for ~1 µs, before anything is parsed or an error is made.
 */
export function mayBeFloeParquet(file: Uint8Array): boolean {
  const span = footerSpan(file);
  return typeof span !== 'string' && mentionsFloe(file, span.start, span.end);
}

function schemaOf(bytes: Uint8Array): FloeSchema {
  const key = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  let schema = schemas.get(key);
  if (schema === undefined) {
    schema = toFloeSchema(readSchemaElements(bytes));
    if (schemas.size >= SCHEMA_ENTRIES) schemas.clear();
    schemas.set(key, schema);
  }
  return schema;
}

/**
 * The Arrow table of a Parquet file floe's writer wrote, in batches of at most `batchRows` rows.
 * @throws NotNativeError when the file is not one this reader takes (the caller then uses parquet-wasm)
 */
export function decodeFloeParquet(file: Uint8Array, batchRows: number): arrow.Table {
  const { start, end } = footerRange(file);
  if (!mentionsFloe(file, start, end)) notNative('not written by floe');
  const meta = readFileMeta(file, start, end);
  if (meta.createdBy !== CREATED_BY) notNative(`created by ${meta.createdBy}`);
  const schema = schemaOf(meta.schemaBytes);
  let rows = 0;
  for (const g of meta.rowGroups) {
    if (g.columns.length !== schema.leaves.length) notNative('row group columns differ from the schema');
    rows += g.numRows;
  }
  if (rows !== meta.numRows || rows === 0) notNative('row counts');
  // The file's small buffers share a few ArrayBuffers (arrow-ffi.ts's reason: one each cost more
  // in allocation, external-memory accounting and sweeping than the decoding itself).
  const slab = new Slab();
  scratch.arena.reset();
  const columns: LeafColumn[] = schema.leaves.map((info, c) =>
    decodeLeaf(file, start, meta.rowGroups, c, info, scratch, slab),
  );
  const cursors: LeafCursor[] = columns.map(() => ({ level: 0, value: 0 }));
  const batches: arrow.RecordBatch[] = [];
  for (let r = 0; r < rows; r += batchRows) {
    const length = Math.min(batchRows, rows - r);
    const children = assembleBatch(schema, columns, cursors, length, rows - r, slab);
    batches.push(
      new arrow.RecordBatch(
        schema.schema,
        arrow.makeData({ type: schema.struct, length, nullCount: 0, children }),
      ),
    );
  }
  columns.forEach((column, c) => {
    if (cursors[c].level !== column.count || cursors[c].value !== column.present)
      notNative('levels left over');
  });
  return new arrow.Table(schema.schema, batches);
}

/**
 * The file decoded by this reader, or undefined when it does not take it (another writer, a layout it
 * does not know, bytes that do not add up): the caller reads it with parquet-wasm, which also says what
 * is wrong with a broken file.
 */
export function tryDecodeFloeParquet(file: Uint8Array, batchRows: number): arrow.Table | undefined {
  if (!mayBeFloeParquet(file)) return undefined;
  try {
    return decodeFloeParquet(file, batchRows);
  } catch {
    // NotNativeError, or anything else thrown on the way (a RangeError on bytes that lie): declined.
    return undefined;
  }
}
