/**
 * Section "scaling": ingest (event text → `JSON.parse` → ingestEvent → committed snapshot on a local
 * embedded catalog; the handler minus its Lambda glue) of orders batches of 1k, 10k and 50k records,
 * of 100 wide columns and of 3 tiny columns: records/s and µs per record on CPU and wall time. Then the
 * cost per GB ingested at 1k- and 10k-record batches from the measured CPU time and request counts,
 * beside Amazon Data Firehose's published price per GB for Iceberg destinations.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedCatalog } from '../../functions/core/catalog/embedded-catalog.js';
import { ingestEvent } from '../../functions/core/ingest/ingest-event.js';
import { parseRoutes } from '../../functions/core/routing/routes.js';
import type { Schema } from '../../functions/core/spec/types.js';
import {
  makeOrderMessages,
  makeOrdersEvent,
  type OrderMessage,
  ORDERS_TOPIC,
  readOrdersSchema,
} from './orders-batch.js';
import { median, timed } from './stats.js';

/**
 * Prices, us-east-1, read 2026-12-01 (through the session's search tool, from stored copies of
 * aws.amazon.com/lambda/pricing and third-party pages quoting the AWS price lists; check them before
 * quoting a figure): Lambda arm64 duration, first 7.5 billion GB-s a month; Lambda requests; S3 Standard
 * PUT/COPY/POST/LIST requests (S3 Tables charges the same per request); Firehose to Apache Iceberg
 * tables, first 250 TB a month, per GB ingested.
 */
export const PRICES = {
  read_on: '2026-12-01',
  // Per million units, so the JSON's rounding keeps them.
  lambda_arm64_usd_per_million_gb_s: 13.3334,
  lambda_usd_per_million_requests: 0.2,
  s3_put_usd_per_million_requests: 5,
  firehose_iceberg_usd_per_gb: 0.075,
} as const;

/** A 1,769 MB function has one full vCPU; below that Lambda scales CPU with memory, so a CPU-bound batch
 * costs the same GB-seconds at any smaller size: GB-s = CPU seconds × 1.769. */
const FULL_VCPU_GB = 1.769;

export interface ScalingRow {
  workload: string;
  records: number;
  columns: number;
  wall_ms: number;
  cpu_ms: number;
  records_per_s_cpu: number;
  us_per_record_cpu: number;
  us_per_record_wall: number;
  /** Key + value bytes of the batch (what Firehose bills as ingested). */
  ingested_bytes: number;
}

export interface CostRow {
  batch_records: number;
  cpu_ms: number;
  requests_per_batch: number;
  /** USD per million batches (the JSON rounds to 3 decimals). */
  usd_per_million_batches: number;
  usd_per_gb: number;
  firehose_usd_per_gb: number;
}

export interface ScalingFigures {
  rows: ScalingRow[];
  cost: CostRow[];
  prices: typeof PRICES;
}

interface Workload {
  name: string;
  schema: Schema;
  messages: (records: number, seed: number) => OrderMessage[];
  records: number;
}

function columnsSchema(n: number, kinds: ('long' | 'double' | 'string')[]): Schema {
  return {
    type: 'struct',
    'schema-id': 0,
    fields: Array.from({ length: n }, (_, i) => ({
      id: i + 1,
      name: `c${i}`,
      required: false,
      type: kinds[i % kinds.length],
    })),
  };
}

function syntheticMessages(columns: number, kinds: string[]) {
  return (records: number, seed: number): OrderMessage[] =>
    Array.from({ length: records }, (_, i) => {
      const value: Record<string, unknown> = {};
      for (let c = 0; c < columns; c++) {
        const k = kinds[c % kinds.length];
        value[`c${c}`] =
          k === 'long' ? seed * records + i : k === 'double' ? (i * 7 + c) / 4 : `v${(i + c) % 50}`;
      }
      return {
        partition: i % 3,
        index: Math.floor(i / 3),
        timestampMs: Date.UTC(2026, 10, 20) + i,
        key: String(i),
        value: JSON.stringify(value),
        headers: [],
      };
    });
}

export async function runScaling(
  settings: { sizes: number[]; repeats: number; commitRequests: number },
  progress: (line: string) => void,
): Promise<ScalingFigures> {
  const orders = readOrdersSchema();
  const workloads: Workload[] = [
    ...settings.sizes.map((records) => ({
      name: `orders ${records.toLocaleString('en-US')}`,
      schema: orders,
      messages: (n: number, seed: number) => makeOrderMessages({ records: n, partitions: 6, seed }),
      records,
    })),
    {
      name: '100 wide columns',
      schema: columnsSchema(100, ['long', 'double', 'string']),
      messages: syntheticMessages(100, ['long', 'double', 'string']),
      records: 2_000,
    },
    {
      name: '3 tiny columns',
      schema: columnsSchema(3, ['long', 'double', 'string']),
      messages: syntheticMessages(3, ['long', 'double', 'string']),
      records: 10_000,
    },
  ];
  const rows: ScalingRow[] = [];
  for (const w of workloads) rows.push(await measure(w, settings.repeats, progress));
  const cost = rows
    .filter((r) => r.workload === 'orders 1,000' || r.workload === 'orders 10,000')
    .map((r) => costOf(r, settings.commitRequests));
  return { rows, cost, prices: PRICES };
}

async function measure(w: Workload, repeats: number, progress: (line: string) => void): Promise<ScalingRow> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-bench-scaling-'));
  try {
    const catalog = new EmbeddedCatalog({ warehouse: dir });
    const routes = parseRoutes([{ table: 'bench.scaling', topics: [ORDERS_TOPIC], schema: w.schema }]);
    const wall: number[] = [];
    const cpu: number[] = [];
    let bytes = 0;
    let offset = 0;
    for (let run = 0; run <= repeats; run++) {
      const messages = w.messages(w.records, run);
      bytes = messages.reduce((s, m) => s + Buffer.byteLength(m.key) + Buffer.byteLength(m.value), 0);
      const text = JSON.stringify(makeOrdersEvent(messages, offset));
      offset += Math.max(...messages.map((m) => m.index)) + 1;
      // The event's objects above were built in this process just now, as no Lambda's event is (its runtime
      // gets the text from the Runtime API): their garbage is collected before the timed call, not in it.
      const t = await timed(() => ingestEvent({ catalog, routes }, JSON.parse(text)), { youngGcFirst: true });
      if (run === 0) continue; // warm-up: the table is created and its schema evolves once
      wall.push(t.wallMs);
      cpu.push(t.cpuMs);
    }
    const cpuMs = median(cpu);
    const wallMs = median(wall);
    progress(`scaling: ${w.name}: ${cpuMs.toFixed(0)} ms CPU`);
    return {
      workload: w.name,
      records: w.records,
      columns: w.schema.fields.length,
      wall_ms: wallMs,
      cpu_ms: cpuMs,
      records_per_s_cpu: w.records / (cpuMs / 1000),
      us_per_record_cpu: (cpuMs * 1000) / w.records,
      us_per_record_wall: (wallMs * 1000) / w.records,
      ingested_bytes: bytes,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** One Lambda invocation per batch, billed on its CPU time at one vCPU, plus the commit's requests
 * (every one priced as a PUT: an upper bound, GETs cost 12× less). */
function costOf(r: ScalingRow, commitRequests: number): CostRow {
  const gbSeconds = (r.cpu_ms / 1000) * FULL_VCPU_GB;
  const usd =
    (gbSeconds * PRICES.lambda_arm64_usd_per_million_gb_s +
      PRICES.lambda_usd_per_million_requests +
      commitRequests * PRICES.s3_put_usd_per_million_requests) /
    1e6;
  return {
    batch_records: r.records,
    cpu_ms: r.cpu_ms,
    requests_per_batch: commitRequests,
    usd_per_million_batches: usd * 1e6,
    usd_per_gb: usd / (r.ingested_bytes / 1e9),
    firehose_usd_per_gb: PRICES.firehose_iceberg_usd_per_gb,
  };
}
