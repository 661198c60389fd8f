/**
 * The native reader's side of the Thrift compact reader (parquet/thrift/compact-reader.ts): every
 * malformed value, and every one the reader does not expect, throws NotNativeError, and the file goes
 * to parquet-wasm.
 */
import { LakeError } from '../../../../errors.js';
import { CompactReader } from '../../thrift/compact-reader.js';

/**
 * The native reader does not take this file (another writer, a layout it does not know, bad bytes).
 * Not retryable: the same bytes are declined again; the caller reads the file with parquet-wasm.
 */
export class NotNativeError extends LakeError {}

export { T } from '../../thrift/compact-reader.js';
export type { CompactReader };

export function notNative(why: string): never {
  throw new NotNativeError(why);
}

/** A reader of buf[pos, end) whose every failure is NotNativeError. */
export function nativeReader(buf: Uint8Array, pos: number, end: number): CompactReader {
  return new CompactReader(buf, pos, end, notNative);
}
