import {
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { afterEach, describe, expect, it } from 'vitest';
import { AlreadyExistsError, ValidationError } from '../../../functions/core/errors.js';
import { S3FileIO } from '../../../functions/core/io/s3-file-io.js';

/**
 * Behaviour that moto cannot provoke on demand (a lost response followed by an SDK retry, a short range)
 * is checked here against a scripted client; the real wire behaviour is in test/integration/io.
 */
type Handler = (command: unknown) => unknown;

function fakeClient(handler: Handler): { client: S3Client; commands: unknown[] } {
  const commands: unknown[] = [];
  const client = {
    send: async (command: unknown) => {
      commands.push(command);
      return handler(command);
    },
  };
  return { client: client as unknown as S3Client, commands };
}

function body(bytes: Uint8Array) {
  return { transformToByteArray: async () => bytes };
}

function preconditionFailed(attempts: number): S3ServiceException {
  return new S3ServiceException({
    name: 'PreconditionFailed',
    $fault: 'client',
    $metadata: { httpStatusCode: 412, attempts },
    message: 'At least one of the pre-conditions you specified did not hold',
  });
}

describe('S3FileIO (scripted client)', () => {
  const savedEnv = { ...process.env };
  afterEach(() => {
    process.env = { ...savedEnv };
  });

  it('writeIfAbsent sends If-None-Match: * and maps a first-attempt 412 to AlreadyExistsError', async () => {
    // Prepare
    const { client, commands } = fakeClient((command) => {
      if (command instanceof PutObjectCommand) throw preconditionFailed(1);
      throw new Error('unexpected command');
    });
    const io = new S3FileIO({ client });

    // Act
    const result = io.writeIfAbsent('s3://b/t/pointer', new Uint8Array([1, 2, 3]));

    // Assess
    await expect(result).rejects.toBeInstanceOf(AlreadyExistsError);
    expect(commands).toHaveLength(1);
    expect((commands[0] as PutObjectCommand).input).toMatchObject({
      Bucket: 'b',
      Key: 't/pointer',
      IfNoneMatch: '*',
    });
  });

  it('writeIfAbsent treats a 412 after an SDK retry as its own landed write when the bytes are ours', async () => {
    // Prepare: the first attempt landed but its response was lost; the retry saw the object.
    const ours = new Uint8Array([7, 7, 7]);
    const { client } = fakeClient((command) => {
      if (command instanceof PutObjectCommand) throw preconditionFailed(2);
      if (command instanceof GetObjectCommand) return { Body: body(ours.slice()) };
      throw new Error('unexpected command');
    });
    const io = new S3FileIO({ client });

    // Act + Assess
    await expect(io.writeIfAbsent('s3://b/k', ours)).resolves.toBeUndefined();
  });

  it('writeIfAbsent after an SDK retry still reports a loss when the object holds other bytes', async () => {
    // Prepare
    const { client } = fakeClient((command) => {
      if (command instanceof PutObjectCommand) throw preconditionFailed(2);
      if (command instanceof GetObjectCommand) return { Body: body(new Uint8Array([9])) };
      throw new Error('unexpected command');
    });
    const io = new S3FileIO({ client });

    // Act + Assess
    await expect(io.writeIfAbsent('s3://b/k', new Uint8Array([7]))).rejects.toBeInstanceOf(
      AlreadyExistsError,
    );
  });

  it('readRange asks for an inclusive byte range and refuses a short answer', async () => {
    // Prepare: the object has only 3 bytes from offset 10 on.
    const { client, commands } = fakeClient(() => ({ Body: body(new Uint8Array([1, 2, 3])) }));
    const io = new S3FileIO({ client });

    // Act
    const exact = await io.readRange('s3://b/k', 10, 3);
    const short = io.readRange('s3://b/k', 10, 8);

    // Assess
    expect([...exact]).toEqual([1, 2, 3]);
    expect((commands[0] as GetObjectCommand).input.Range).toBe('bytes=10-12');
    await expect(short).rejects.toBeInstanceOf(ValidationError);
  });

  it('list treats the prefix as a directory and follows continuation tokens', async () => {
    // Prepare
    const { client, commands } = fakeClient((command) => {
      const input = (command as ListObjectsV2Command).input;
      if (input.ContinuationToken === undefined) {
        return {
          Contents: [{ Key: 't/a', Size: 1, LastModified: new Date(1000) }],
          IsTruncated: true,
          NextContinuationToken: 'n1',
        };
      }
      return { Contents: [{ Key: 't/b', Size: 2, LastModified: new Date(2000) }], IsTruncated: false };
    });
    const io = new S3FileIO({ client });

    // Act
    const listed = await io.list('s3a://b/t');

    // Assess
    expect(listed).toEqual([
      { location: 's3a://b/t/a', size: 1, lastModifiedMs: 1000 },
      { location: 's3a://b/t/b', size: 2, lastModifiedMs: 2000 },
    ]);
    expect(commands.map((c) => (c as ListObjectsV2Command).input)).toEqual([
      { Bucket: 'b', Prefix: 't/', ContinuationToken: undefined },
      { Bucket: 'b', Prefix: 't/', ContinuationToken: 'n1' },
    ]);
    expect(commands[0]).toBeInstanceOf(ListObjectsV2Command);
  });

  it('defaults forcePathStyle to true exactly when an endpoint is configured', async () => {
    // Prepare
    delete process.env.AWS_ENDPOINT_URL;
    delete process.env.AWS_ENDPOINT_URL_S3;
    const plain = new S3FileIO({ region: 'us-east-1' });
    const explicit = new S3FileIO({ region: 'us-east-1', endpoint: 'http://127.0.0.1:9' });
    process.env.AWS_ENDPOINT_URL_S3 = 'http://127.0.0.1:9';
    const fromEnv = new S3FileIO({ region: 'us-east-1' });
    const overridden = new S3FileIO({ region: 'us-east-1', forcePathStyle: false });

    // Assess
    expect(plain.client.config.forcePathStyle).toBe(false);
    expect(explicit.client.config.forcePathStyle).toBe(true);
    expect(fromEnv.client.config.forcePathStyle).toBe(true);
    expect(overridden.client.config.forcePathStyle).toBe(false);
  });
});
