/**
 * redact(): the one redaction applied wherever a remote party's words or a URL go into an error.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mapStatus, parseErrorBody } from '../../../functions/core/catalog/rest/rest-errors.js';
import { LakeError } from '../../../functions/core/errors.js';
import {
  createGlueSchemaSource,
  type GlueClientLike,
} from '../../../functions/core/formats/glue-schema-source.js';
import { mapS3Error } from '../../../functions/core/io/s3-errors.js';
import { clearRegisteredSecrets, redact, registerSecret } from '../../../functions/core/redact.js';

afterEach(() => clearRegisteredSecrets());

describe('redact', () => {
  it.each([
    ['Authorization: Basic dXNlcjpwYXNz', 'Authorization: [REDACTED]'],
    ['{"authorization":"Bearer eyJhbGciOi.x.y"}', '{"authorization":"[REDACTED]"}'],
    ['the header was Bearer abc.def-ghi', 'the header was Bearer [REDACTED]'],
    ['got Basic dXNlcjpwYXNz, refused', 'got Basic [REDACTED] refused'],
    [
      'grant_type=client_credentials&client_id=floe&client_secret=s3cr3t&scope=catalog',
      'grant_type=client_credentials&client_id=floe&client_secret=[REDACTED]&scope=catalog',
    ],
    ['{"access_token": "tok-123", "expires_in": 3600}', '{"access_token": "[REDACTED]", "expires_in": 3600}'],
    ['{"password":"hunter2\\"x"}', '{"password":"[REDACTED]"}'],
    [
      'GET https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F20260101&X-Amz-Security-Token=FQo&X-Amz-Signature=abc123 failed',
      'GET https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=[REDACTED]&X-Amz-Security-Token=[REDACTED]&X-Amz-Signature=[REDACTED] failed',
    ],
    [
      'https://acct.blob.core.windows.net/c/f?sv=2024&sig=abc%3D&se=x',
      'https://acct.blob.core.windows.net/c/f?sv=2024&sig=[REDACTED]&se=x',
    ],
    ['https://user:pa55@registry.example.com/schemas', 'https://[REDACTED]@registry.example.com/schemas'],
  ])('masks %s', (text, expected) => {
    expect(redact(text)).toBe(expected);
  });

  it('masks only the server’s words in a REST error, not floe’s (a table may be called `token`)', () => {
    // Prepare
    const body =
      '{"error":{"message":"bad header Authorization: Bearer abc","type":"BadRequestException","code":400}}';

    // Act
    const error = mapStatus('loading db.token', 400, parseErrorBody(400, body), 'table');

    // Assess
    expect(error.message).toBe(
      'loading db.token: HTTP 400 BadRequestException: bad header Authorization: [REDACTED]',
    );
  });

  it('leaves ordinary messages alone', () => {
    const text = 'loading db.events: HTTP 404 NoSuchTableException: table events does not exist';
    expect(redact(text)).toBe(text);
  });

  it('masks a registered secret in the forms a server may echo it in', () => {
    // Prepare
    registerSecret('reg-user:p@ss word+1', { pair: true });
    registerSecret('tok/en=42');

    // Act
    const echoed = [
      'plain p@ss word+1 here',
      `basic ${Buffer.from('reg-user:p@ss word+1').toString('base64')} here`,
      `form ${encodeURIComponent('p@ss word+1')} and ${new URLSearchParams({ v: 'p@ss word+1' }).toString()}`,
      `json ${JSON.stringify({ note: 'tok/en=42' })}`,
      `raw base64 ${Buffer.from('tok/en=42').toString('base64')}`,
    ].map(redact);

    // Assess
    for (const line of echoed) {
      expect(line).not.toMatch(/p@ss|word|tok\/en|cDBzcyB3b3JkKzE|dG9rL2VuPTQy/);
      expect(line).toContain('[REDACTED]');
    }
  });

  it('is applied to S3 error messages', () => {
    // Prepare: an S3-compatible store quoting a presigned URL back
    const error = Object.assign(
      new Error('denied for https://b.example/k?X-Amz-Credential=AKIAEXAMPLE&X-Amz-Signature=deadbeef'),
      { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } },
    );

    // Act
    const mapped = mapS3Error(error, { name: 'GetObject', bucket: 'b', key: 'k' });

    // Assess
    expect(mapped.message).not.toMatch(/AKIAEXAMPLE|deadbeef/);
    expect(mapped.message).toContain('X-Amz-Signature=[REDACTED]');
    // the SDK error is kept as the cause, and loggers print causes (with stacks) too
    expect(String((mapped.cause as Error).message)).not.toMatch(/AKIAEXAMPLE|deadbeef/);
    expect(String((mapped.cause as Error).stack)).not.toMatch(/AKIAEXAMPLE|deadbeef/);
  });

  it('is applied to Glue Schema Registry errors and their causes', async () => {
    // Prepare: the SDK quoting a signed request back
    const client: GlueClientLike = {
      send: async () => {
        throw Object.assign(
          new Error(
            'AccessDenied: Authorization: AWS4-HMAC-SHA256 Credential=AKIAGLUE/x, Signature=cafebabe',
          ),
          { name: 'AccessDeniedException' },
        );
      },
    };
    const glue = createGlueSchemaSource({ client });

    // Act
    const error = await glue
      .getSchemaVersion('11111111-2222-4333-8444-555555555555')
      .catch((e: unknown) => e);

    // Assess (access denied is final: a retry with the same credentials is denied again)
    expect(error).toBeInstanceOf(LakeError);
    expect(error).toMatchObject({ retryable: false });
    for (const e of [error, (error as Error).cause] as Error[]) {
      expect(`${e.message}\n${e.stack}`).not.toMatch(/AKIAGLUE|cafebabe/);
    }
  });
});
