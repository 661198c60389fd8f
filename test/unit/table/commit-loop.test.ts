import { rm } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { EmbeddedCatalog } from '../../../functions/core/catalog/embedded-catalog.js';
import { CommitFailedError, NotFoundError } from '../../../functions/core/errors.js';
import { fromFileUri } from '../../../functions/core/io/location.js';
import { readManifestEntries } from '../../../functions/core/manifest/manifest-reader.js';
import { readManifestList } from '../../../functions/core/manifest/manifest-list.js';
import { currentSnapshot } from '../../../functions/core/spec/metadata.js';
import type { DataFile } from '../../../functions/core/spec/types.js';
import type { CommitLock, LockLease } from '../../../functions/core/lock/commit-lock.js';
import { type CommitAction, commitWithRetry } from '../../../functions/core/table/commit-loop.js';
import { prepareSnapshot } from '../../../functions/core/table/snapshot-producer.js';
import { BATCH_ID_KEY } from '../../../functions/core/table/source-offsets.js';
import {
  FaultyCatalog,
  fakeDataFile,
  ORDERS_ID,
  SIMPLE_SCHEMA,
  tempWarehouse,
} from '../../support/tables.js';

const noSleep = async () => {};

function appendAction(files: DataFile[], batchId?: string): CommitAction & { prepared: number } {
  const action = {
    batchId,
    prepared: 0,
    prepare: async (base: LoadedTable) => {
      action.prepared++;
      return prepareSnapshot(base, {
        operation: 'append',
        addedDataFiles: files,
        addedDeleteFiles: [],
        summary: batchId ? { [BATCH_ID_KEY]: batchId } : {},
      });
    },
  };
  return action;
}

async function liveFiles(table: LoadedTable): Promise<string[]> {
  const snap = currentSnapshot(table.metadata);
  if (!snap) return [];
  const out: string[] = [];
  for (const m of await readManifestList(table.io, snap['manifest-list'])) {
    for (const e of await readManifestEntries(table.io, m))
      if (e.status !== 2) out.push(e.data_file.file_path);
  }
  return out.sort();
}

describe('commit loop', () => {
  let catalog: EmbeddedCatalog;
  let dir: string;
  let cleanup: () => Promise<void>;
  let table: LoadedTable;

  beforeEach(async () => {
    ({ catalog, dir, cleanup } = await tempWarehouse());
    table = await catalog.createTable(ORDERS_ID, { schema: SIMPLE_SCHEMA });
  });
  afterEach(() => cleanup());

  it('commits an append as one snapshot with summary totals', async () => {
    const result = await commitWithRetry(
      catalog,
      ORDERS_ID,
      appendAction([fakeDataFile(table, 'a', 7)], 'b1'),
    );
    expect(result.status).toBe('committed');
    const snap = currentSnapshot(result.table.metadata)!;
    expect(snap.summary).toMatchObject({
      operation: 'append',
      'added-data-files': '1',
      'added-records': '7',
      'total-records': '7',
      'total-data-files': '1',
      [BATCH_ID_KEY]: 'b1',
    });
    expect(await liveFiles(result.table)).toEqual([fakeDataFile(table, 'a').file_path]);
  });

  it('prepares again on the new table when the base lost its manifest list meanwhile (an expiry)', async () => {
    // Prepare: a first snapshot; then, while our change is being prepared on it, another writer commits
    // and the first snapshot's manifest list is removed (as expire-snapshots does once newer ones landed)
    await commitWithRetry(catalog, ORDERS_ID, appendAction([fakeDataFile(table, 'first', 2)], 'first'));
    const base = await catalog.loadTable(ORDERS_ID);
    const firstList = currentSnapshot(base.metadata)!['manifest-list'];
    const ours = appendAction([fakeDataFile(table, 'ours', 5)], 'mine');
    let interfered = false;
    const action: CommitAction = {
      batchId: 'mine',
      prepare: async (b, attempt) => {
        if (!interfered) {
          interfered = true;
          await commitWithRetry(
            catalog,
            ORDERS_ID,
            appendAction([fakeDataFile(table, 'theirs', 3)], 'other'),
          );
          await rm(fromFileUri(firstList), { force: true });
        }
        return ours.prepare(b, attempt);
      },
    };

    // Act
    const result = await commitWithRetry(catalog, ORDERS_ID, action, { sleep: noSleep, base });

    // Assess: one conflict, then committed on the table the other writer left
    expect(result.status).toBe('committed');
    expect(result.conflicts).toBe(1);
    expect(await liveFiles(result.table)).toEqual(
      ['first', 'ours', 'theirs'].map((n) => fakeDataFile(table, n).file_path).sort(),
    );
  });

  it('still fails when a file of a table that did not move is missing', async () => {
    // Prepare
    await commitWithRetry(catalog, ORDERS_ID, appendAction([fakeDataFile(table, 'first', 2)], 'first'));
    const base = await catalog.loadTable(ORDERS_ID);
    await rm(fromFileUri(currentSnapshot(base.metadata)!['manifest-list']), { force: true });
    // another process: it has not just written that list itself (manifest-list.ts would not read it)
    const fresh = new EmbeddedCatalog({ warehouse: dir });

    // Act / Assess
    await expect(
      commitWithRetry(fresh, ORDERS_ID, appendAction([fakeDataFile(table, 'ours', 5)], 'mine'), {
        sleep: noSleep,
      }),
    ).rejects.toBeInstanceOf(NotFoundError);
  });

  it('rebases onto a concurrent commit without rewriting data files', async () => {
    // Prepare: another writer commits between our load and our swap.
    const faulty = new FaultyCatalog(catalog);
    faulty.beforeCommit = async () => {
      await commitWithRetry(catalog, ORDERS_ID, appendAction([fakeDataFile(table, 'theirs', 3)], 'other'));
    };
    const ours = fakeDataFile(table, 'ours', 5);
    const action = appendAction([ours], 'mine');
    // Act
    const result = await commitWithRetry(faulty, ORDERS_ID, action, { sleep: noSleep });
    // Assess: one conflict, the same DataFile object re-applied, both writers' files live.
    expect(result.conflicts).toBe(1);
    expect(result.attempts).toBe(2);
    expect(action.prepared).toBe(2);
    expect(await liveFiles(result.table)).toEqual([
      fakeDataFile(table, 'ours').file_path,
      fakeDataFile(table, 'theirs').file_path,
    ]);
    const snap = currentSnapshot(result.table.metadata)!;
    expect(snap.summary['total-records']).toBe('8');
    expect(result.table.metadata.snapshots).toHaveLength(2);
  });

  it('does not commit twice when an unknown outcome actually landed', async () => {
    const faulty = new FaultyCatalog(catalog);
    faulty.faults.push('unknown-after-landing');
    const result = await commitWithRetry(
      faulty,
      ORDERS_ID,
      appendAction([fakeDataFile(table, 'a')], 'b-landed'),
      {
        sleep: noSleep,
      },
    );
    expect(result.status).toBe('committed');
    expect(result.unknownOutcomes).toBe(1);
    expect(faulty.commits).toBe(1);
    const reloaded = await catalog.loadTable(ORDERS_ID);
    expect(reloaded.metadata.snapshots).toHaveLength(1);
    expect(await liveFiles(reloaded)).toHaveLength(1);
  });

  it('retries an unknown outcome that did not land', async () => {
    const faulty = new FaultyCatalog(catalog);
    faulty.faults.push('unknown-before-landing');
    const result = await commitWithRetry(
      faulty,
      ORDERS_ID,
      appendAction([fakeDataFile(table, 'a')], 'b-lost'),
      {
        sleep: noSleep,
      },
    );
    expect(result.status).toBe('committed');
    expect(result.unknownOutcomes).toBe(1);
    expect(faulty.commits).toBe(2);
    expect((await catalog.loadTable(ORDERS_ID)).metadata.snapshots).toHaveLength(1);
  });

  it('recognises a replayed batch id and commits nothing', async () => {
    await commitWithRetry(catalog, ORDERS_ID, appendAction([fakeDataFile(table, 'a')], 'same'));
    const again = appendAction([fakeDataFile(table, 'b')], 'same');
    const result = await commitWithRetry(catalog, ORDERS_ID, again);
    expect(result.status).toBe('already-committed');
    expect(again.prepared).toBe(0);
    expect((await catalog.loadTable(ORDERS_ID)).metadata.snapshots).toHaveLength(1);
  });

  /** A lock that remembers where its last holder left the table, like the DynamoDB lock's item. */
  function hintingLock(): CommitLock & { hint?: string; released: (string | undefined)[] } {
    const lock = {
      hint: undefined as string | undefined,
      released: [] as (string | undefined)[],
      async acquire(key: string): Promise<LockLease> {
        return {
          key,
          owner: 'test',
          fencingVersion: 1,
          lastCommit: lock.hint,
          release: async (current?: string) => {
            lock.released.push(current);
            lock.hint = current;
          },
        };
      },
    };
    return lock;
  }

  it("takes the caller's base without a check when the lock's last holder left the table there", async () => {
    const lock = hintingLock();
    const checks: string[] = [];
    const counting = Object.assign(Object.create(catalog) as EmbeddedCatalog, {
      isCurrent: async (t: LoadedTable) => {
        checks.push(t.metadataLocation);
        return catalog.isCurrent(t);
      },
    });
    // First commit: no hint yet, so the base is checked; the release records where it left the table.
    const first = await commitWithRetry(counting, ORDERS_ID, appendAction([fakeDataFile(table, 'a')], 'b1'), {
      lock,
      base: table,
    });
    expect(checks).toHaveLength(1);
    expect(lock.released).toEqual([first.table.metadataLocation]);
    // Second commit on the returned table: the hint matches, no check.
    const second = await commitWithRetry(
      counting,
      ORDERS_ID,
      appendAction([fakeDataFile(table, 'b')], 'b2'),
      {
        lock,
        base: first.table,
      },
    );
    expect(checks).toHaveLength(1);
    expect(second.attempts).toBe(1);
    expect(await liveFiles(second.table)).toHaveLength(2);
  });

  it('survives a wrong hint (a writer that committed without the lock): one refused swap, then a reload', async () => {
    const lock = hintingLock();
    const base = await catalog.loadTable(ORDERS_ID);
    lock.hint = base.metadataLocation;
    // Someone commits without the lock: the hint is now stale.
    await commitWithRetry(catalog, ORDERS_ID, appendAction([fakeDataFile(table, 'theirs')], 'other'));
    const result = await commitWithRetry(
      catalog,
      ORDERS_ID,
      appendAction([fakeDataFile(table, 'ours')], 'mine'),
      {
        lock,
        base,
        sleep: noSleep,
      },
    );
    expect(result.status).toBe('committed');
    expect(result.conflicts).toBe(1);
    expect(await liveFiles(result.table)).toHaveLength(2);
    expect(result.table.metadata.snapshots).toHaveLength(2);
  });

  it('releases the lock without a location when the commit fails', async () => {
    const lock = hintingLock();
    lock.hint = 'somewhere';
    const refusing = Object.assign(Object.create(catalog) as EmbeddedCatalog, {
      commitTable: async () => {
        throw new CommitFailedError('refused');
      },
    });
    await expect(
      commitWithRetry(refusing, ORDERS_ID, appendAction([fakeDataFile(table, 'x')], 'b'), {
        lock,
        sleep: noSleep,
        retry: { numRetries: 0 },
      }),
    ).rejects.toBeInstanceOf(CommitFailedError);
    expect(lock.released).toEqual([undefined]);
  });

  it('gives up with CommitFailedError after commit.retry.num-retries conflicts', async () => {
    const faulty = new FaultyCatalog(catalog);
    let n = 0;
    const interfere = async () => {
      await commitWithRetry(catalog, ORDERS_ID, appendAction([fakeDataFile(table, `x${n++}`)]));
      faulty.beforeCommit = interfere;
    };
    faulty.beforeCommit = interfere;
    await expect(
      commitWithRetry(faulty, ORDERS_ID, appendAction([fakeDataFile(table, 'mine')]), {
        sleep: noSleep,
        retry: { numRetries: 2 },
      }),
    ).rejects.toBeInstanceOf(CommitFailedError);
    expect(faulty.commits).toBe(3);
  });

  it('merges manifests once their count reaches commit.manifest.min-count-to-merge', async () => {
    await catalog.commitTable(
      ORDERS_ID,
      [],
      [{ action: 'set-properties', updates: { 'commit.manifest.min-count-to-merge': '5' } }],
    );
    let last: LoadedTable = table;
    for (let i = 0; i < 12; i++) {
      last = (await commitWithRetry(catalog, ORDERS_ID, appendAction([fakeDataFile(table, `f${i}`, 1)])))
        .table;
      const manifests = await readManifestList(last.io, currentSnapshot(last.metadata)!['manifest-list']);
      expect(manifests.length).toBeLessThan(5);
    }
    expect(await liveFiles(last)).toHaveLength(12);
    expect(currentSnapshot(last.metadata)!.summary['total-records']).toBe('12');
  });
});

describe('summary properties carried forward', () => {
  it('every snapshot carries the offsets of its ancestry, even when its own change does not set them', async () => {
    const { catalog, cleanup } = await tempWarehouse();
    try {
      const table = await catalog.createTable(ORDERS_ID, { schema: SIMPLE_SCHEMA });
      const offsets = '{"orders":{"0":"41"}}';
      await commitWithRetry(catalog, ORDERS_ID, {
        prepare: (base) =>
          prepareSnapshot(base, {
            operation: 'append',
            addedDataFiles: [fakeDataFile(table, 'a')],
            addedDeleteFiles: [],
            summary: { 'floe.committed-offsets': offsets },
          }),
      });
      // A commit that knows nothing of offsets (maintenance, another engine's kind of change).
      const result = await commitWithRetry(catalog, ORDERS_ID, appendAction([fakeDataFile(table, 'b')]));
      expect(currentSnapshot(result.table.metadata)!.summary['floe.committed-offsets']).toBe(offsets);
    } finally {
      await cleanup();
    }
  });
});

describe('embedded catalog metadata files', () => {
  it('deletes metadata that fell out of the log when asked, and still finds the table without a hint', async () => {
    const { catalog, dir, cleanup } = await tempWarehouse();
    try {
      const table = await catalog.createTable(ORDERS_ID, {
        schema: SIMPLE_SCHEMA,
        properties: {
          'write.metadata.delete-after-commit.enabled': 'true',
          'write.metadata.previous-versions-max': '2',
        },
      });
      for (let i = 0; i < 5; i++)
        await commitWithRetry(catalog, ORDERS_ID, appendAction([fakeDataFile(table, `f${i}`)]));
      const { readdir, rm } = await import('node:fs/promises');
      const metadataDir = `${dir}/sales/orders/metadata`;
      const versions = (await readdir(metadataDir)).filter((f) => f.endsWith('.metadata.json')).sort();
      expect(versions).toEqual(['v4.metadata.json', 'v5.metadata.json', 'v6.metadata.json']);
      await rm(`${metadataDir}/version-hint.text`);
      const reloaded = await catalog.loadTable(ORDERS_ID);
      expect(reloaded.metadataLocation).toMatch(/v6\.metadata\.json$/);
      expect(reloaded.metadata.snapshots).toHaveLength(5);
    } finally {
      await cleanup();
    }
  });
});
