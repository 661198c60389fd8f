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

  it('a Kafka connection failure gets the Kafka hint, never the catalog one', () => {
    // Prepare: what kafkajs throws when the brokers stopped answering mid-run
    const kafkajs = Object.assign(new Error('Connection error: connect ECONNREFUSED 127.0.0.1:9092'), {
      name: 'KafkaJSNumberOfRetriesExceeded',
    });
    const catalog = new TypeError('fetch failed', {
      cause: new Error('connect ECONNREFUSED 127.0.0.1:8181'),
    });

    // Act / Assess
    expect(hintFor(kafkajs)).toMatch(/--bootstrap-servers/);
    expect(hintFor(kafkajs)).not.toMatch(/--uri|AWS_ENDPOINT_URL/);
    expect(hintFor(new LakeError('batch failed', { cause: kafkajs }))).toMatch(/--bootstrap-servers/);
    expect(hintFor(catalog)).toMatch(/check --uri/);
  });

  it("adds nothing to floe's own Kafka errors, which say what to do", () => {
    const unreachable = Object.assign(
      new LakeError('cannot reach Kafka at --bootstrap-servers a:1 (ECONNREFUSED)'),
      {
        name: 'KafkaUnreachableError',
      },
    );
    expect(hintFor(unreachable)).toBeUndefined();
  });

  it('says nothing about failures of the table or the data', () => {
    expect(hintFor(new LakeError('sales.orders: not found'))).toBeUndefined();
    expect(hintFor('a string')).toBeUndefined();
  });
});
