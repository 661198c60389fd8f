/** Hostile page indexes for the reader tests: a file whose OffsetIndex says something else. */
import { deserializeTCompactProtocol } from '../../support/hyparquet-internals.js';
import {
  readFileFooter,
  thriftInt,
  thriftStructs,
} from '../../../functions/core/data/parquet/read/file-footer.js';
import { CT, ThriftWriter } from '../../../functions/core/data/parquet/thrift/compact-writer.js';

/** A page location as [offset, compressed_page_size, first_row_index]. */
export type PageLocationTuple = number[];

/**
 * `bytes` with the OffsetIndex of column chunk `k` (of row group `group`) replaced, in place, by
 * `lie(its page locations)`.
 * @throws Error when the lie does not fit where the index was
 */
export function withOffsetIndex(
  bytes: Uint8Array,
  k: number,
  lie: (pages: PageLocationTuple[]) => PageLocationTuple[],
  group = 0,
): Uint8Array {
  const chunk = thriftStructs(thriftStructs(readFileFooter(bytes), 4)[group], 1)[k];
  const offset = thriftInt(chunk, 4) ?? 0;
  const length = thriftInt(chunk, 5) ?? 0;
  const index = deserializeTCompactProtocol({
    view: new DataView(bytes.buffer, bytes.byteOffset + offset, length),
    offset: 0,
  });
  const pages = thriftStructs(index, 1).map((p) => [1, 2, 3].map((f) => thriftInt(p, f) ?? 0));
  const w = new ThriftWriter();
  const lied = lie(pages);
  w.beginList(1, CT.STRUCT, lied.length);
  for (const [at, size, first] of lied) {
    w.beginListStruct();
    w.i64(1, at);
    w.i32(2, size);
    w.i64(3, first);
    w.endStruct();
  }
  w.endStruct();
  const encoded = w.view();
  if (encoded.byteLength > length) throw new Error('the lying index is longer than the index');
  const out = bytes.slice();
  out.fill(0, offset, offset + length);
  out.set(encoded, offset);
  return out;
}
