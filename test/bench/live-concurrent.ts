/**
 * Part of section "live": `floe serve --live` under many concurrent loads of one table with a tail,
 * as a client fleet (or one engine's planner threads) would send them. A serve process of its own,
 * started on the table and given nothing before the loads, so its peak RSS (VmHWM from
 * /proc/<pid>/status) is the peak of start-up plus the concurrent loads; the RSS right before them
 * beside it. Every answer is checked: 200, one metadata location, the live snapshot adding the tail.
 */
import { readFileSync } from 'node:fs';

/** A /proc/<pid>/status field in MiB (kB there); NaN where there is no /proc. */
function statusMiB(pid: number | undefined, field: 'VmRSS' | 'VmHWM'): number {
  if (pid === undefined) return Number.NaN;
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

export interface ConcurrentLoads {
  loads: number;
  /** From the first request sent to the last answer read. */
  wall_ms: number;
  rss_before_mb: number;
  peak_rss_mb: number;
}

interface ServedProcess {
  uri: string;
  floe: { child: { pid?: number } };
  stop(): Promise<void>;
}

/**
 * Starts a server with `start`, sends `loads` load-table requests at once, and checks every answer.
 * @throws Error when an answer is not 200, the answers differ, or the live snapshot does not add `tailRecords`
 */
export async function measureConcurrentLoads(
  start: () => Promise<ServedProcess>,
  loads: number,
  tailRecords: number,
): Promise<ConcurrentLoads> {
  const served = await start();
  try {
    const pid = served.floe.child.pid;
    const rssBefore = statusMiB(pid, 'VmRSS');
    const url = `${served.uri}/v1/namespaces/app/tables/events`;
    const t0 = performance.now();
    const answers = await Promise.all(
      Array.from({ length: loads }, async () => {
        const response = await fetch(url);
        return { status: response.status, text: await response.text() };
      }),
    );
    const wall = performance.now() - t0;
    const peak = statusMiB(pid, 'VmHWM');
    const failed = answers.filter((a) => a.status !== 200);
    if (failed.length > 0)
      throw new Error(
        `${failed.length} of ${loads} loads failed (${wall.toFixed(0)} ms, peak RSS ${peak.toFixed(0)} MiB), e.g. ${failed[0]!.status} ${failed[0]!.text.slice(0, 300)}`,
      );
    const locations = new Set(
      answers.map((a) => (JSON.parse(a.text) as { 'metadata-location': string })['metadata-location']),
    );
    if (locations.size !== 1) throw new Error(`${loads} loads answered ${locations.size} metadata locations`);
    const metadata = (
      JSON.parse(answers[0]!.text) as {
        metadata: {
          'current-snapshot-id': unknown;
          snapshots: { 'snapshot-id': unknown; summary: Record<string, string> }[];
        };
      }
    ).metadata;
    const live = metadata.snapshots.find(
      (s) => String(s['snapshot-id']) === String(metadata['current-snapshot-id']),
    );
    if (live?.summary['added-records'] !== String(tailRecords))
      throw new Error(`the live snapshot adds ${live?.summary['added-records']} records, not ${tailRecords}`);
    return { loads, wall_ms: wall, rss_before_mb: rssBefore, peak_rss_mb: peak };
  } finally {
    await served.stop();
  }
}
