import { LakeError } from '../errors.js';

/**
 * A deletion vector's bytes are not a valid `deletion-vector-v1` blob (wrong length, magic or CRC,
 * a malformed Roaring bitmap, a cardinality that disagrees with its metadata). Not retryable: the
 * same bytes fail the same way; the file that holds them must be rewritten.
 */
export class CorruptDeletionVectorError extends LakeError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: false });
  }
}
