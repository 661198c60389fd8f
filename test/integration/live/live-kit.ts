/**
 * Shared by the live-view integration tests: `floe run` to commit what Kafka holds, `floe scan --live`
 * as a child process, `floe serve` started and read with floe's own REST catalog client, and the tail
 * files of the served live snapshot.
 */
import { RestCatalog } from '../../../functions/core/catalog/rest/rest-catalog.js';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import type { Row } from '../../../functions/core/spec/types.js';
import { liveEntries } from '../../support/readers.js';
import { exitOf, type FloeProcess, spawnFloe } from '../kafka/kafka-kit.js';

export const TABLE = 'app.events';

/** Commits everything the topic holds (`floe run … --exit-when-idle`); returns its output. */
export async function commitAll(
  bootstrap: string,
  topic: string,
  warehouse: string,
  group: string,
  routeFlags: string[],
): Promise<string> {
  const floe = spawnFloe([
    'run',
    '--bootstrap-servers',
    bootstrap,
    '--topics',
    topic,
    '--group',
    group,
    '--warehouse',
    warehouse,
    '--table',
    TABLE,
    ...routeFlags,
    '--starting-position',
    'trim-horizon',
    '--batching-window-ms',
    '100',
    // The mock cluster holds a member joining a group whose earlier members left for the session timeout
    // less a second before it assigns partitions: 30 s by default, for every second run of one group.
    '--session-timeout-ms',
    '6000',
    '--exit-when-idle',
    '1500',
  ]);
  const { code } = await exitOf(floe);
  if (code !== 0) throw new Error(`floe run exited with ${code}:\n${floe.output()}`);
  return floe.output();
}

/** `floe scan --live --json`: rows (NDJSON on stdout) and the funnel (stderr). */
export async function scanLive(
  bootstrap: string,
  warehouse: string,
  extra: string[] = [],
): Promise<{ rows: Record<string, unknown>[]; output: string }> {
  const floe = spawnFloe([
    'scan',
    '--warehouse',
    warehouse,
    '--table',
    TABLE,
    '--live',
    '--bootstrap-servers',
    bootstrap,
    '--json',
    ...extra,
  ]);
  let stdout = '';
  floe.child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  const { code } = await exitOf(floe);
  if (code !== 0) throw new Error(`floe scan --live exited with ${code}:\n${floe.output()}`);
  const rows = stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { rows, output: floe.output() };
}

export interface Served {
  floe: FloeProcess;
  uri: string;
  stop(): Promise<void>;
}

/** `floe serve --port 0 …`, resolved once it prints where it listens. */
export async function startServe(warehouse: string, extra: string[]): Promise<Served> {
  const floe = spawnFloe(['serve', '--warehouse', warehouse, '--port', '0', ...extra]);
  await floe.waitFor(/at http:\/\/127\.0\.0\.1:\d+/);
  const port = /at http:\/\/127\.0\.0\.1:(\d+)/.exec(floe.output())![1];
  return {
    floe,
    uri: `http://127.0.0.1:${port}`,
    stop: async () => {
      floe.child.kill('SIGTERM');
      await exitOf(floe);
    },
  };
}

/** The served table through floe's own REST client, read by floe's scan. */
export async function readServed(uri: string): Promise<{ table: LoadedTable; rows: Row[] }> {
  const catalog = new RestCatalog({ uri });
  const table = await catalog.loadTable({ namespace: ['app'], name: 'events' });
  const rows = await readScanRows(table, await planScan(table));
  return { table, rows };
}

/** The live snapshot's files in the live cache (data and deletes). */
export async function tailFiles(table: LoadedTable): Promise<{ path: string; content: number }[]> {
  return (await liveEntries(table))
    .filter((e) => e.data_file.file_path.includes('/floe-live/'))
    .map((e) => ({ path: e.data_file.file_path.replace(/^file:\/\//, ''), content: e.data_file.content }));
}

export const idsOf = (rows: readonly { id?: unknown }[]) =>
  rows.map((r) => Number(r.id)).sort((a, b) => a - b);
