import { ValidationError } from '../errors.js';
import type { FileIO } from './file-io.js';
import { LocalFileIO } from './local-file-io.js';
import { getLocationScheme } from './location.js';
import { S3FileIO, type S3FileIOOptions } from './s3-file-io.js';

export interface ResolveFileIOOptions {
  /** Options for an S3FileIO; pass `client` to share one S3Client across the FileIOs resolved. */
  s3?: S3FileIOOptions;
}

/**
 * The FileIO for a location, by scheme: `file:` or a plain absolute path → LocalFileIO, `s3:`/`s3a:` →
 * S3FileIO. Each call builds a new FileIO; callers keep the one they resolved for a table.
 * @throws ValidationError for a relative path or an unsupported scheme
 */
export function resolveFileIO(location: string, options: ResolveFileIOOptions = {}): FileIO {
  const scheme = getLocationScheme(location);
  if (scheme === undefined) {
    if (!location.startsWith('/')) {
      throw new ValidationError(`cannot pick a FileIO for '${location}': not an absolute path or a URI`);
    }
    return new LocalFileIO();
  }
  switch (scheme) {
    case 'file':
      return new LocalFileIO();
    case 's3':
    case 's3a':
      return new S3FileIO(options.s3);
    default:
      throw new ValidationError(
        `cannot pick a FileIO for '${location}': scheme '${scheme}' is not supported (file, s3, s3a)`,
      );
  }
}
