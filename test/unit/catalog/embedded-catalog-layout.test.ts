/**
 * The embedded catalog keeps one table per folder, so maintenance never mistakes one table's files for
 * another's: it refuses identifiers whose
 * folder nests in another table's or holds one, names that would collide with a table's `metadata` and
 * `data` folders, and metadata whose `location` is not the folder the layout gives the table.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { ValidationError } from '../../../functions/core/errors.js';
import type { TableIdentifier } from '../../../functions/core/spec/types.js';
import { SIMPLE_SCHEMA, tempWarehouse } from '../../support/tables.js';
import { nestTables, tamperMetadata } from '../../support/tampering.js';

const id = (text: string): TableIdentifier => {
  const parts = text.split('.');
  return { namespace: parts.slice(0, -1), name: parts[parts.length - 1] };
};

describe('embedded catalog layout', () => {
  let catalog: EmbeddedCatalog;
  let dir: string;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    ({ catalog, dir, cleanup } = await tempWarehouse());
  });
  afterEach(() => cleanup());

  const create = (name: string) => catalog.createTable(id(name), { schema: SIMPLE_SCHEMA });

  it('refuses a table inside another table’s folder, naming both', async () => {
    await create('a.b');
    const attempt = create('a.b.c');
    await expect(attempt).rejects.toThrow(ValidationError);
    await expect(attempt).rejects.toThrow(/a\.b\.c.*inside.*a\.b\b/);
    expect(await catalog.tableExists(id('a.b.c'))).toBe(false);
    await expect(create('a.b.x.y')).rejects.toThrow(/a\.b\.x\.y.*a\.b\b/);
  });

  it('refuses a table whose folder would hold another table, naming both', async () => {
    await create('a.b.c');
    const attempt = create('a.b');
    await expect(attempt).rejects.toThrow(ValidationError);
    await expect(attempt).rejects.toThrow(/a\.b\b.*a\.b\.c/);
    expect(await catalog.tableExists(id('a.b'))).toBe(false);
  });

  it('takes neighbours whose names share a prefix', async () => {
    await create('a.b');
    await create('a.bc');
    await create('a.b-c');
    expect((await catalog.listTables(['a'])).map((t) => t.name)).toEqual(['b', 'b-c', 'bc']);
  });

  it('lists only the tables directly in a namespace, and drops a table without its nested one', async () => {
    // Prepare: a warehouse from before the nesting check
    await nestTables(catalog, id('a.b'), id('a.b.c'), async (t) => {
      await catalog.createTable(t, { schema: SIMPLE_SCHEMA });
    });
    // Act
    const inA = await catalog.listTables(['a']);
    await catalog.dropTable(id('a.b'));
    // Assess
    expect(inA.map((t) => t.name)).toEqual(['b']);
    expect(await catalog.listTables(['a', 'b'])).toEqual([id('a.b.c')]);
    expect(await catalog.tableExists(id('a.b'))).toBe(false);
    expect(await catalog.tableExists(id('a.b.c'))).toBe(true);
  });

  it('refuses the names of a table’s own folders', async () => {
    for (const name of ['ns.metadata', 'ns.data', 'ns.Metadata', 'a.data.t', 'a.metadata.t']) {
      await expect(create(name), name).rejects.toThrow(ValidationError);
      await expect(create(name), name).rejects.toThrow(/metadata|data/i);
    }
    // A top-level namespace sits in the warehouse root, which is no table's folder.
    await expect(create('data.events')).resolves.toBeDefined();
  });

  it('still reports an existing table as existing', async () => {
    await create('a.b');
    await expect(create('a.b')).rejects.toThrow(/already exists/);
  });

  it('refuses a location other than the table’s own folder', async () => {
    await expect(
      catalog.createTable(id('a.b'), { schema: SIMPLE_SCHEMA, location: `${dir}/elsewhere` }),
    ).rejects.toThrow(ValidationError);
  });

  it('refuses to load a table whose metadata names another location', async () => {
    // Prepare
    await create('lake.events');
    await tamperMetadata(catalog, id('lake.events'), (md) => {
      md.location = dir;
    });
    // Act
    const load = catalog.loadTable(id('lake.events'));
    // Assess
    await expect(load).rejects.toThrow(ValidationError);
    await expect(load).rejects.toThrow(/lake\.events.*location/);
  });

  it('accepts the same location spelled as a file URI', async () => {
    await create('lake.events');
    await tamperMetadata(catalog, id('lake.events'), (md) => {
      md.location = `file://${dir}/lake/events/`;
    });
    await expect(catalog.loadTable(id('lake.events'))).resolves.toBeDefined();
  });

  it('refuses a commit that moves the table', async () => {
    await create('lake.events');
    await expect(
      catalog.commitTable(id('lake.events'), [], [{ action: 'set-location', location: `${dir}/x` }]),
    ).rejects.toThrow(ValidationError);
    expect((await catalog.loadTable(id('lake.events'))).metadataLocation).toMatch(/v1\.metadata\.json$/);
  });
});
