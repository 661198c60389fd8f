import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, inject, type TestContext } from 'vitest';

/**
 * Helpers for integration tests against the endpoint test/integration/global-setup.ts provides (moto, or
 * the user's LocalStack via AWS_ENDPOINT_URL). Importing this module sets dummy credentials and a region
 * in the test process when none are set, so no test can reach a real AWS account by accident.
 */

export const MOTO_MISSING_MESSAGE = 'moto_server not found: integration tests skipped';

process.env.AWS_ACCESS_KEY_ID ??= 'test';
process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
process.env.AWS_REGION ??= 'us-east-1';

export const TEST_CREDENTIALS = { accessKeyId: 'test', secretAccessKey: 'test' } as const;
export const TEST_REGION = 'us-east-1';

/** The endpoint's base URL, or '' when no server is available. */
export function motoEndpoint(): string {
  return inject('motoEndpoint');
}

export function isMotoAvailable(): boolean {
  return motoEndpoint() !== '';
}

/** `describe` for suites that need the server: skipped, with {@link MOTO_MISSING_MESSAGE}, without it. */
export function describeWithMoto(name: string, body: () => void): void {
  const available = isMotoAvailable();
  if (!available) console.warn(`[integration] ${name}: ${MOTO_MISSING_MESSAGE}`);
  describe.skipIf(!available)(available ? name : `${name} (${MOTO_MISSING_MESSAGE})`, body);
}

/**
 * Skips the running test with {@link MOTO_MISSING_MESSAGE} when no server is available; otherwise returns
 * the endpoint. For a single test outside a {@link describeWithMoto} suite.
 */
export function requireMoto(context: TestContext): string {
  if (!isMotoAvailable()) context.skip(MOTO_MISSING_MESSAGE);
  return motoEndpoint();
}

/**
 * Wipes every resource in moto (`POST /moto-api/reset`). A no-op against an external endpoint such as
 * LocalStack, which has no such API: tests there rely on unique resource names instead.
 * @throws Error when moto answers with an error
 */
export async function resetMoto(): Promise<void> {
  if (!inject('motoManaged')) return;
  const response = await fetch(`${motoEndpoint()}/moto-api/reset`, { method: 'POST' });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`moto reset failed: HTTP ${response.status}`);
}

/** An S3 client for the test endpoint: dummy credentials, path-style addressing. */
export function s3ClientForTests(): S3Client {
  return new S3Client({
    endpoint: motoEndpoint(),
    region: TEST_REGION,
    credentials: TEST_CREDENTIALS,
    forcePathStyle: true,
  });
}

/** A bucket name no other test (or earlier run against LocalStack) uses: `prefix-<random>`. */
export function uniqueBucketName(prefix = 'floe-test'): string {
  return `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
}

/** Creates a bucket on the test endpoint and returns its name. */
export async function createBucket(name: string, client: S3Client = s3ClientForTests()): Promise<string> {
  await client.send(new CreateBucketCommand({ Bucket: name }));
  return name;
}
