import {
  CreateTableBucketCommand,
  CreateTableCommand,
  GetTableMetadataLocationCommand,
  S3TablesClient,
  UpdateTableMetadataLocationCommand,
} from '@aws-sdk/client-s3tables';
import { beforeAll, expect, it } from 'vitest';
import type { Catalog } from '../../../functions/core/catalog/catalog.js';
import { S3TablesCatalog } from '../../../functions/core/catalog/s3tables-catalog.js';
import { CommitFailedError, ValidationError } from '../../../functions/core/errors.js';
import type { FileIO } from '../../../functions/core/io/file-io.js';
import { S3FileIO } from '../../../functions/core/io/s3-file-io.js';
import { appendChange, CONTRACT_SCHEMA, describeCatalogContract } from '../../contract/catalog-contract.js';
import {
  describeWithMoto,
  motoEndpoint,
  resetMoto,
  s3ClientForTests,
  TEST_CREDENTIALS,
  TEST_REGION,
} from '../moto.js';

function s3TablesClientForTests(): S3TablesClient {
  return new S3TablesClient({ endpoint: motoEndpoint(), region: TEST_REGION, credentials: TEST_CREDENTIALS });
}

/** Table buckets forbid DeleteObject and ListObjects: any call to them fails the test. */
function forbidDeleteAndList(io: FileIO): FileIO {
  return {
    read: (location) => io.read(location),
    readRange: (location, offset, length) => io.readRange(location, offset, length),
    write: (location, data) => io.write(location, data),
    writeIfAbsent: (location, data) => io.writeIfAbsent(location, data),
    stat: (location) => io.stat(location),
    exists: (location) => io.exists(location),
    delete: async (location) => {
      throw new Error(`S3TablesCatalog called delete(${location}) on a table bucket`);
    },
    list: async (prefix) => {
      throw new Error(`S3TablesCatalog called list(${prefix}) on a table bucket`);
    },
  };
}

async function createTableBucket(client: S3TablesClient): Promise<string> {
  const name = `floe-${Math.random().toString(36).slice(2, 10)}`;
  const out = await client.send(new CreateTableBucketCommand({ name }));
  if (!out.arn) throw new Error('CreateTableBucket returned no ARN');
  return out.arn;
}

async function makeCatalog(client = s3TablesClientForTests()): Promise<S3TablesCatalog> {
  return new S3TablesCatalog({
    tableBucketArn: await createTableBucket(client),
    client,
    io: forbidDeleteAndList(new S3FileIO({ client: s3ClientForTests() })),
  });
}

describeWithMoto('S3TablesCatalog on moto', () => {
  beforeAll(async () => {
    await resetMoto();
  });

  describeCatalogContract('s3tables', async () => ({
    catalog: await makeCatalog(),
    cleanup: async () => {},
  }));

  it('writes every metadata file as a new object under the warehouse location', async () => {
    // Prepare
    const client = s3TablesClientForTests();
    const catalog = await makeCatalog(client);
    const id = { namespace: ['sales'], name: 'orders' };
    const created = await catalog.createTable(id, { schema: CONTRACT_SCHEMA });

    // Act
    const change = appendChange(created);
    const committed = await catalog.commitTable(id, change.requirements, change.updates);
    const pointer = await client.send(
      new GetTableMetadataLocationCommand({
        tableBucketARN: catalog.tableBucketArn,
        namespace: 'sales',
        name: 'orders',
      }),
    );

    // Assess
    const warehouse = pointer.warehouseLocation?.replace(/\/+$/, '');
    expect(pointer.metadataLocation).toBe(committed.metadataLocation);
    expect(created.metadataLocation).toMatch(
      new RegExp(`^${warehouse}/metadata/00000-[0-9a-f-]{36}\\.metadata\\.json$`),
    );
    expect(committed.metadataLocation).toMatch(
      new RegExp(`^${warehouse}/metadata/00001-[0-9a-f-]{36}\\.metadata\\.json$`),
    );
    expect(committed.metadata.location).toBe(warehouse);
    // the first file is still there, untouched: nothing is overwritten
    expect((await catalog.io.read(created.metadataLocation)).length).toBeGreaterThan(0);
  });

  it('fails the swap with CommitFailedError when the version token went stale', async () => {
    // Prepare: a client that lets a rival commit land just before our pointer swap is sent
    const client = s3TablesClientForTests();
    const catalog = await makeCatalog(client);
    const id = { namespace: ['sales'], name: 'stale_token' };
    const base = await catalog.createTable(id, { schema: CONTRACT_SCHEMA });
    const rival: Catalog = new S3TablesCatalog({
      tableBucketArn: catalog.tableBucketArn,
      client,
      io: catalog.io,
    });
    const realSend = client.send.bind(client);
    let interfered = false;
    const racingClient = Object.create(client) as S3TablesClient;
    racingClient.send = (async (command: unknown, options?: unknown) => {
      if (command instanceof UpdateTableMetadataLocationCommand && !interfered) {
        interfered = true;
        await rival.commitTable(id, [], [{ action: 'set-properties', updates: { rival: 'won' } }]);
      }
      return (realSend as (c: unknown, o?: unknown) => Promise<unknown>)(command, options);
    }) as S3TablesClient['send'];
    const racing = new S3TablesCatalog({
      tableBucketArn: catalog.tableBucketArn,
      client: racingClient,
      io: catalog.io,
    });
    const change = appendChange(base);

    // Act
    const attempt = racing.commitTable(id, change.requirements, change.updates);

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(CommitFailedError);
    await expect(attempt).rejects.toThrow(/version token/);
    const loaded = await catalog.loadTable(id);
    expect(loaded.metadata.properties.rival).toBe('won');
    expect(loaded.metadata.snapshots).toEqual([]);
  });

  it('completes a table whose creation stopped before its pointer was set', async () => {
    // Prepare: the table exists in S3 Tables with no metadata (a crash between CreateTable and the swap)
    const client = s3TablesClientForTests();
    const catalog = await makeCatalog(client);
    const id = { namespace: ['sales'], name: 'half_made' };
    await catalog.createNamespace(['sales']);
    await client.send(
      new CreateTableCommand({
        tableBucketARN: catalog.tableBucketArn,
        namespace: 'sales',
        name: 'half_made',
        format: 'ICEBERG',
      }),
    );

    // Act
    const existsBefore = await catalog.tableExists(id);
    const created = await catalog.createTable(id, { schema: CONTRACT_SCHEMA });

    // Assess
    expect(await catalog.namespaceExists(['sales'])).toBe(true);
    expect(await catalog.namespaceExists(['nosuch'])).toBe(false);
    expect(existsBefore).toBe(false);
    expect((await catalog.loadTable(id)).metadataLocation).toBe(created.metadataLocation);
  });

  it('rejects namespaces and names S3 Tables cannot hold', async () => {
    // Prepare
    const catalog = await makeCatalog();

    // Act / Assess
    await expect(
      catalog.createTable({ namespace: ['a', 'b'], name: 't' }, { schema: CONTRACT_SCHEMA }),
    ).rejects.toBeInstanceOf(ValidationError);
    await expect(
      catalog.createTable({ namespace: ['sales'], name: 'Orders-2024' }, { schema: CONTRACT_SCHEMA }),
    ).rejects.toThrow(/lowercase letters, digits and underscores/);
  });

  it('keeps the swap conditional: a holder with a stale token cannot overwrite', async () => {
    // Prepare: read a token, let another commit land, then try to swap with the old token directly
    const client = s3TablesClientForTests();
    const catalog = await makeCatalog(client);
    const id = { namespace: ['sales'], name: 'direct' };
    const base = await catalog.createTable(id, { schema: CONTRACT_SCHEMA });
    const before = await client.send(
      new GetTableMetadataLocationCommand({
        tableBucketARN: catalog.tableBucketArn,
        namespace: 'sales',
        name: 'direct',
      }),
    );
    const change = appendChange(base);
    await catalog.commitTable(id, change.requirements, change.updates);

    // Act
    const stale = client.send(
      new UpdateTableMetadataLocationCommand({
        tableBucketARN: catalog.tableBucketArn,
        namespace: 'sales',
        name: 'direct',
        versionToken: before.versionToken,
        metadataLocation: base.metadataLocation,
      }),
    );

    // Assess
    await expect(stale).rejects.toMatchObject({ name: 'ConflictException' });
  });
});
