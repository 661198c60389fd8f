/**
 * A page index checked before a scan hands a file to parquet-wasm for a selective read. arrow-rs selects
 * rows (offset/limit, some columns through the async reader) by reading pages at the locations the
 * OffsetIndex gives; a location past the chunk or into another page makes it panic, a WebAssembly trap
 * that, in parquet-wasm's async reader, never settles the read's promise (the scan hung, and the trap
 * surfaced as an uncaught error). Such a file is refused as corrupt instead. A synchronous decode of
 * every column reads the pages one after the other and does not need this (compaction's route).
 */
import { ValidationError } from '../../../errors.js';
import { type ByteSource, wholeSource } from './byte-source.js';
import * as footerFields from './file-footer.js';
import type { Thrift } from './file-footer.js';
import { chunkExtent, pageHeader, readThrift } from './page-slice.js';

const { thriftField: field, thriftInt: int } = footerFields;
const { thriftStruct: struct, thriftStructs: structs } = footerFields;

/**
 * Files (size and location) whose page index was found sound, so a process that scans the same files
 * again (floe serve, repeated scans) checks each once: ~65 µs for a 30-column file of one page per
 * column, ~4 % of reading it. Iceberg data files are never rewritten in place.
 */
const SOUND_INDEXES = new Set<string>();
const SOUND_INDEX_ENTRIES = 16_384;

/**
 * Refuses a file whose page index would make parquet-wasm trap; checked once per file and process.
 * @throws ValidationError (not retryable: the file's bytes are wrong)
 */
export function checkPageIndex(location: string, bytes: Uint8Array, footer: Thrift): void {
  const key = `${bytes.byteLength}:${location}`;
  if (SOUND_INDEXES.has(key)) return;
  const why = unsoundPageIndex(bytes, footer);
  if (why) {
    throw new ValidationError(
      `${location} is corrupt: ${why} (parquet-wasm would crash reading it, so it is not read)`,
    );
  }
  if (SOUND_INDEXES.size >= SOUND_INDEX_ENTRIES) SOUND_INDEXES.clear();
  SOUND_INDEXES.add(key);
}

/**
 * Why the file's OffsetIndex must not reach parquet-wasm, or undefined when, in every column chunk that
 * has one, it lays the chunk's pages end to end from its first data page to its end and each location
 * holds exactly one page (its header's compressed size fills it). Chunks without an index, in another
 * file or encrypted are not judged here. Never throws.
 */
export function unsoundPageIndex(file: Uint8Array, footer: Thrift): string | undefined {
  try {
    const source = wholeSource(file);
    const groups = structs(footer, 4);
    for (let g = 0; g < groups.length; g++) {
      const chunks = structs(groups[g], 1);
      for (let k = 0; k < chunks.length; k++) {
        const why = unsoundChunkIndex(source, chunks[k]);
        if (why) return `the page index of row group ${g}, column ${k} ${why}`;
      }
    }
    return undefined;
  } catch (error) {
    return `its page index, or a page header it points at, cannot be read (${String(error)})`;
  }
}

/** What is wrong with where a chunk's OffsetIndex puts its pages (first_row_index is not judged here). */
function unsoundChunkIndex(source: ByteSource, chunk: Thrift): string | undefined {
  const md = struct(chunk, 3);
  const indexOffset = int(chunk, 4);
  if (!md || indexOffset === undefined || field(chunk, 1) !== undefined) return undefined;
  if (field(chunk, 8) !== undefined || field(chunk, 9) !== undefined) return undefined;
  // Without a data page offset or size, no location can be right: every one is judged a lie.
  const { end: chunkEnd, dataOffset } = chunkExtent(md) ?? { end: -1, dataOffset: -1 };
  const locations = structs(readThrift(source, indexOffset, int(chunk, 5) ?? 0), 1);
  let at = dataOffset;
  for (const location of locations) {
    const page = { offset: int(location, 1) ?? -1, size: int(location, 2) ?? -1 };
    if (page.offset !== at || page.size <= 0 || page.offset + page.size > chunkEnd)
      return `locates a page at byte ${page.offset} (${page.size} bytes) where the chunk's next page starts at ${at}`;
    if (!pageHeader(source, page))
      return `locates a page at byte ${page.offset} that is not one page of ${page.size} bytes`;
    at = page.offset + page.size;
  }
  if (locations.length > 0 && at !== chunkEnd)
    return `leaves the chunk's bytes from ${at} to ${chunkEnd} out`;
  return undefined;
}
