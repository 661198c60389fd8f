import {
  BadRequestException,
  ConflictException,
  CreateNamespaceCommand,
  GetTableMetadataLocationCommand,
  InternalServerErrorException,
  type S3TablesClient,
  TooManyRequestsException,
  UpdateTableMetadataLocationCommand,
} from '@aws-sdk/client-s3tables';
import { describe, expect, it } from 'vitest';
import { applyUpdates } from '../../../functions/core/catalog/apply-updates.js';
import { S3TablesCatalog } from '../../../functions/core/catalog/s3tables-catalog.js';
import {
  nextMetadataFileName,
  validateS3TablesName,
} from '../../../functions/core/catalog/s3tables-names.js';
import {
  AlreadyExistsError,
  CommitFailedError,
  CommitStateUnknownError,
  LakeError,
  NotFoundError,
  TableAlreadyExistsError,
  TransientIOError,
  ValidationError,
} from '../../../functions/core/errors.js';
import type { FileIO } from '../../../functions/core/io/file-io.js';
import { newTableMetadata, serializeTableMetadata } from '../../../functions/core/spec/metadata.js';
import { appendChange, CONTRACT_SCHEMA } from '../../contract/catalog-contract.js';

const ARN = 'arn:aws:s3tables:us-east-1:123456789012:bucket/unit';
const WAREHOUSE = 's3://wh--table-s3';
const ID = { namespace: ['sales'], name: 'orders' };

/** Objects in memory; `failWrites` makes writeIfAbsent fail like a network error. */
class MemoryFileIO implements FileIO {
  readonly objects = new Map<string, Uint8Array>();
  failWrites = false;
  async read(location: string) {
    const data = this.objects.get(location);
    if (!data) throw new NotFoundError(`${location}: no such object`);
    return data;
  }
  async readRange(location: string, offset: number, length: number) {
    return (await this.read(location)).slice(offset, offset + length);
  }
  async write(location: string, data: Uint8Array) {
    this.objects.set(location, data);
  }
  async writeIfAbsent(location: string, data: Uint8Array) {
    if (this.failWrites) throw new Error('socket hang up');
    if (this.objects.has(location)) throw new AlreadyExistsError(location);
    this.objects.set(location, data);
  }
  async stat(location: string) {
    const data = this.objects.get(location);
    return data ? { size: data.length, lastModifiedMs: 0 } : undefined;
  }
  async exists(location: string) {
    return this.objects.has(location);
  }
  async delete(): Promise<void> {
    throw new Error('table buckets forbid DeleteObject');
  }
  async list(): Promise<never> {
    throw new Error('table buckets forbid ListObjects');
  }
}

type SwapBehaviour = (
  input: { metadataLocation?: string; versionToken?: string },
  state: PointerState,
) => unknown;
interface PointerState {
  metadataLocation: string;
  versionToken: string;
  swaps: number;
}

/** A fake S3 Tables control plane: one table whose swap answers as `onSwap` says. */
function fakeS3Tables(onSwap: SwapBehaviour, options: { withoutMetadata?: boolean } = {}) {
  const io = new MemoryFileIO();
  const metadataLocation = `${WAREHOUSE}/metadata/00000-a.metadata.json`;
  const metadata = newTableMetadata({ location: WAREHOUSE, schema: CONTRACT_SCHEMA });
  io.objects.set(metadataLocation, new TextEncoder().encode(serializeTableMetadata(metadata)));
  const state: PointerState = {
    metadataLocation: options.withoutMetadata ? '' : metadataLocation,
    versionToken: 'v1',
    swaps: 0,
  };
  const send = async (command: unknown) => {
    if (command instanceof GetTableMetadataLocationCommand) {
      return {
        ...state,
        metadataLocation: state.metadataLocation || undefined,
        warehouseLocation: WAREHOUSE,
      };
    }
    if (command instanceof CreateNamespaceCommand) {
      throw new ConflictException({ message: 'exists', $metadata: { httpStatusCode: 409 } });
    }
    if (command instanceof UpdateTableMetadataLocationCommand) {
      state.swaps++;
      const result = onSwap(command.input, state);
      if (result instanceof Error) throw result;
      return result;
    }
    throw new Error(`unexpected command ${String(command)}`);
  };
  const client = { send } as unknown as S3TablesClient;
  const catalog = new S3TablesCatalog({ tableBucketArn: ARN, client, io });
  return { catalog, io, state, metadata, metadataLocation };
}

/** Moves the pointer as S3 Tables would, then returns `error` instead of the success. */
function landThen(error: Error): SwapBehaviour {
  return (input, state) => {
    state.metadataLocation = input.metadataLocation ?? '';
    state.versionToken = `v${state.swaps + 1}`;
    return error;
  };
}

const serverError = (attempts = 1) =>
  new InternalServerErrorException({ message: 'internal', $metadata: { httpStatusCode: 500, attempts } });
const conflict = (attempts = 1) =>
  new ConflictException({ message: 'token mismatch', $metadata: { httpStatusCode: 409, attempts } });

async function commitAppend(fake: ReturnType<typeof fakeS3Tables>) {
  const base = await fake.catalog.loadTable(ID);
  const change = appendChange(base);
  return fake.catalog.commitTable(ID, change.requirements, change.updates);
}

describe('S3TablesCatalog outcome mapping', () => {
  it('maps a 409 on the only attempt to CommitFailedError', async () => {
    // Prepare
    const fake = fakeS3Tables(() => conflict());

    // Act / Assess
    await expect(commitAppend(fake)).rejects.toBeInstanceOf(CommitFailedError);
  });

  it('maps a 5xx that did not land to CommitStateUnknownError', async () => {
    // Prepare
    const fake = fakeS3Tables(() => serverError());

    // Act / Assess
    await expect(commitAppend(fake)).rejects.toBeInstanceOf(CommitStateUnknownError);
    expect(fake.state.metadataLocation).toBe(fake.metadataLocation);
  });

  it('reports success when a 5xx hid a swap that landed (the pointer names our file)', async () => {
    // Prepare
    const fake = fakeS3Tables(landThen(serverError()));

    // Act
    const committed = await commitAppend(fake);

    // Assess
    expect(fake.state.metadataLocation).toBe(committed.metadataLocation);
    expect(committed.metadata.snapshots).toHaveLength(1);
  });

  it('never reports a 409 after an SDK retry as CommitFailed: the first try may have landed', async () => {
    // Prepare: the pointer moved, but not to our file (someone else committed after us, or instead of us)
    const fake = fakeS3Tables((_input, state) => {
      state.metadataLocation = `${WAREHOUSE}/metadata/00001-other.metadata.json`;
      return conflict(2);
    });

    // Act / Assess
    await expect(commitAppend(fake)).rejects.toBeInstanceOf(CommitStateUnknownError);
  });

  it('reports success for a 409 after an SDK retry when the first try landed', async () => {
    // Prepare
    const fake = fakeS3Tables(landThen(conflict(3)));

    // Act
    const committed = await commitAppend(fake);

    // Assess
    expect(fake.state.metadataLocation).toBe(committed.metadataLocation);
  });

  it('maps a network failure or timeout on the swap to CommitStateUnknownError', async () => {
    // Prepare
    const fake = fakeS3Tables(() =>
      Object.assign(new Error('The operation was aborted'), { name: 'AbortError' }),
    );

    // Act / Assess
    await expect(commitAppend(fake)).rejects.toBeInstanceOf(CommitStateUnknownError);
  });

  it('maps a failure to write the new metadata file to CommitFailedError without swapping', async () => {
    // Prepare
    const fake = fakeS3Tables(() => ({}));
    fake.io.failWrites = true;

    // Act / Assess
    await expect(commitAppend(fake)).rejects.toBeInstanceOf(CommitFailedError);
    expect(fake.state.swaps).toBe(0);
  });

  it('maps throttling of the only attempt to CommitFailedError: refused before it ran, retry helps', async () => {
    // Prepare
    const fake = fakeS3Tables(
      () =>
        new TooManyRequestsException({
          message: 'slow down',
          $metadata: { httpStatusCode: 429, attempts: 1 },
        }),
    );

    // Act
    const attempt = commitAppend(fake);

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(CommitFailedError);
    await expect(attempt).rejects.toMatchObject({ retryable: true });
    expect(fake.state.metadataLocation).toBe(fake.metadataLocation);
  });

  it('maps a 400 refusal to a non-retryable LakeError, not a commit outcome', async () => {
    // Prepare
    const fake = fakeS3Tables(
      () =>
        new BadRequestException({
          message: 'location not valid',
          $metadata: { httpStatusCode: 400, attempts: 1 },
        }),
    );

    // Act
    const attempt = commitAppend(fake);

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(LakeError);
    await expect(attempt).rejects.not.toBeInstanceOf(CommitFailedError);
    await expect(attempt).rejects.not.toBeInstanceOf(CommitStateUnknownError);
    await expect(attempt).rejects.toMatchObject({ retryable: false });
  });

  it('redacts what S3 Tables quotes back, in its message and in the cause it keeps', async () => {
    // Prepare: a refusal quoting a signed request
    const fake = fakeS3Tables(
      () =>
        new BadRequestException({
          message: 'bad location for https://x/k?X-Amz-Credential=AKIAS3T&X-Amz-Signature=feedface',
          $metadata: { httpStatusCode: 400, attempts: 1 },
        }),
    );

    // Act
    const error = (await commitAppend(fake).catch((e: unknown) => e)) as Error;

    // Assess
    for (const e of [error, error.cause] as Error[]) {
      expect(`${e.message}\n${e.stack}`).not.toMatch(/AKIAS3T|feedface/);
    }
    expect(error.message).toContain('X-Amz-Signature=[REDACTED]');
  });

  it('checks requirements before writing anything', async () => {
    // Prepare
    const fake = fakeS3Tables(() => ({}));
    const before = fake.io.objects.size;

    // Act
    const attempt = fake.catalog.commitTable(ID, [{ type: 'assert-table-uuid', uuid: 'not-this-table' }], []);

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(CommitFailedError);
    expect(fake.io.objects.size).toBe(before);
    expect(fake.state.swaps).toBe(0);
  });

  it('names the next metadata file after the current version', async () => {
    // Prepare
    const fake = fakeS3Tables((input, state) => {
      state.metadataLocation = input.metadataLocation ?? '';
      return {};
    });

    // Act
    const committed = await commitAppend(fake);

    // Assess
    expect(committed.metadataLocation).toMatch(
      /^s3:\/\/wh--table-s3\/metadata\/00001-[0-9a-f-]{36}\.metadata\.json$/,
    );
    expect(committed.metadata['metadata-log'].map((e) => e['metadata-file'])).toEqual([
      fake.metadataLocation,
    ]);
  });
});

describe('S3TablesCatalog.createTable outcomes', () => {
  it('reports a failed first metadata write as such, not as an existing table', async () => {
    // Prepare: the table exists without metadata (an earlier creation stopped half-way)
    const fake = fakeS3Tables(() => ({}), { withoutMetadata: true });
    fake.io.failWrites = true;

    // Act
    const attempt = fake.catalog.createTable(ID, { schema: CONTRACT_SCHEMA });

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(LakeError);
    await expect(attempt).rejects.not.toBeInstanceOf(TableAlreadyExistsError);
    await expect(attempt).rejects.toThrow(/writing .* failed/);
    expect(fake.state.swaps).toBe(0);
  });

  it('reports a lost race for the first pointer as TableAlreadyExistsError', async () => {
    // Prepare
    const fake = fakeS3Tables(() => conflict(), { withoutMetadata: true });

    // Act / Assess
    await expect(fake.catalog.createTable(ID, { schema: CONTRACT_SCHEMA })).rejects.toBeInstanceOf(
      TableAlreadyExistsError,
    );
  });

  it('reports throttling of the first pointer as retryable, not as an existing table', async () => {
    // Prepare
    const fake = fakeS3Tables(
      () =>
        new TooManyRequestsException({
          message: 'slow down',
          $metadata: { httpStatusCode: 429, attempts: 1 },
        }),
      { withoutMetadata: true },
    );

    // Act
    const attempt = fake.catalog.createTable(ID, { schema: CONTRACT_SCHEMA });

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(TransientIOError);
    await expect(attempt).rejects.not.toBeInstanceOf(TableAlreadyExistsError);
  });

  it('reports a 5xx on the first pointer as retryable', async () => {
    // Prepare
    const fake = fakeS3Tables(() => serverError(), { withoutMetadata: true });

    // Act
    const attempt = fake.catalog.createTable(ID, { schema: CONTRACT_SCHEMA });

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(TransientIOError);
  });
});

describe('S3 Tables names', () => {
  it('accepts lowercase names with digits and underscores', () => {
    // Assess
    expect(() => validateS3TablesName('table', 'orders_2024')).not.toThrow();
    expect(() => validateS3TablesName('namespace', 'x')).not.toThrow();
  });

  it.each(['Orders', 'orders-2024', 'a.b', '_x', 'x_', '', 'a'.repeat(256)])(
    'rejects table name %j',
    (name) => {
      // Assess
      expect(() => validateS3TablesName('table', name)).toThrow(ValidationError);
    },
  );

  it('rejects the reserved namespace prefix and multi-level namespaces', async () => {
    // Prepare
    const fake = fakeS3Tables(() => ({}));

    // Assess
    expect(() => validateS3TablesName('namespace', 'aws_data')).toThrow(/reserved/);
    await expect(fake.catalog.loadTable({ namespace: ['a', 'b'], name: 't' })).rejects.toThrow(
      /exactly one level/,
    );
    await expect(fake.catalog.listTables([])).rejects.toBeInstanceOf(ValidationError);
  });

  it('rejects a string that is not a table bucket ARN', () => {
    // Assess
    expect(() => new S3TablesCatalog({ tableBucketArn: 'my-bucket', client: {} as S3TablesClient })).toThrow(
      /table bucket ARN/,
    );
  });

  it('numbers metadata files like Iceberg Java', () => {
    // Assess
    expect(nextMetadataFileName(undefined)).toMatch(/^00000-[0-9a-f-]{36}\.metadata\.json$/);
    expect(nextMetadataFileName('s3://b/metadata/00041-x.metadata.json')).toMatch(/^00042-/);
    expect(nextMetadataFileName('s3://b/metadata/v7.metadata.json')).toMatch(/^00008-/);
  });
});

describe('S3TablesCatalog metadata reads', () => {
  /** Counts reads of metadata.json files on the fake's storage. */
  function countMetadataReads(fake: ReturnType<typeof fakeS3Tables>): () => number {
    let reads = 0;
    const read = fake.io.read.bind(fake.io);
    fake.io.read = async (location: string) => {
      if (location.endsWith('.metadata.json')) reads++;
      return read(location);
    };
    return () => reads;
  }
  const swapTo: SwapBehaviour = (input, state) => {
    state.metadataLocation = input.metadataLocation ?? '';
    state.versionToken = `v${state.swaps + 1}`;
    return { versionToken: state.versionToken };
  };

  it('loads the metadata it just committed without reading the file again', async () => {
    // Prepare
    const fake = fakeS3Tables(swapTo);
    const reads = countMetadataReads(fake);
    const committed = await commitAppend(fake);

    // Act
    const loaded = await fake.catalog.loadTable(ID);

    // Assess: one read, of the first metadata, by commitAppend's loadTable; none after the commit
    expect(reads()).toBe(1);
    expect(loaded.metadataLocation).toBe(committed.metadataLocation);
    expect(loaded.metadata['current-snapshot-id']).toBe(committed.metadata['current-snapshot-id']);
    expect(loaded.versionToken).toBe(fake.state.versionToken);
  });

  it('reads the file the pointer names once another writer moved it', async () => {
    // Prepare: our commit, then another writer's metadata (one more snapshot) and pointer
    const fake = fakeS3Tables(swapTo);
    const reads = countMetadataReads(fake);
    const ours = await commitAppend(fake);
    const theirs = appendChange(ours);
    const next = applyUpdates(ours.metadata, theirs.updates);
    const otherLocation = `${WAREHOUSE}/metadata/00002-other.metadata.json`;
    fake.io.objects.set(otherLocation, new TextEncoder().encode(serializeTableMetadata(next)));
    fake.state.metadataLocation = otherLocation;
    fake.state.versionToken = 'v-other';

    // Act
    const loaded = await fake.catalog.loadTable(ID);

    // Assess
    expect(reads()).toBe(2);
    expect(loaded.metadataLocation).toBe(otherLocation);
    expect(loaded.metadata.snapshots).toHaveLength(2);
  });

  it('hands out remembered metadata frozen, so no caller can change what the next load returns', async () => {
    // Prepare
    const fake = fakeS3Tables(swapTo);
    await commitAppend(fake);

    // Act
    const loaded = await fake.catalog.loadTable(ID);

    // Assess
    expect(() => {
      (loaded.metadata.properties as Record<string, string>).changed = 'yes';
    }).toThrow(TypeError);
    expect(() => loaded.metadata.snapshots?.pop()).toThrow(TypeError);
    expect((await fake.catalog.loadTable(ID)).metadata.snapshots).toHaveLength(1);
  });
});
