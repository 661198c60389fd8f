/**
 * Set-up for the hostile REST suites (test/unit/catalog/rest-hostile-*.test.ts): the in-process REST
 * server, the hostile proxy in front of it, a recorder on another origin, and a client of the proxy.
 */
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { LoadedTable } from '../../functions/core/catalog/catalog.js';
import { RestCatalog, type RestCatalogOptions } from '../../functions/core/catalog/rest/rest-catalog.js';
import { ingestEvent } from '../../functions/core/ingest/ingest-event.js';
import type { CommitAction } from '../../functions/core/table/commit-loop.js';
import { eoRoute, esmEvent, type OffsetRange } from './esm-batches.js';
import { readKeysWithFloe } from './exactly-once-checks.js';
import { HostileRestServer, startRecorder } from './hostile-rest-server.js';
import { RestCatalogServer, type RestCatalogServerOptions } from './rest-catalog-server.js';

export const ID = { namespace: ['db'], name: 'events' };
export const OTHER = { namespace: ['db'], name: 'other' };
export const FAST_RETRY = { numRetries: 2, minWaitMs: 1, maxWaitMs: 2 };

const cleanups: (() => Promise<void>)[] = [];

/** Closes every server `setupHostile` started (call it from `afterEach`). */
export async function closeHostile(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}

export async function setupHostile(
  serverOptions: Omit<RestCatalogServerOptions, 'warehouse'> = {},
  clientOptions: Partial<RestCatalogOptions> = {},
) {
  const warehouse = await fs.mkdtemp(path.join(os.tmpdir(), 'floe-hostile-'));
  const upstream = await RestCatalogServer.start({ warehouse, ...serverOptions });
  const hostile = await HostileRestServer.start(upstream.uri);
  const recorder = await startRecorder();
  cleanups.push(async () => {
    await hostile.close();
    await recorder.close();
    await upstream.close();
    await fs.rm(warehouse, { recursive: true, force: true });
  });
  const catalog = new RestCatalog({ uri: hostile.uri, ...clientOptions });
  return { upstream, hostile, recorder, catalog };
}

const FAST_RETRY_PROPERTIES = {
  'commit.retry.num-retries': '2',
  'commit.retry.min-wait-ms': '1',
  'commit.retry.max-wait-ms': '2',
};

/** Ingests a batch into `ID`: whether floe reported it committed, or the error it failed with. */
export async function ingestBatch(catalog: RestCatalog, ranges: OffsetRange[]) {
  try {
    const routes = [eoRoute(ID, FAST_RETRY_PROPERTIES)];
    const report = await ingestEvent({ catalog, routes }, esmEvent(ranges));
    return { committed: report.tables[0].status === 'committed', error: undefined };
  } catch (error) {
    return { committed: false, error };
  }
}

/** The messages of an error and its causes, joined: the loop's "gave up" names the last failure as its cause. */
export function errorChain(error: unknown): string {
  const out: string[] = [];
  for (let e = error; e instanceof Error; e = e.cause) out.push(e.message);
  return out.join(' <- ');
}

/** `partition:offset` of every row in `ID`, read back. */
export async function keysIn(catalog: RestCatalog): Promise<string[]> {
  return readKeysWithFloe(await catalog.loadTable(ID));
}

/** A commit through the one commit loop of a hand-made change. */
export function action(prepare: (base: LoadedTable) => ReturnType<CommitAction['prepare']>): CommitAction {
  return { prepare: (base) => prepare(base) };
}
