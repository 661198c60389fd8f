/**
 * Column sizes, value and null counts and split offsets of a written Parquet file, read back from its
 * footer with hyparquet (parquet-wasm's metadata API exposes neither statistics nor page offsets).
 * Counts come from the footer as Iceberg Java takes them: `num_values` counts every level of the
 * leaf column, nulls included, and `null_count` every level without a value.
 */
import { parquetMetadata } from 'hyparquet';
import { ValidationError } from '../../../errors.js';

export interface FooterMetrics {
  rowCount: bigint;
  /** Total compressed bytes per leaf field id, over all row groups. */
  columnSizes: Map<number, bigint>;
  valueCounts: Map<number, bigint>;
  nullValueCounts: Map<number, bigint>;
  /** Start byte of every row group, ascending. */
  splitOffsets: bigint[];
  /** Bytes of the Thrift footer plus its 8-byte trailer and the 4-byte leading magic. */
  overheadBytes: number;
}

/** @throws ValidationError when the bytes are not a Parquet file */
export function readFooterMetrics(file: Uint8Array): FooterMetrics {
  if (file.byteLength < 12) throw new ValidationError('parquet file too short');
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const footerLength = view.getUint32(file.byteLength - 8, true);
  // Only the footer is handed over: hyparquet reads metadata from the end of the buffer it gets.
  const meta = parquetMetadata(file.subarray(Math.max(0, file.byteLength - footerLength - 8)));

  // Leaves in schema order are the column chunks' order in every row group.
  const leafIds: (number | undefined)[] = [];
  for (const element of meta.schema.slice(1)) {
    if (!element.num_children) leafIds.push(element.field_id);
  }

  const columnSizes = new Map<number, bigint>();
  const valueCounts = new Map<number, bigint>();
  const nullValueCounts = new Map<number, bigint>();
  const missingNulls = new Set<number>();
  const splitOffsets: bigint[] = [];
  for (const group of meta.row_groups) {
    const first = group.columns[0]?.meta_data;
    if (first) {
      const dict = first.dictionary_page_offset;
      const data = first.data_page_offset;
      splitOffsets.push(dict !== undefined && dict < data ? dict : data);
    }
    group.columns.forEach((chunk, k) => {
      const id = leafIds[k];
      const md = chunk.meta_data;
      if (id === undefined || !md) return;
      add(columnSizes, id, md.total_compressed_size);
      add(valueCounts, id, md.num_values);
      const nullCount = md.statistics?.null_count;
      if (nullCount === undefined) missingNulls.add(id);
      else add(nullValueCounts, id, nullCount);
    });
  }
  // A null count known for only some row groups is no count at all.
  for (const id of missingNulls) nullValueCounts.delete(id);
  splitOffsets.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    rowCount: meta.num_rows,
    columnSizes,
    valueCounts,
    nullValueCounts,
    splitOffsets,
    overheadBytes: footerLength + 12,
  };
}

function add(map: Map<number, bigint>, id: number, amount: bigint | number): void {
  map.set(id, (map.get(id) ?? 0n) + BigInt(amount));
}
