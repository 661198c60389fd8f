/**
 * The embedded catalog's warehouse folder, checked before a command uses it. A catalog over a folder
 * that is not there is an empty catalog, and `floe scan`/`serve` over a mistyped `--warehouse` would
 * answer "no such table" or list nothing without a word about the folder. Commands that only read
 * refuse a missing folder, naming it; for commands that write a missing folder is fine — the catalog
 * creates it with the first table's files, as `floe ingest --warehouse wh` on a first run means — and
 * the command says so, in case the path was a typo.
 * Only local folders are checked: an s3:// warehouse is a key prefix, which exists once written.
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NotFoundError, ValidationError } from '../errors.js';

/** The warehouse folder of a command that reads is not there (a typo, another working directory). */
export class WarehouseNotFoundError extends NotFoundError {}

/** The local folder of a warehouse location, or undefined for a remote one (s3://). */
export function localWarehouseFolder(warehouse: string): string | undefined {
  if (/^file:\/\//i.test(warehouse)) return fileURLToPath(warehouse);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(warehouse)) return undefined;
  return resolve(warehouse);
}

/**
 * Checks the warehouse folder for a command that reads (`'read'`) or writes (`'write'`).
 * @returns 'missing' when a writing command's folder is not there yet, else 'exists' ('remote' for an
 * s3:// warehouse, not checked)
 * @throws WarehouseNotFoundError when a reading command's folder is missing
 * @throws ValidationError when the path is a file, not a folder
 */
export async function checkWarehouseFolder(
  warehouse: string,
  access: 'read' | 'write',
): Promise<'exists' | 'missing' | 'remote'> {
  const folder = localWarehouseFolder(warehouse);
  if (folder === undefined) return 'remote';
  let isDirectory: boolean | undefined;
  try {
    isDirectory = (await stat(folder)).isDirectory();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (isDirectory === true) return 'exists';
  if (isDirectory === false)
    throw new ValidationError(`the warehouse ${folder} is a file, not a folder: check --warehouse`);
  if (access === 'read') {
    throw new WarehouseNotFoundError(
      `the warehouse folder ${folder} does not exist: check --warehouse (a relative path is taken from ` +
        `${process.cwd()}); floe ingest, run and backfill create it on their first write`,
    );
  }
  return 'missing';
}
