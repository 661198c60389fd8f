/**
 * Section 4: planning cost over time. Small batches committed one after another to a local embedded
 * table through the real ingest path; at each checkpoint a point query (`order_id = <one order>`) is
 * planned and the manifests and bytes it read are recorded. Merge-append should keep them flat while
 * the commit count grows; the metadata.json (every snapshot, unexpired) grows with it, and so does
 * the cost of each commit.
 */
import { stat } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EmbeddedCatalog } from '../../functions/core/catalog/embedded-catalog.js';
import { ingestEvent } from '../../functions/core/ingest/ingest-event.js';
import { parseRoutes } from '../../functions/core/routing/routes.js';
import { parseExpression } from '../../functions/core/scan/parse-expression.js';
import { planScan } from '../../functions/core/scan/plan-scan.js';
import { makeOrderMessages, makeOrdersEvent, ORDERS_TOPIC, readOrdersSchema } from './orders-batch.js';
import { median } from './stats.js';

export interface PlanningSettings {
  checkpoints: number[];
  recordsPerCommit: number;
}

export interface PlanningRow {
  commits: number;
  manifests_in_snapshot: number;
  manifests_read: number;
  bytes_read: number;
  files_in_table: number;
  files_planned: number;
  plan_ms: number;
  metadata_json_bytes: number;
  /** Median wall time of the last commits before this checkpoint (one small batch each). */
  commit_median_ms: number;
}

const FIRST_ORDER_ID = 50_000_000;

export async function runPlanningCost(
  settings: PlanningSettings,
  progress: (line: string) => void,
): Promise<PlanningRow[]> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-bench-planning-'));
  try {
    const catalog = new EmbeddedCatalog({ warehouse: dir });
    const routes = parseRoutes([
      { table: 'bench.planning', topics: [ORDERS_TOPIC], schema: readOrdersSchema() },
    ]);
    const rows: PlanningRow[] = [];
    let commits = 0;
    let window: number[] = [];
    for (const checkpoint of [...settings.checkpoints].sort((a, b) => a - b)) {
      while (commits < checkpoint) {
        const messages = makeOrderMessages({
          records: settings.recordsPerCommit,
          partitions: 1,
          seed: commits,
          firstOrderId: FIRST_ORDER_ID + commits * settings.recordsPerCommit,
        });
        const event = makeOrdersEvent(messages, commits * settings.recordsPerCommit);
        const t0 = performance.now();
        await ingestEvent({ catalog, routes }, event);
        window.push(performance.now() - t0);
        commits++;
        if (commits % 100 === 0) progress(`planning: ${commits} commits`);
      }
      // One order of the middle commit: the file stats should leave a single file to read.
      const target = FIRST_ORDER_ID + Math.floor(commits / 2) * settings.recordsPerCommit + 1;
      const table = await catalog.loadTable(routes[0].table);
      const t0 = performance.now();
      const plan = await planScan(table, { filter: parseExpression(`order_id = ${target}`) });
      const planMs = performance.now() - t0;
      rows.push({
        commits,
        manifests_in_snapshot: plan.funnel.manifestsTotal,
        manifests_read: plan.manifestsRead,
        bytes_read: plan.bytesRead,
        files_in_table: plan.funnel.filesInTable,
        files_planned: plan.tasks.length,
        plan_ms: planMs,
        metadata_json_bytes: (await stat(fileURLToPath(toFileUrl(table.metadataLocation)))).size,
        commit_median_ms: median(window.slice(-20)),
      });
      window = [];
    }
    return rows;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function toFileUrl(location: string): URL {
  return location.startsWith('file:') ? new URL(location) : new URL(`file://${location}`);
}
