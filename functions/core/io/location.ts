import { ValidationError } from '../errors.js';

/**
 * Location helpers. A location is a URI (`file:///abs/path`, `s3://bucket/key`, `s3a://bucket/key`) or a
 * plain absolute local path.
 *
 * Paths inside a location are taken verbatim, never percent-decoded: Iceberg writers already escape
 * partition values in paths (`ts=2024-01-01T00%3A00`), and PyIceberg's local FileIO likewise maps
 * `file:///a%3Ab` to the file named `a%3Ab`. Decoding here would point at a different file than other
 * engines use for the same location.
 */

/** The scheme of a location, lower-cased (`file`, `s3`, `s3a`, ...), or undefined for a plain path. */
export function getLocationScheme(location: string): string | undefined {
  // A scheme is letters/digits/+-. before ':'; one letter would be a Windows drive, not a scheme.
  const match = /^([a-zA-Z][a-zA-Z0-9+.-]+):/.exec(location);
  return match ? match[1].toLowerCase() : undefined;
}

/**
 * Joins a base location and path parts with single slashes, keeping the base's scheme and form.
 * Parts may contain slashes themselves; empty parts are skipped.
 * @throws ValidationError for a `.` or `..` segment (a join must not escape its base)
 */
export function joinLocation(base: string, ...parts: string[]): string {
  // The scheme and the slashes after it (`file:///`, `s3://`, a path's leading `/`) stay as they are;
  // only the rest loses trailing slashes, so roots like `file:///` join to `file:///part`.
  const [, head, rest] = /^((?:[a-zA-Z][a-zA-Z0-9+.-]+:)?\/*)(.*)$/s.exec(base) ?? ['', '', base];
  const segments = rest.length > 0 ? [rest.replace(/\/+$/, '')] : [];
  for (const part of parts) {
    const trimmed = part.replace(/^\/+|\/+$/g, '');
    if (trimmed.length === 0) continue;
    if (trimmed.split('/').some((segment) => segment === '.' || segment === '..')) {
      throw new ValidationError(`cannot join '${part}' to '${base}': '.' and '..' segments are not allowed`);
    }
    segments.push(trimmed);
  }
  return head + segments.join('/');
}

/** A parsed `s3://` or `s3a://` location. `key` has no leading slash and may be empty (the bucket root). */
export interface S3Location {
  scheme: 's3' | 's3a';
  bucket: string;
  key: string;
}

/**
 * Splits `s3://bucket/key` (or `s3a://`) into bucket and key.
 * @throws ValidationError when the location is not an S3 URI or has no bucket
 */
export function parseS3Location(location: string): S3Location {
  const match = /^(s3a?):\/\/([^/]*)(?:\/(.*))?$/i.exec(location);
  if (!match) {
    throw new ValidationError(`'${location}' is not an S3 location (expected s3://bucket/key)`);
  }
  const bucket = match[2];
  if (bucket.length === 0) {
    throw new ValidationError(`S3 location '${location}' has no bucket`);
  }
  const scheme = match[1].toLowerCase() === 's3a' ? 's3a' : 's3';
  return { scheme, bucket, key: match[3] ?? '' };
}

/** Formats an S3 location; the inverse of {@link parseS3Location}. */
export function formatS3Location(location: S3Location): string {
  return `${location.scheme}://${location.bucket}/${location.key}`;
}

/**
 * `/abs/path` → `file:///abs/path` (no percent-encoding, see the module comment).
 * @throws ValidationError when the path is not absolute
 */
export function toFileUri(path: string): string {
  if (!path.startsWith('/')) {
    throw new ValidationError(`'${path}' is not an absolute path`);
  }
  return `file://${path}`;
}

/**
 * Local location → absolute path. Accepts `file:///abs`, `file://localhost/abs`, Hadoop's `file:/abs`, and
 * plain absolute paths.
 * @throws ValidationError for relative paths, other hosts or other schemes
 */
export function fromFileUri(location: string): string {
  const scheme = getLocationScheme(location);
  if (scheme === undefined) {
    if (!location.startsWith('/')) {
      throw new ValidationError(`'${location}' is not an absolute path or a file:// URI`);
    }
    return location;
  }
  if (scheme !== 'file') {
    throw new ValidationError(`'${location}' is not a local location (scheme '${scheme}')`);
  }
  const rest = location.slice('file:'.length);
  if (rest.startsWith('///')) return rest.slice(2);
  if (rest.startsWith('//localhost/')) return rest.slice('//localhost'.length);
  if (rest.startsWith('//')) {
    throw new ValidationError(`'${location}' names a remote host; only local file URIs are supported`);
  }
  if (rest.startsWith('/')) return rest;
  throw new ValidationError(`'${location}' is not an absolute file URI`);
}

/**
 * One spelling per location: `file:///a`, `file:/a` and `/a` are the same file, and so are `s3://`, `s3a://`
 * and `s3n://` (Iceberg Java's orphan removal equates the same schemes); no trailing slash. Never throws.
 */
export function normalizeLocation(location: string): string {
  const local = /^file:(?:\/\/localhost)?\/*(\/.*)$/i.exec(location);
  const spelled = local
    ? `/${local[1].replace(/^\/+/, '')}`
    : location.replace(/^s3[an]?:\/\//i, 's3://').replace(/(?<!:)\/{2,}/g, '/');
  return spelled.length > 1 ? spelled.replace(/(?<!:\/?)\/+$/, '') : spelled;
}

/**
 * Whether `location` is `folder` or lies under it, whatever the spelling of either. A sibling whose
 * name only starts like the folder's (`/w/ab` for `/w/a`) is not under it. Never throws.
 */
export function isWithinLocation(location: string, folder: string): boolean {
  const l = normalizeLocation(location);
  const f = normalizeLocation(folder);
  return l === f || l.startsWith(f.endsWith('/') ? f : `${f}/`);
}

/** The folder holding `location` (normalized), or undefined at a root. Never throws. */
export function parentLocation(location: string): string | undefined {
  const l = normalizeLocation(location);
  const cut = l.lastIndexOf('/');
  if (cut <= 0 || /^[a-z0-9+.-]+:\/*$/i.test(l.slice(0, cut + 1))) return undefined;
  return l.slice(0, cut);
}
