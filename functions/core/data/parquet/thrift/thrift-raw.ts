/**
 * Compact-protocol values found and skipped without decoding them, so bytes of a Parquet footer can be
 * copied into another footer as they are (page-slice.ts keeps a file's schema this way: re-encoding it
 * from hyparquet's decoded objects would lose the Thrift types of its fields).
 */

/**
 * The raw value bytes of top-level field `id` of the file's FileMetaData (the footer at the end of
 * `file`), found by skipping the compact-protocol fields before it; undefined when absent.
 * @throws RangeError on a truncated footer
 */
export function rawFooterField(file: Uint8Array, id: number): Uint8Array | undefined {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const length = view.getUint32(file.byteLength - 8, true);
  const reader = { view, at: file.byteLength - 8 - length, end: file.byteLength - 8 };
  let fid = 0;
  while (reader.at < reader.end) {
    const byte = view.getUint8(reader.at++);
    const type = byte & 0x0f;
    if (type === 0) return undefined;
    const delta = byte >> 4;
    fid = delta ? fid + delta : unzigzag(varint(reader));
    const start = reader.at;
    skip(reader, type);
    if (fid === id) return file.subarray(start, reader.at);
  }
  return undefined;
}

interface RawReader {
  view: DataView;
  at: number;
  end: number;
}

function varint(r: RawReader): number {
  let result = 0;
  let shift = 1;
  for (;;) {
    if (r.at >= r.end) throw new RangeError('truncated varint');
    const b = r.view.getUint8(r.at++);
    result += (b & 0x7f) * shift;
    if ((b & 0x80) === 0) return result;
    shift *= 128;
  }
}

function unzigzag(n: number): number {
  return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
}

/** Skips one compact-protocol value of `type`. @throws RangeError past the end */
function skip(r: RawReader, type: number): void {
  switch (type) {
    case 1: // true
    case 2: // false
      return;
    case 3: // byte
      r.at += 1;
      break;
    case 4:
    case 5:
    case 6:
      varint(r);
      return;
    case 7: // double
      r.at += 8;
      break;
    case 8: {
      // binary: the length is read before the position moves past it
      const length = varint(r);
      r.at += length;
      break;
    }
    case 9: // list
    case 10: {
      // set
      const header = r.view.getUint8(r.at++);
      const size = header >> 4 === 15 ? varint(r) : header >> 4;
      const element = header & 0x0f;
      for (let k = 0; k < size; k++) skip(r, element === 1 || element === 2 ? 3 : element);
      break;
    }
    case 12: // struct
      for (;;) {
        if (r.at >= r.end) throw new RangeError('truncated struct');
        const byte = r.view.getUint8(r.at++);
        if ((byte & 0x0f) === 0) break;
        if (byte >> 4 === 0) varint(r);
        skip(r, byte & 0x0f);
      }
      break;
    default:
      throw new RangeError(`compact type ${type} not expected in a Parquet footer`);
  }
  if (r.at > r.end) throw new RangeError('value past the end');
}
