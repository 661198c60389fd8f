import { createServer } from 'node:net';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  AlreadyExistsError,
  LakeError,
  NotFoundError,
  TransientIOError,
  ValidationError,
} from '../../../functions/core/errors.js';
import { S3FileIO } from '../../../functions/core/io/s3-file-io.js';
import {
  createBucket,
  describeWithMoto,
  motoEndpoint,
  resetMoto,
  s3ClientForTests,
  TEST_CREDENTIALS,
  TEST_REGION,
  uniqueBucketName,
} from '../moto.js';

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);

/** Runs `task` over `items` with at most `limit` in flight. */
async function runLimited<T>(items: T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: limit }, async () => {
    while (next < items.length) {
      const item = items[next];
      next += 1;
      await task(item);
    }
  });
  await Promise.all(workers);
}

describeWithMoto('S3FileIO against moto', () => {
  let client: S3Client;
  let io: S3FileIO;
  let bucket: string;

  beforeAll(async () => {
    await resetMoto();
    client = s3ClientForTests();
    bucket = await createBucket(uniqueBucketName(), client);
    io = new S3FileIO({ client });
  });

  afterAll(() => {
    client?.destroy();
  });

  it('writes, reads, overwrites and stats an object', async () => {
    // Prepare
    const location = `s3://${bucket}/t/metadata/v1.metadata.json`;
    const before = Date.now();

    // Act
    await io.write(location, bytes('{"format-version":2}'));
    const first = text(await io.read(location));
    await io.write(location, bytes('{"format-version":2,"x":1}'));
    const second = text(await io.read(location));
    const stat = await io.stat(location);

    // Assess
    expect(first).toBe('{"format-version":2}');
    expect(second).toBe('{"format-version":2,"x":1}');
    expect(stat?.size).toBe(second.length);
    // S3 keeps seconds: allow the truncation and some clock skew.
    expect(stat?.lastModifiedMs).toBeGreaterThanOrEqual(before - 5_000);
    expect(await io.exists(location)).toBe(true);
    expect(text(await io.read(`s3a://${bucket}/t/metadata/v1.metadata.json`))).toBe(second);
  });

  it('reads byte ranges with the wire semantics of Range and refuses ranges past the end', async () => {
    // Prepare
    const location = `s3://${bucket}/ranges/r.bin`;
    await io.write(
      location,
      Uint8Array.from({ length: 100 }, (_, i) => i),
    );

    // Act
    const middle = await io.readRange(location, 10, 5);
    const tail = await io.readRange(location, 92, 8);
    const empty = await io.readRange(location, 100, 0);

    // Assess
    expect([...middle]).toEqual([10, 11, 12, 13, 14]);
    expect([...tail]).toEqual([92, 93, 94, 95, 96, 97, 98, 99]);
    expect(empty.length).toBe(0);
    await expect(io.readRange(location, 95, 10)).rejects.toBeInstanceOf(ValidationError);
    await expect(io.readRange(location, 200, 10)).rejects.toBeInstanceOf(ValidationError);
  });

  it('lists more than one page (1100 objects) under a directory prefix, not its siblings', async () => {
    // Prepare
    const keys = Array.from(
      { length: 1100 },
      (_, i) => `many/data/part-${String(i).padStart(5, '0')}.parquet`,
    );
    await runLimited(keys, 32, (key) => io.write(`s3://${bucket}/${key}`, bytes(key)));
    await io.write(`s3://${bucket}/many2/sibling`, bytes('must not be listed'));
    const send = vi.spyOn(client, 'send');

    // Act
    const listed = await io.list(`s3://${bucket}/many`);

    // Assess
    const listCalls = send.mock.calls.filter(([command]) => command instanceof ListObjectsV2Command);
    send.mockRestore();
    expect(listCalls.length).toBeGreaterThanOrEqual(2);
    expect(listed.map((entry) => entry.location)).toEqual(keys.map((key) => `s3://${bucket}/${key}`));
    expect(listed.every((entry, i) => entry.size === keys[i].length)).toBe(true);
  });

  it('writeIfAbsent: of 10 concurrent writers exactly one wins and the object holds its bytes', async () => {
    // Prepare
    const location = `s3://${bucket}/t/metadata/pointer`;
    const payloads = Array.from({ length: 10 }, (_, i) => bytes(`writer-${i}-${'x'.repeat(1000)}`));

    // Act
    const results = await Promise.allSettled(payloads.map((data) => io.writeIfAbsent(location, data)));

    // Assess
    const winners = results.flatMap((result, i) => (result.status === 'fulfilled' ? [i] : []));
    expect(winners).toHaveLength(1);
    for (const result of results) {
      if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(AlreadyExistsError);
    }
    expect(text(await io.read(location))).toBe(text(payloads[winners[0]]));
    await expect(io.writeIfAbsent(location, bytes('late'))).rejects.toBeInstanceOf(AlreadyExistsError);
  });

  it('deletes objects, and deleting an absent one is fine', async () => {
    // Prepare
    const location = `s3://${bucket}/t/data/old.parquet`;
    await io.write(location, bytes('old'));

    // Act
    await io.delete(location);
    await io.delete(location);

    // Assess
    expect(await io.stat(location)).toBeUndefined();
    expect(await io.exists(location)).toBe(false);
    await expect(io.read(location)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('maps a missing object to NotFoundError with the SDK error as cause', async () => {
    // Prepare
    const location = `s3://${bucket}/does/not/exist`;

    // Act
    const readError = await io.read(location).catch((error: unknown) => error);
    const rangeError = await io.readRange(location, 0, 4).catch((error: unknown) => error);

    // Assess
    expect(readError).toBeInstanceOf(NotFoundError);
    expect((readError as NotFoundError).cause).toMatchObject({ name: 'NoSuchKey' });
    expect(rangeError).toBeInstanceOf(NotFoundError);
    expect(await io.stat(location)).toBeUndefined();
    expect(await io.list(`s3://${bucket}/does/not`)).toEqual([]);
  });

  it('maps a missing bucket to a non-retryable LakeError naming bucket, key and operation', async () => {
    // Prepare
    const missing = uniqueBucketName('floe-missing');
    const location = `s3://${missing}/t/file.json`;

    // Act
    const readError = await io.read(location).catch((error: unknown) => error);
    const writeError = await io.write(location, bytes('x')).catch((error: unknown) => error);
    const listError = await io.list(`s3://${missing}/t`).catch((error: unknown) => error);

    // Assess
    for (const error of [readError, writeError, listError]) {
      expect(error).toBeInstanceOf(LakeError);
      expect(error).not.toBeInstanceOf(NotFoundError);
      expect(error).not.toBeInstanceOf(TransientIOError);
      expect((error as LakeError).retryable).toBe(false);
      expect((error as LakeError).message).toContain(`'${missing}'`);
      expect((error as LakeError).cause).toMatchObject({ name: 'NoSuchBucket' });
    }
    expect((readError as LakeError).message).toContain('GetObject on bucket');
    expect((readError as LakeError).message).toContain("key 't/file.json'");
    expect((writeError as LakeError).message).toContain('PutObject');
    expect((listError as LakeError).message).toContain('ListObjectsV2');
  });

  it('finds the endpoint through AWS_ENDPOINT_URL_S3 with no endpoint option (path style by default)', async () => {
    // Prepare
    const saved = process.env.AWS_ENDPOINT_URL_S3;
    process.env.AWS_ENDPOINT_URL_S3 = motoEndpoint();
    const envIO = new S3FileIO({ region: TEST_REGION, credentials: TEST_CREDENTIALS });
    const location = `s3://${bucket}/env/hello.txt`;
    try {
      // Act
      await envIO.write(location, bytes('via env'));

      // Assess
      expect(text(await io.read(location))).toBe('via env');
      expect(envIO.client.config.forcePathStyle).toBe(true);
    } finally {
      envIO.client.destroy();
      if (saved === undefined) delete process.env.AWS_ENDPOINT_URL_S3;
      else process.env.AWS_ENDPOINT_URL_S3 = saved;
    }
  });
});

describe('S3FileIO network failures', () => {
  it('maps a refused connection to a retryable TransientIOError keeping the socket error', async () => {
    // Prepare: a loopback port nobody listens on, and no SDK retries to keep the test fast.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const port = typeof address === 'object' && address !== null ? address.port : 1;
    const client = new S3Client({
      endpoint: `http://127.0.0.1:${port}`,
      region: TEST_REGION,
      credentials: TEST_CREDENTIALS,
      forcePathStyle: true,
      maxAttempts: 1,
    });
    const io = new S3FileIO({ client });

    // Act
    const error = await io.read('s3://any-bucket/key').catch((caught: unknown) => caught);
    client.destroy();

    // Assess
    expect(error).toBeInstanceOf(TransientIOError);
    expect((error as TransientIOError).retryable).toBe(true);
    expect((error as TransientIOError).cause).toMatchObject({ code: 'ECONNREFUSED' });
  });
});
