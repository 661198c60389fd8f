import { mkdir, mkdtemp, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isFreshLiveCacheFile, LIVE_CACHE_MAX_TTL_MS } from '../../../functions/core/io/confined-delete.js';
import { LocalFileIO } from '../../../functions/core/io/local-file-io.js';
import { sweepLiveCache } from '../../../functions/core/live/live-catalog.js';

describe('the live cache and orphan removal', () => {
  const now = 1_800_000_000_000;

  it('counts a live cache file as fresh only under <location>/floe-live and younger than the longest TTL', () => {
    const file = (location: string, ageMs: number) => ({ location, lastModifiedMs: now - ageMs });
    expect(isFreshLiveCacheFile('/wh/t', file('/wh/t/floe-live/k/data/a.parquet', 60_000), now)).toBe(true);
    expect(
      isFreshLiveCacheFile('/wh/t', file('/wh/t/floe-live/k/data/a.parquet', LIVE_CACHE_MAX_TTL_MS + 1), now),
    ).toBe(false);
    expect(isFreshLiveCacheFile('/wh/t', file('/wh/t/data/a.parquet', 60_000), now)).toBe(false);
    expect(isFreshLiveCacheFile('/wh/t', file('/wh/t/floe-livex/a.parquet', 60_000), now)).toBe(false);
  });

  it('sweeps cache folders older than the TTL, keeping the one in use and the fresh ones', async () => {
    // Prepare: three folders, two of them old
    const root = await mkdtemp(join(tmpdir(), 'floe-live-cache-'));
    const put = async (key: string, ageMs: number) => {
      await mkdir(join(root, key, 'data'), { recursive: true });
      const path = join(root, key, 'data', 'f.parquet');
      await writeFile(path, 'x');
      const t = (now - ageMs) / 1000;
      await utimes(path, t, t);
    };
    await put('old', 3_600_000);
    await put('inuse', 3_600_000);
    await put('fresh', 1_000);
    const io = new LocalFileIO();
    // Act
    const removed = await sweepLiveCache(io, root, 600_000, now, new Set(['inuse']));
    // Assess
    expect(removed).toEqual([join(root, 'old')]);
    expect(await io.exists(join(root, 'old', 'data', 'f.parquet'))).toBe(false);
    expect(await io.exists(join(root, 'inuse', 'data', 'f.parquet'))).toBe(true);
    expect(await io.exists(join(root, 'fresh', 'data', 'f.parquet'))).toBe(true);
  });
});
