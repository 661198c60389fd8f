/**
 * The one AWS error classifier, on errors shaped as the SDK throws them: modeled service exceptions
 * (`name`, `$fault`, `$metadata.httpStatusCode`, `attempts`), S3's XML errors known only by `Code`,
 * socket failures with an errno code on the error or its `cause`, aborts, and an answer the SDK could not
 * parse (moto's 404 page for an operation it does not implement).
 */
import {
  ConditionalCheckFailedException,
  ProvisionedThroughputExceededException,
  TransactionConflictException,
} from '@aws-sdk/client-dynamodb';
import { AccessDeniedException as GlueAccessDenied, EntityNotFoundException } from '@aws-sdk/client-glue';
import { NoSuchBucket, NoSuchKey, S3ServiceException } from '@aws-sdk/client-s3';
import {
  ConflictException,
  InternalServerErrorException,
  NotFoundException,
  TooManyRequestsException,
} from '@aws-sdk/client-s3tables';
import { describe, expect, it } from 'vitest';
import { type AwsErrorKind, classifyAwsError } from '../../../functions/core/io/aws-errors.js';

const meta = (httpStatusCode?: number, attempts = 1) => ({ httpStatusCode, attempts });

/** S3 answers some errors with a Code the SDK has no class for: a generic exception carrying `Code`. */
function s3Coded(code: string, status: number): S3ServiceException {
  const error = new S3ServiceException({
    name: 'Error',
    $fault: status >= 500 ? 'server' : 'client',
    $metadata: meta(status),
    message: `${code} happened`,
  });
  return Object.assign(error, { name: 'Error', Code: code });
}

/** What the SDK throws when the body is no JSON it can read (moto's HTML 404 for an unknown route). */
function unparsed(status: number): Error {
  const error = new SyntaxError(
    `Unexpected token '<', "<!doctype "... is not valid JSON\n  Deserialization error: to see the raw response, inspect the hidden field {error}.$response on this object.`,
  );
  return Object.assign(error, { $metadata: meta(status) });
}

const cases: [string, unknown, AwsErrorKind, { name: string; status?: number }][] = [
  // not found
  [
    'S3 NoSuchKey',
    new NoSuchKey({ $metadata: meta(404), message: 'The key does not exist' }),
    'not-found',
    { name: 'NoSuchKey', status: 404 },
  ],
  [
    'S3 NoSuchBucket',
    new NoSuchBucket({ $metadata: meta(404), message: 'no bucket' }),
    'not-found',
    { name: 'NoSuchBucket', status: 404 },
  ],
  [
    'S3 Tables NotFoundException',
    new NotFoundException({ $metadata: meta(404), message: 'no table' }),
    'not-found',
    { name: 'NotFoundException', status: 404 },
  ],
  [
    'Glue EntityNotFoundException',
    new EntityNotFoundException({ $metadata: meta(400), message: 'Schema version is not found.' }),
    'not-found',
    { name: 'EntityNotFoundException', status: 400 },
  ],
  // conflicts
  [
    'S3 Tables ConflictException',
    new ConflictException({ $metadata: meta(409), message: 'token mismatch' }),
    'conflict',
    { name: 'ConflictException', status: 409 },
  ],
  [
    'S3 412 by Code',
    s3Coded('PreconditionFailed', 412),
    'conflict',
    { name: 'PreconditionFailed', status: 412 },
  ],
  [
    'DynamoDB condition',
    new ConditionalCheckFailedException({ $metadata: meta(400), message: 'The conditional request failed' }),
    'conflict',
    { name: 'ConditionalCheckFailedException', status: 400 },
  ],
  [
    'DynamoDB transaction conflict',
    new TransactionConflictException({ $metadata: meta(400), message: 'busy' }),
    'conflict',
    { name: 'TransactionConflictException', status: 400 },
  ],
  // throttling
  [
    'S3 Tables 429',
    new TooManyRequestsException({ $metadata: meta(429), message: 'slow down' }),
    'throttled',
    { name: 'TooManyRequestsException', status: 429 },
  ],
  ['S3 SlowDown by Code', s3Coded('SlowDown', 503), 'throttled', { name: 'SlowDown', status: 503 }],
  [
    'DynamoDB throughput, no status',
    new ProvisionedThroughputExceededException({ $metadata: {}, message: 'slow' }),
    'throttled',
    { name: 'ProvisionedThroughputExceededException' },
  ],
  [
    'Glue throttling by name only',
    Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }),
    'throttled',
    { name: 'ThrottlingException' },
  ],
  // server
  [
    'S3 Tables 500',
    new InternalServerErrorException({ $metadata: meta(500, 3), message: 'internal' }),
    'server',
    { name: 'InternalServerErrorException', status: 500 },
  ],
  ['an unknown 502', s3Coded('SomethingNew', 502), 'server', { name: 'SomethingNew', status: 502 }],
  // network
  [
    'socket reset on the error',
    Object.assign(new Error('socket hang up'), { code: 'ECONNRESET', $metadata: { attempts: 3 } }),
    'network',
    { name: 'ECONNRESET' },
  ],
  [
    'refused on the cause',
    Object.assign(new Error('connect failed'), { cause: { code: 'ECONNREFUSED' } }),
    'network',
    { name: 'ECONNREFUSED' },
  ],
  [
    'an abort (the caller’s timeout)',
    Object.assign(new Error('The operation was aborted'), { name: 'AbortError' }),
    'network',
    { name: 'AbortError' },
  ],
  [
    'S3 RequestTimeout (400)',
    s3Coded('RequestTimeout', 400),
    'network',
    { name: 'RequestTimeout', status: 400 },
  ],
  // unsupported
  ['an unknown route (HTML 404)', unparsed(404), 'unsupported', { name: 'SyntaxError', status: 404 }],
  ['501', s3Coded('NotImplemented', 501), 'unsupported', { name: 'NotImplemented', status: 501 }],
  // client
  [
    'Glue AccessDeniedException',
    new GlueAccessDenied({ $metadata: meta(400), message: 'not authorized' }),
    'client',
    { name: 'AccessDeniedException', status: 400 },
  ],
  ['S3 AccessDenied by Code', s3Coded('AccessDenied', 403), 'client', { name: 'AccessDenied', status: 403 }],
  ['configuration, no answer', new Error('Region is missing'), 'client', { name: 'Error' }],
];

describe('classifyAwsError', () => {
  it.each(cases)('%s → %s', (_label, error, kind, expected) => {
    // Act
    const classified = classifyAwsError(error);
    // Assess
    expect(classified.kind).toBe(kind);
    expect(classified.name).toBe(expected.name);
    expect(classified.status).toBe(expected.status);
    expect(classified.retryable).toBe(kind === 'throttled' || kind === 'server' || kind === 'network');
  });

  it('reports the SDK attempts and a detail line with name, status and message', () => {
    const classified = classifyAwsError(
      new InternalServerErrorException({ $metadata: meta(500, 3), message: 'internal' }),
    );
    expect(classified.attempts).toBe(3);
    expect(classified.detail).toBe('InternalServerErrorException (HTTP 500): internal');
    expect(classifyAwsError(new Error('x')).attempts).toBe(1);
    expect(classifyAwsError(unparsed(404)).detail).toBe(
      `HTTP 404 with a body that is not the service's answer (Unexpected token '<', "<!doctype "... is not valid JSON)`,
    );
  });

  it('redacts the message and the error itself (kept as a cause)', () => {
    // Prepare: a service quoting a presigned URL back
    const error = Object.assign(new Error('denied for https://b/k?X-Amz-Signature=deadbeef'), {
      name: 'AccessDenied',
      $metadata: meta(403),
    });
    // Act
    const classified = classifyAwsError(error);
    // Assess
    expect(classified.message).not.toContain('deadbeef');
    expect(error.message).not.toContain('deadbeef');
    expect(String(error.stack)).not.toContain('deadbeef');
  });

  it('never throws, whatever was thrown', () => {
    for (const thrown of [undefined, null, 'text', 42, { message: 'plain object' }]) {
      expect(classifyAwsError(thrown).kind).toBe('client');
    }
  });
});
