import { S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../functions/core/errors.js';
import { LocalFileIO } from '../../../functions/core/io/local-file-io.js';
import { resolveFileIO } from '../../../functions/core/io/resolve-file-io.js';
import { S3FileIO } from '../../../functions/core/io/s3-file-io.js';

describe('resolveFileIO', () => {
  it('picks LocalFileIO for file URIs and absolute paths', () => {
    expect(resolveFileIO('file:///tmp/warehouse')).toBeInstanceOf(LocalFileIO);
    expect(resolveFileIO('FILE:/tmp/warehouse')).toBeInstanceOf(LocalFileIO);
    expect(resolveFileIO('/tmp/warehouse')).toBeInstanceOf(LocalFileIO);
  });

  it('picks S3FileIO for s3 and s3a, passing the S3 options on', () => {
    // Prepare
    const client = new S3Client({ region: 'eu-west-1' });

    // Act
    const s3 = resolveFileIO('s3://bucket/warehouse', { s3: { client } });
    const s3a = resolveFileIO('s3a://bucket/warehouse', { s3: { client } });

    // Assess
    expect(s3).toBeInstanceOf(S3FileIO);
    expect((s3 as S3FileIO).client).toBe(client);
    expect(s3a).toBeInstanceOf(S3FileIO);
  });

  it('refuses relative paths and unsupported schemes', () => {
    expect(() => resolveFileIO('warehouse')).toThrow(ValidationError);
    expect(() => resolveFileIO('gs://bucket/warehouse')).toThrow(/scheme 'gs'/);
    expect(() => resolveFileIO('https://example.invalid/w')).toThrow(ValidationError);
  });
});
