import { NoSuchKey, S3ServiceException } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import {
  LakeError,
  NotFoundError,
  TransientIOError,
  ValidationError,
} from '../../../functions/core/errors.js';
import { isConditionalWriteConflict, mapS3Error } from '../../../functions/core/io/s3-errors.js';

const operation = { name: 'GetObject', bucket: 'my-bucket', key: 'tbl/metadata/v1.json' };

/** An SDK error as the client throws it after its retries. */
function sdkError(
  name: string,
  status: number | undefined,
  message = `${name} happened`,
): S3ServiceException {
  return new S3ServiceException({
    name,
    $fault: status !== undefined && status >= 500 ? 'server' : 'client',
    $metadata: { httpStatusCode: status, attempts: 3 },
    message,
  });
}

describe('mapS3Error', () => {
  it('maps missing objects to NotFoundError and keeps the SDK error as cause', () => {
    // Prepare
    const noSuchKey = new NoSuchKey({
      $metadata: { httpStatusCode: 404 },
      message: 'The key does not exist',
    });

    // Act
    const mapped = mapS3Error(noSuchKey, operation);

    // Assess
    expect(mapped).toBeInstanceOf(NotFoundError);
    expect(mapped.cause).toBe(noSuchKey);
    expect(mapS3Error(sdkError('NotFound', 404), operation)).toBeInstanceOf(NotFoundError);
  });

  it('maps throttling, 5xx and socket failures to retryable TransientIOError', () => {
    const cases: unknown[] = [
      sdkError('SlowDown', 503),
      sdkError('InternalError', 500),
      sdkError('SomethingNew', 502),
      sdkError('TooManyRequests', 429),
      sdkError('RequestTimeout', 400),
      Object.assign(new Error('socket hang up'), { code: 'ECONNRESET', $metadata: { attempts: 3 } }),
      Object.assign(new Error('connect failed'), { cause: { code: 'ECONNREFUSED' } }),
    ];
    for (const error of cases) {
      const mapped = mapS3Error(error, operation);
      expect(mapped, String(error)).toBeInstanceOf(TransientIOError);
      expect(mapped.retryable).toBe(true);
      expect(mapped.cause).toBe(error);
    }
  });

  it('maps other 4xx to a non-retryable LakeError naming operation, bucket and key', () => {
    // Prepare
    const denied = sdkError('AccessDenied', 403, 'Access Denied');

    // Act
    const mapped = mapS3Error(denied, operation);

    // Assess
    expect(mapped).toBeInstanceOf(LakeError);
    expect(mapped).not.toBeInstanceOf(TransientIOError);
    expect(mapped).not.toBeInstanceOf(NotFoundError);
    expect(mapped.retryable).toBe(false);
    expect(mapped.message).toContain('GetObject');
    expect(mapped.message).toContain("'my-bucket'");
    expect(mapped.message).toContain("'tbl/metadata/v1.json'");
    expect(mapped.message).toContain('AccessDenied (HTTP 403): Access Denied');
    expect(mapped.cause).toBe(denied);
  });

  it('does not call a missing bucket a missing object', () => {
    const mapped = mapS3Error(sdkError('NoSuchBucket', 404), operation);
    expect(mapped).not.toBeInstanceOf(NotFoundError);
    expect(mapped.retryable).toBe(false);
    expect(mapped.message).toContain('bucket does not exist');
  });

  it('maps an unsatisfiable range to ValidationError and passes LakeErrors through', () => {
    expect(mapS3Error(sdkError('InvalidRange', 416), operation)).toBeInstanceOf(ValidationError);
    const lake = new NotFoundError('already mapped');
    expect(mapS3Error(lake, operation)).toBe(lake);
  });

  it('keeps credential or configuration errors (no HTTP response, no socket code) non-retryable', () => {
    const mapped = mapS3Error(new Error('Region is missing'), operation);
    expect(mapped.retryable).toBe(false);
    expect(mapped.message).toContain('Region is missing');
  });
});

describe('isConditionalWriteConflict', () => {
  it('recognises 412 and 409 ConditionalRequestConflict, nothing else', () => {
    expect(isConditionalWriteConflict(sdkError('PreconditionFailed', 412))).toBe(true);
    expect(isConditionalWriteConflict(sdkError('ConditionalRequestConflict', 409))).toBe(true);
    expect(isConditionalWriteConflict(sdkError('AccessDenied', 403))).toBe(false);
    expect(isConditionalWriteConflict(sdkError('InternalError', 500))).toBe(false);
  });
});
