/** A setup problem (region, credentials, nothing listening) gets a line saying which setting to fix. */
import { describe, expect, it } from 'vitest';
import { hintFor } from '../../../functions/cli/error-hints.js';
import { LakeError, TransientIOError } from '../../../functions/core/errors.js';

describe('hintFor', () => {
  it('finds the setup problem anywhere in the cause chain', () => {
    // Prepare
    const refused = new TypeError('fetch failed', {
      cause: new Error('connect ECONNREFUSED 127.0.0.1:4566'),
    });
    const wrapped = new TransientIOError('GET /v1/config failed', { cause: refused });
    const region = new LakeError('reading the metadata location of a.b failed: Error: Region is missing');
    const credentials = new LakeError('x', {
      cause: Object.assign(new Error('Could not load credentials from any providers'), {
        name: 'CredentialsProviderError',
      }),
    });

    // Act / Assess
    expect(hintFor(wrapped)).toMatch(/check --uri, or AWS_ENDPOINT_URL/);
    expect(hintFor(region)).toMatch(/set AWS_REGION/);
    expect(hintFor(credentials)).toMatch(/AWS_PROFILE/);
    expect(
      hintFor(
        new LakeError(
          `reading the S3 Tables maintenance configuration of a.b failed: SyntaxError: Unexpected token '<', "<!doctype "... is not valid JSON`,
        ),
      ),
    ).toMatch(/may not implement this call/);
  });

  it('says nothing about failures of the table or the data', () => {
    expect(hintFor(new LakeError('sales.orders: not found'))).toBeUndefined();
    expect(hintFor('a string')).toBeUndefined();
  });
});
