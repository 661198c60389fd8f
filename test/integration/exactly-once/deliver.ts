/** How the exactly-once tests deliver an ESM batch: one writer process, its own catalog and lock objects. */
import { ingestEvent, type IngestEventReport } from '../../../functions/core/ingest/ingest-event.js';
import type { TableIdentifier } from '../../../functions/core/spec/types.js';
import type { CommitEvent } from '../../../functions/core/table/commit-loop.js';
import { eoRoute } from '../../support/esm-batches.js';
import type { MotoLake } from '../../support/moto-lakes.js';
import type { WriterProcess } from '../../support/writer-process.js';

export interface Delivery {
  /** Table properties for a table the delivery creates. */
  properties?: Record<string, string>;
  /** Collects the commit loop's events. */
  events?: CommitEvent[];
}

/** Delivers `event` as one Lambda invocation would (through `process` when given). */
export function deliver(
  lake: MotoLake,
  id: TableIdentifier,
  event: unknown,
  process?: WriterProcess,
  delivery: Delivery = {},
): Promise<IngestEventReport> {
  return ingestEvent(
    {
      catalog: lake.catalog(process),
      routes: [eoRoute(id, delivery.properties)],
      lock: lake.lock(process),
      onCommitEvent: (_table, e) => delivery.events?.push(e),
    },
    event,
  );
}

/** Settles a delivery without throwing: the report, or the error it failed with. */
export async function settle(
  delivery: Promise<IngestEventReport>,
): Promise<{ report?: IngestEventReport; error?: unknown }> {
  try {
    return { report: await delivery };
  } catch (error) {
    return { error };
  }
}
