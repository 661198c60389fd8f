import { describe, expect, it } from 'vitest';
import { CommitFailedError, ValidationError } from '../../../functions/core/errors.js';
import type { HandlerConfig } from '../../../functions/handlers/config.js';
import {
  cacheConfig,
  deadlineOf,
  isRetryable,
  type JsonSafe,
} from '../../../functions/handlers/lambda-glue.js';

describe('the glue every handler shares', () => {
  it('loads the configuration once, and again only after a load that failed', async () => {
    // Prepare
    let loads = 0;
    const config = { routes: [] } as unknown as HandlerConfig;
    const get = cacheConfig(async () => {
      loads += 1;
      if (loads === 1) throw new Error('secret not reachable yet');
      return config;
    });
    // Act
    const first = await get().catch((error: Error) => error);
    const second = await get();
    const third = await get();
    // Assess
    expect(first).toBeInstanceOf(Error);
    expect(second).toBe(config);
    expect(third).toBe(config);
    expect(loads).toBe(2);
  });

  it('treats errors that are not LakeErrors as retryable, LakeErrors as they say', () => {
    expect(isRetryable(new TypeError('fetch failed'))).toBe(true);
    expect(isRetryable('thrown string')).toBe(true);
    expect(isRetryable(new CommitFailedError('409'))).toBe(true);
    expect(isRetryable(new ValidationError('bad route'))).toBe(false);
  });

  it('keeps a safety margin from the remaining time, and has no deadline without a context', () => {
    const deadline = deadlineOf({ getRemainingTimeInMillis: () => 60_000 })!;
    expect(deadline).toBeLessThanOrEqual(Date.now() + 50_000);
    expect(deadline).toBeGreaterThan(Date.now() + 40_000);
    expect(deadlineOf(undefined)).toBeUndefined();
  });

  it('does not type-check a result with a bigint inside as JSON-safe (tsc is the assertion)', () => {
    // @ts-expect-error a bigint makes JSON.stringify throw, so Lambda would post Runtime.JSONStringifyError
    const bad: JsonSafe<{ snapshotId: bigint }> = { snapshotId: 1n };
    const good: JsonSafe<{ snapshotId: string | null; n?: number; xs: { ok: boolean }[] }> = {
      snapshotId: '1',
      xs: [{ ok: true }],
    };
    expect([bad, good]).toHaveLength(2);
  });
});
