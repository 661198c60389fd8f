/**
 * hyparquet's internals the tests read floe's Parquet with: its Thrift compact decoder and its RLE /
 * bit-packed hybrid decoder — a reader no one here wrote, for what floe's writer encodes and what
 * floe's own reader decodes. They are imported from hyparquet's private paths (src/), which it does not
 * promise to keep, so they are imported here and nowhere else (test/unit/architecture.test.ts holds
 * that), written for hyparquet 1.33.0 (pinned in package.json); on another version this module refuses
 * to load, naming both, instead of letting a renamed or changed internal fail the tests obscurely.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { LakeError } from '../../functions/core/errors.js';

/** The hyparquet version the private-path imports below were written for. */
export const HYPARQUET_VERSION = '1.33.0';

/**
 * @throws LakeError naming the expected and found versions when they differ
 */
export function checkHyparquetVersion(found: string): void {
  if (found !== HYPARQUET_VERSION) {
    throw new LakeError(
      `hyparquet ${found} is installed, but the tests' use of its private paths (hyparquet/src/...) ` +
        `was written for hyparquet ${HYPARQUET_VERSION}: check test/support/hyparquet-internals.ts ` +
        `against the new version, then update HYPARQUET_VERSION`,
      { retryable: false },
    );
  }
}

/** The version of the hyparquet installed (its package.json sits beside src/, where its entry lies). */
function installedVersion(): string {
  const manifest = new URL('../package.json', import.meta.resolve('hyparquet'));
  return (JSON.parse(readFileSync(fileURLToPath(manifest), 'utf8')) as { version: string }).version;
}

// Checked before the private paths are imported (dynamically, so a path that moved in another version
// cannot fail the module's linking before the check has said why).
checkHyparquetVersion(installedVersion());
const encoding = await import('hyparquet/src/encoding.js');
const thrift = await import('hyparquet/src/thrift.js');

export const readRleBitPackedHybrid = encoding.readRleBitPackedHybrid;
export const deserializeTCompactProtocol = thrift.deserializeTCompactProtocol;
