/** How the emit producer connects: a setting that cannot work fails as it is, not as a retryable produce error. */
import { afterEach, describe, expect, it } from 'vitest';
import { closeWindowProducers, kafkaSender } from '../../../functions/core/aggregate/emit-windows.js';
import { ValidationError } from '../../../functions/core/errors.js';

describe('the emit producer', () => {
  const saved = { AWS_REGION: process.env.AWS_REGION, AWS_DEFAULT_REGION: process.env.AWS_DEFAULT_REGION };
  afterEach(async () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await closeWindowProducers();
  });

  it('with MSK IAM and no region fails with a ValidationError a retry cannot fix', async () => {
    // Prepare
    delete process.env.AWS_REGION;
    delete process.env.AWS_DEFAULT_REGION;
    const send = kafkaSender({ bootstrapServers: ['127.0.0.1:1'], auth: 'aws-msk-iam', tls: true });

    // Act
    const error = await send('out', [{ key: 'k', value: 'v' }]).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).retryable).toBe(false);
    expect((error as Error).message).toContain('emit with auth aws-msk-iam needs the cluster');
  });
});
