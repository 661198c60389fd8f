/**
 * Section 1: ingest throughput. The 10,000-record (≈ 6 MB) MSK batch through the real handler into a
 * local embedded warehouse, against DuckDB (one thread) turning the same records from NDJSON into ZSTD
 * Parquet (the issue's anchor), and DuckDB turning the handler's own input, the ESM event, into the
 * same Parquet (the same job but the Iceberg commit). Runs alternate (phases, floe, DuckDB, DuckDB on
 * the event) so a change in the machine's load hits all alike; medians.
 * floe's headline figure is a warm process's next batch, as a Lambda runs them: the previous batch's
 * garbage is still on the heap (left by the phases run, the same pipeline) and no GC is forced.
 *
 * DuckDB's runs start after a regular full GC (stats.ts collectGarbage). floe after a memory-reducing
 * GC — what V8's memory reducer runs after ~8 s of idling, and what plain `gc()` runs — is measured in
 * a loop of its own after the warm runs: that GC frees the hidden classes (maps) no live object uses,
 * and V8 deoptimises every function whose optimised code embeds one ("reason: weak objects" in
 * `--trace-deopt`, ~130 of floe's functions). The first batch after it costs ~4.5× a warm one, the next
 * two ~1.4× and ~1.15×. Until 2026-12-01 every forced GC here was that one, interleaved with the warm
 * runs, so each warm run was the second batch after such a storm. A busy process's own major GCs keep
 * unused maps for two more GCs, and the code stays optimised.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDuckdbAnchor } from './duckdb-anchor.js';
import { getHandlerHarness } from './floe-handler.js';
import { medianPhases, type Phase, PhaseRunner, type PhaseTimes } from './ingest-phases.js';
import { makeOrderMessages, makeOrdersNdjson } from './orders-batch.js';
import { GcRecorder, median, perSecond, timed } from './stats.js';

export interface IngestSettings {
  records: number;
  partitions: number;
  seed: number;
  warmups: number;
  repeats: number;
}

export interface EngineFigures {
  /** Median wall time of one batch. */
  wall_ms: number;
  /** Median process CPU time of one batch. */
  cpu_ms: number;
  records_per_s: number;
  /** Over the records' JSON values (the same bytes for both engines). */
  value_mb_per_s: number;
  /** Over the engine's own input: the ESM event text for floe, the NDJSON file for DuckDB. */
  input_mb_per_s: number;
  parquet_bytes: number;
  runs_wall_ms: number[];
}

export interface IngestFigures {
  records: number;
  event_bytes: number;
  ndjson_bytes: number;
  value_bytes: number;
  floe: EngineFigures;
  duckdb: EngineFigures;
  /** DuckDB on floe's own input: the ESM event text (JSON, base64, header bytes, lineage) → Parquet. */
  duckdb_event: EngineFigures;
  /** floe after a forced (memory-reducing) full GC: the first batch after V8 dropped unused maps and the code that embeds them (~4.5× the warm figure). */
  floe_after_full_gc: EngineFigures;
  floe_records_per_s: number;
  duckdb_records_per_s: number;
  /** floe records/s ÷ DuckDB records/s, wall time (≥ 1.0 is the target); floe warm, as a Lambda's next invocation. */
  ratio: number;
  /** The same with floe after a forced full GC. */
  ratio_after_full_gc: number;
  /** The same ratio on CPU time: steadier on a loaded machine. */
  ratio_cpu: number;
  /** The name for ratio_cpu: DuckDB (NDJSON) CPU ÷ floe CPU (target ≥ 0.5). */
  cpu_ratio: number;
  /** The name for ratio_same_input_cpu: DuckDB on the ESM event, CPU ÷ floe CPU (target ≥ 1.0). */
  cpu_ratio_same_input: number;
  /**
   * GC pause time during the warm handler runs ÷ their wall time (median over runs; PerformanceObserver
   * 'gc' entries, see GcRecorder). Both are wall times: on a loaded machine a pause stretched by
   * descheduling is stretched like the run, whereas pause ÷ CPU time would overstate GC. Helper-thread
   * work outside the pauses is not counted. Target < 0.10.
   */
  gc_share: number;
  /** The CPU ratio without the Lambda runtime's JSON.parse of the event (which no handler code can avoid). */
  ratio_without_runtime_parse: number;
  /** floe ÷ DuckDB records/s when both start from the ESM event (wall). */
  ratio_same_input: number;
  /** The same on CPU time. */
  ratio_same_input_cpu: number;
  /** Median wall time per phase (measured in the same loop as the handler and DuckDB). */
  phases_ms: Record<Phase, number>;
  /** Median CPU time per phase. */
  phases_cpu_ms: Record<Phase, number>;
  /** Handler CPU median minus the phases' CPU (table loads, offset checks, batch id, logging). */
  other_cpu_ms: number;
}

const MB = 1_000_000;

function figures(
  walls: number[],
  cpus: number[],
  records: number,
  valueBytes: number,
  inputBytes: number,
  parquetBytes: number,
): EngineFigures {
  const wall = median(walls);
  return {
    wall_ms: wall,
    cpu_ms: median(cpus),
    records_per_s: perSecond(records, wall),
    value_mb_per_s: perSecond(valueBytes / MB, wall),
    input_mb_per_s: perSecond(inputBytes / MB, wall),
    parquet_bytes: parquetBytes,
    runs_wall_ms: walls,
  };
}

export async function runIngestThroughput(
  settings: IngestSettings,
  progress: (line: string) => void,
): Promise<IngestFigures> {
  const messages = makeOrderMessages({
    records: settings.records,
    partitions: settings.partitions,
    seed: settings.seed,
  });
  const valueBytes = messages.reduce((s, m) => s + Buffer.byteLength(m.value), 0);
  const ndjson = makeOrdersNdjson(messages, 0);
  const harness = await getHandlerHarness();
  const dir = await mkdtemp(join(tmpdir(), 'floe-bench-duckdb-'));
  // DuckDB reads one event (floe's events differ only in their offsets: the same bytes to parse).
  const duck = await openDuckdbAnchor(dir, ndjson, harness.nextEventJson(messages));
  try {
    const floeWall: number[] = [];
    const floeCpu: number[] = [];
    const duckWall: number[] = [];
    const duckCpu: number[] = [];
    const eventWall: number[] = [];
    const eventCpu: number[] = [];
    let eventParquet = 0;
    let eventBytes = 0;
    let floeParquet = 0;
    let duckParquet = 0;
    const phaseRunner = new PhaseRunner(harness.warehouse, messages);
    const phaseRuns: PhaseTimes[] = [];
    const afterGcWall: number[] = [];
    const afterGcCpu: number[] = [];
    const gc = new GcRecorder();
    const gcShares: number[] = [];
    // Each run: the phases (the whole pipeline, step by step), then floe as a warm Lambda's next
    // invocation (the previous batch's garbage still there, no forced GC), DuckDB on NDJSON and DuckDB
    // on the event. floe after a forced full GC follows in a loop of its own (see the file's comment).
    let warmRuns = 0;
    const invoke = async (afterReducingGc: boolean) => {
      // Each warm run starts with a different amount of young garbage (0–15 MiB, untimed), so that its
      // scavenges fall at a different point of the batch each time: see fillYoungGeneration.
      if (!afterReducingGc) fillYoungGeneration((warmRuns++ * 7) % 16);
      const eventJson = harness.nextEventJson(messages);
      eventBytes = Buffer.byteLength(eventJson);
      const t0 = performance.now();
      const f = await timed(() => harness.invoke(eventJson), {
        fullGcFirst: false,
        memoryReducingGcFirst: afterReducingGc,
      });
      const gcMs = await gc.pausesBetween(t0, performance.now());
      if (!afterReducingGc) gcShares.push(gcMs / f.wallMs);
      const table = f.result.tables[0];
      if (table?.rowsWritten !== settings.records) {
        throw new Error(
          `floe wrote ${table?.rowsWritten} rows of ${settings.records}: ${JSON.stringify(table)}`,
        );
      }
      floeParquet = table.bytesWritten;
      return f;
    };
    for (let round = 0; round < settings.warmups + settings.repeats; round++) {
      const counted = round >= settings.warmups;
      const phases = await phaseRunner.measure();
      const f = await invoke(false);
      const d = await timed(() => duck.run(round), { youngGcFirst: true });
      duckParquet = d.result.parquetBytes;
      const e = await timed(() => duck.runEvent(round), { youngGcFirst: true });
      eventParquet = e.result.parquetBytes;
      const eventRows = await duck.rowsOf(e.result.output);
      if (eventRows !== settings.records) {
        throw new Error(`DuckDB read ${eventRows} rows of ${settings.records} from the ESM event`);
      }
      if (counted) {
        phaseRuns.push(phases);
        floeWall.push(f.wallMs);
        floeCpu.push(f.cpuMs);
        duckWall.push(d.wallMs);
        duckCpu.push(d.cpuMs);
        eventWall.push(e.wallMs);
        eventCpu.push(e.cpuMs);
      }
      progress(
        `ingest ${counted ? 'run' : 'warm-up'} ${round + 1}: floe ${f.wallMs.toFixed(0)} ms, duckdb ${d.wallMs.toFixed(0)} ms, duckdb on the event ${e.wallMs.toFixed(0)} ms`,
      );
    }
    gc.stop();
    for (let run = 0; run < settings.repeats; run++) {
      const g = await invoke(true);
      afterGcWall.push(g.wallMs);
      afterGcCpu.push(g.cpuMs);
      progress(`ingest after a forced full GC ${run + 1}: floe ${g.wallMs.toFixed(0)} ms`);
    }
    const phases = medianPhases(phaseRuns.map((p) => p.wall));
    const phasesCpu = medianPhases(phaseRuns.map((p) => p.cpu));
    const floe = figures(floeWall, floeCpu, settings.records, valueBytes, eventBytes, floeParquet);
    const duckdb = figures(
      duckWall,
      duckCpu,
      settings.records,
      valueBytes,
      Buffer.byteLength(ndjson),
      duckParquet,
    );
    const afterGc = figures(afterGcWall, afterGcCpu, settings.records, valueBytes, eventBytes, floeParquet);
    const duckdbEvent = figures(eventWall, eventCpu, settings.records, valueBytes, eventBytes, eventParquet);
    const phaseCpuSum = Object.values(phasesCpu).reduce((s, v) => s + v, 0);
    return {
      records: settings.records,
      event_bytes: eventBytes,
      ndjson_bytes: Buffer.byteLength(ndjson),
      value_bytes: valueBytes,
      floe,
      duckdb,
      duckdb_event: duckdbEvent,
      floe_after_full_gc: afterGc,
      floe_records_per_s: floe.records_per_s,
      duckdb_records_per_s: duckdb.records_per_s,
      ratio: floe.records_per_s / duckdb.records_per_s,
      ratio_cpu: duckdb.cpu_ms / floe.cpu_ms,
      ratio_without_runtime_parse: duckdb.cpu_ms / Math.max(1e-9, floe.cpu_ms - phasesCpu.runtime_parse),
      ratio_after_full_gc: afterGc.records_per_s / duckdb.records_per_s,
      ratio_same_input: floe.records_per_s / duckdbEvent.records_per_s,
      ratio_same_input_cpu: duckdbEvent.cpu_ms / floe.cpu_ms,
      cpu_ratio: duckdb.cpu_ms / floe.cpu_ms,
      cpu_ratio_same_input: duckdbEvent.cpu_ms / floe.cpu_ms,
      gc_share: median(gcShares.slice(settings.warmups)),
      phases_ms: phases,
      phases_cpu_ms: phasesCpu,
      other_cpu_ms: floe.cpu_ms - phaseCpuSum,
    };
  } finally {
    duck.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Where the short-lived objects of fillYoungGeneration go (a ring: each replaces one of 64). */
const youngRing: unknown[] = new Array(64).fill(null);

/**
 * Allocates about `mib` MiB of small short-lived objects. The runs of this section are deterministic:
 * without this, every warm run would start with the same young-generation fill level, and its
 * scavenges would land at the same point of the batch each time — in the middle of the event's
 * JSON.parse (copying a live 14 MiB object graph) or not, for every run alike, so gc_share and the
 * handler's CPU jumped by 2×/5 ms with any change to what a batch allocates. A Lambda's batches start
 * at whatever fill level the previous one left; this gives the runs a spread of them instead.
 */
function fillYoungGeneration(mib: number): void {
  const objects = mib * 32_768; // ~32 bytes each
  for (let i = 0; i < objects; i++) youngRing[i & 63] = { i };
}
