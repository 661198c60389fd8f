/**
 * The ingest of one batch split into phases, by timing (from the outside) the same functions the
 * handler calls, one after the other, on the same batch:
 *
 *   runtime parse   JSON.parse of the event text (the Lambda runtime does it before the handler)
 *   decode          decodeEsmEvent (base64 key/value, headers)
 *   parse           decodeJsonRecords (one JSON parse per value, UTF-8 check, exact long numbers):
 *                   0 when every value's JSON text fits the schema (gatherJsonBatch takes the batch)
 *   map             JSON text → typed Iceberg values + `_kafka` lineage, gathered into columns
 *                   (gatherJsonBatch, as the handler does); when a record needs the general path,
 *                   also mapBatch (schema check, evolution, conversion) on the parsed values
 *   arrow build     the gathered columns (or rows) → Arrow typed arrays + column bounds
 *   parquet encode  encodeBatch: floe's Parquet writer (ZSTD)
 *   file + stats    writeRows minus the two above: footer read-back, bounds encoding, the file write
 *   commit          commitWithRetry + prepareSnapshot (manifest, manifest list, metadata.json, swap)
 *
 * The handler's own total minus the sum of these is "other" (table loads, offset checks, batch id).
 */
import { EmbeddedCatalog } from '../../functions/core/catalog/embedded-catalog.js';
import { toArrowSchema } from '../../functions/core/data/arrow/arrow-schema.js';
import { buildRecordBatch } from '../../functions/core/data/arrow/build-record-batch.js';
import { encodeBatch } from '../../functions/core/data/parquet/write/encode-parquet.js';
import { decodeEsmEvent } from '../../functions/core/records/esm-event.js';
import { batchIdOf } from '../../functions/core/ingest/ingest-event.js';
import { loadOrCreateTable, offsetsOf } from '../../functions/core/ingest/ingest-table.js';
import { decodeJsonRecords } from '../../functions/core/mapping/decoded-record.js';
import { gatherJsonBatch } from '../../functions/core/mapping/fast/gather-json.js';
import { mapBatch } from '../../functions/core/mapping/map-batch.js';
import { DEFAULT_MAPPING } from '../../functions/core/mapping/mapping-config.js';
import { parseRoutes, type TableRoute } from '../../functions/core/routing/routes.js';
import { commitWithRetry } from '../../functions/core/table/commit-loop.js';
import { prepareSnapshot } from '../../functions/core/table/snapshot-producer.js';
import {
  BATCH_ID_KEY,
  encodeOffsets,
  mergeOffsets,
  OFFSETS_KEY,
  readCommittedOffsets,
} from '../../functions/core/table/source-offsets.js';
import { writeRows } from '../../functions/core/table/write-rows.js';
import { type OrderMessage, ORDERS_TOPIC, ordersEventText, readOrdersSchema } from './orders-batch.js';
import { median } from './stats.js';

export const PHASES = [
  'runtime_parse',
  'decode',
  'parse',
  'map',
  'arrow_build',
  'parquet_encode',
  'file_and_stats',
  'commit',
] as const;
export type Phase = (typeof PHASES)[number];

export interface PhaseTimes {
  wall: Record<Phase, number>;
  /** Process CPU time per phase: steadier than wall time when other work shares the CPUs. */
  cpu: Record<Phase, number>;
}

/**
 * Runs the phases of one batch, one after the other, on a table of its own in `warehouse`; each call is
 * a new batch (offsets continue). The first call warms up (JIT, WASM instantiation): discard it.
 */
export class PhaseRunner {
  private readonly catalog: EmbeddedCatalog;
  private readonly route: TableRoute;
  private run = 0;

  constructor(
    warehouse: string,
    private readonly messages: OrderMessage[],
  ) {
    this.catalog = new EmbeddedCatalog({ warehouse });
    [this.route] = parseRoutes([
      { table: 'phases.orders', topics: [ORDERS_TOPIC], schema: readOrdersSchema() },
    ]);
  }

  async measure(): Promise<PhaseTimes> {
    const { catalog, route, messages } = this;
    const run = this.run++;
    const perPartition = Math.max(...messages.map((m) => m.index)) + 1;
    const eventJson = ordersEventText(messages, run * perPartition);
    const table = await loadOrCreateTable(catalog, route);
    const wall = {} as Record<Phase, number>;
    const cpu = {} as Record<Phase, number>;
    // No forced GC: the phases run warm, as the handler does in a Lambda (earlier garbage included).
    let t = performance.now();
    let c = process.cpuUsage();
    for (const phase of PHASES) wall[phase] = cpu[phase] = 0;
    const lap = (phase: Phase) => {
      const now = performance.now();
      const used = process.cpuUsage(c);
      wall[phase] += now - t;
      cpu[phase] += (used.user + used.system) / 1000;
      t = now;
      c = process.cpuUsage();
    };

    const event = JSON.parse(eventJson);
    lap('runtime_parse');
    const decoded = decodeEsmEvent(event);
    lap('decode');
    // As the handler: JSON text that fits the schema goes straight into columns (no parse phase);
    // otherwise every value is parsed and mapped by the general path.
    const mapOptions = { mapping: DEFAULT_MAPPING, metadata: table.metadata, columnar: true };
    let mapped = gatherJsonBatch(decoded.records, mapOptions);
    lap('map');
    if (!mapped) {
      const parsed = decodeJsonRecords(decoded.records);
      lap('parse');
      mapped = mapBatch(parsed.decoded, mapOptions);
      lap('map');
    }
    // The first run evolves the table (the values carry fields it lacks); later ones fit it.
    const rec = mapped.reconciliation;
    const schema = rec.schema;
    const arrowSchema = toArrowSchema(schema);
    // As the handler: rows gathered as columns when every record fits, else row objects.
    const rows = mapped.gathered ?? mapped.rows;
    const batch = mapped.gathered
      ? mapped.gathered.buildBatch(schema, arrowSchema, 0, rows.length, new Map())
      : buildRecordBatch(schema, arrowSchema, mapped.rows, 0, rows.length, new Map());
    lap('arrow_build');
    encodeBatch(schema, batch, { codec: 'zstd', rowGroupRows: batch.numRows, keyValueMetadata: new Map() });
    lap('parquet_encode');
    const files = await writeRows(table, rows, { filePrefix: `phases-${run}`, schema });
    lap('file_and_stats');
    // writeRows builds and encodes again: what is left once those are taken out is its own work.
    wall.file_and_stats = Math.max(0, wall.file_and_stats - wall.arrow_build - wall.parquet_encode);
    cpu.file_and_stats = Math.max(0, cpu.file_and_stats - cpu.arrow_build - cpu.parquet_encode);
    const batchId = batchIdOf(decoded.records);
    const batchOffsets = offsetsOf(decoded.records);
    await commitWithRetry(catalog, route.table, {
      batchId,
      prepare: (base) =>
        prepareSnapshot(base, {
          operation: 'append',
          preUpdates: rec.updates,
          preRequirements: rec.requirements,
          addedDataFiles: files,
          addedDeleteFiles: [],
          summary: {
            [BATCH_ID_KEY]: batchId,
            [OFFSETS_KEY]: encodeOffsets(mergeOffsets(readCommittedOffsets(base.metadata), batchOffsets)),
          },
        }),
    });
    lap('commit');
    return { wall, cpu };
  }
}

/** Medians per phase of several runs. */
export function medianPhases(runs: Record<Phase, number>[]): Record<Phase, number> {
  return Object.fromEntries(PHASES.map((p) => [p, median(runs.map((r) => r[p]))])) as Record<Phase, number>;
}
