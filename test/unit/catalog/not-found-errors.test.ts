/**
 * A missing table and a missing file are both "not found", and only the first is a missing table:
 * NoSuchTableError is a NotFoundError, and the FileIO's NotFoundError is not a NoSuchTableError (code
 * that creates a missing table must not create one because a metadata file is gone).
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { NoSuchTableError, NotFoundError } from '../../../functions/core/errors.js';
import { SIMPLE_SCHEMA, tempWarehouse } from '../../support/tables.js';

describe('not-found errors', () => {
  let catalog: EmbeddedCatalog;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    ({ catalog, cleanup } = await tempWarehouse());
  });
  afterEach(() => cleanup());

  it('a table the catalog does not have is a NoSuchTableError, a kind of NotFoundError, not retryable', async () => {
    // Act
    const error = await catalog.loadTable({ namespace: ['db'], name: 'absent' }).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(NoSuchTableError);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NoSuchTableError).name).toBe('NoSuchTableError');
    expect((error as NoSuchTableError).retryable).toBe(false);
  });

  it('a file that is gone is a NotFoundError and not a NoSuchTableError', async () => {
    // Prepare
    const table = await catalog.createTable({ namespace: ['db'], name: 't' }, { schema: SIMPLE_SCHEMA });
    const missing = join(table.metadata.location, 'metadata', 'gone.avro');
    await rm(missing, { force: true });

    // Act
    const error = await table.io.read(missing).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).not.toBeInstanceOf(NoSuchTableError);
    expect((error as NotFoundError).retryable).toBe(false);
  });
});
