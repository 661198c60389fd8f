/**
 * The real ingest Lambda handler on an embedded catalog in a temporary local warehouse, configured
 * through the environment exactly as the CDK construct configures it (FLOE_CATALOG, FLOE_WAREHOUSE,
 * FLOE_TABLES). The handler reads its configuration once per process (a cold start), so one process has
 * one warehouse: every section that drives the handler shares it, each invocation with fresh offsets.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IngestSummary } from '../../functions/handlers/ingest-summary.js';
import type { TableIdentifier } from '../../functions/core/spec/types.js';
import { type OrderMessage, ORDERS_TOPIC, ordersEventText, readOrdersSchema } from './orders-batch.js';

export const BENCH_TABLE: TableIdentifier = { namespace: ['bench'], name: 'orders' };

export interface HandlerHarness {
  warehouse: string;
  /** Runs the handler on an event delivered as JSON text (what the Lambda runtime receives). */
  invoke(eventJson: string): Promise<IngestSummary>;
  /** An event for `messages` at offsets no earlier invocation used, as the runtime receives it (ordersEventText). */
  nextEventJson(messages: OrderMessage[]): string;
  cleanup(): Promise<void>;
}

let harness: Promise<HandlerHarness> | undefined;

/** The process's one handler harness (created on first use). */
export function getHandlerHarness(): Promise<HandlerHarness> {
  harness ??= createHarness();
  return harness;
}

async function createHarness(): Promise<HandlerHarness> {
  const warehouse = await mkdtemp(join(tmpdir(), 'floe-bench-'));
  process.env.FLOE_CATALOG = 'embedded';
  process.env.FLOE_WAREHOUSE = warehouse;
  process.env.FLOE_TABLES = JSON.stringify([
    { table: 'bench.orders', topics: [ORDERS_TOPIC], schema: readOrdersSchema() },
  ]);
  // Per-batch log lines and EMF metrics would go to stdout (where --json goes); their cost is a few
  // small writes per batch, not per record.
  process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  const { ingestHandler } = await import('../../functions/handlers/ingest.js');
  const context = { getRemainingTimeInMillis: () => 900_000 };
  let nextOffset = 0;
  return {
    warehouse,
    invoke: (eventJson) => ingestHandler(JSON.parse(eventJson), context),
    nextEventJson(messages) {
      const perPartition = Math.max(...messages.map((m) => m.index)) + 1;
      const json = ordersEventText(messages, nextOffset);
      nextOffset += perPartition;
      return json;
    },
    cleanup: () => rm(warehouse, { recursive: true, force: true }),
  };
}
