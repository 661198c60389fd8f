/**
 * Names in S3 Tables: its rules for namespaces and tables, the metadata file names floe writes under a
 * table's warehouse location, and what a table bucket location looks like.
 */
import { randomUUID } from 'node:crypto';
import { ValidationError } from '../errors.js';
import type { TableMetadata } from '../spec/types.js';

/** S3 Tables' rule for table and namespace names: 1–255 of a-z 0-9 _, starting and ending with a-z 0-9. */
const NAME_PATTERN = /^[a-z0-9](?:[a-z0-9_]{0,253}[a-z0-9])?$/;

/**
 * Checks a name against S3 Tables' naming rules (lowercase letters, digits, underscores).
 * @throws ValidationError naming the rule that was broken
 */
export function validateS3TablesName(kind: 'table' | 'namespace', name: string): void {
  if (!NAME_PATTERN.test(name)) {
    throw new ValidationError(
      `S3 Tables ${kind} name '${name}' is invalid: use 1-255 lowercase letters, digits and underscores, starting and ending with a letter or digit`,
    );
  }
  if (kind === 'namespace' && name.startsWith('aws')) {
    throw new ValidationError(`S3 Tables namespace name '${name}' is invalid: the prefix 'aws' is reserved`);
  }
}

/** S3 Tables namespaces have one level. @throws ValidationError for any other shape */
export function singleNamespace(namespace: string[]): string {
  if (namespace.length !== 1) {
    throw new ValidationError(
      `S3 Tables namespaces have exactly one level; got [${namespace.map((n) => `'${n}'`).join(', ')}]`,
    );
  }
  validateS3TablesName('namespace', namespace[0]);
  return namespace[0];
}

/**
 * The next metadata file name in Iceberg Java's convention, `<NNNNN>-<uuid>.metadata.json`: one more than
 * the version in the current file's name (Java's `parseVersion`), else one more than the metadata-log.
 */
export function nextMetadataFileName(currentLocation: string | undefined, current?: TableMetadata): string {
  let version = 0;
  const base = currentLocation?.slice(currentLocation.lastIndexOf('/') + 1) ?? '';
  const match = /^v?(\d+)[-.]/.exec(base);
  if (match) version = Number.parseInt(match[1], 10) + 1;
  else if (current) version = current['metadata-log'].length + 1;
  return `${String(version).padStart(5, '0')}-${randomUUID()}.metadata.json`;
}

/** Whether a table location is in an S3 Tables table bucket (`s3://<id>--table-s3/...`). Never throws. */
export function isS3TablesLocation(location: string): boolean {
  return /^s3a?:\/\/[^/]+--table-s3(?:\/|$)/i.test(location);
}
