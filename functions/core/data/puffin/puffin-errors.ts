import { LakeError } from '../../errors.js';

/**
 * A file that is not a well-formed Puffin file, or a blob range that does not lie inside one: wrong
 * magic, a footer size or blob range past the file's bounds, a footer that is not the JSON the spec
 * describes, a file shorter than its own metadata says. Not retryable: the same bytes fail the same way.
 */
export class CorruptPuffinError extends LakeError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: false });
  }
}

/**
 * A well-formed Puffin file using what floe does not read: a compressed (LZ4) footer, a flag bit the
 * spec reserves, a compressed blob. Not retryable; deletion vectors, the blobs floe needs, are never
 * compressed.
 */
export class UnsupportedPuffinError extends LakeError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, retryable: false });
  }
}
