/**
 * The memory probe's child process: the ingest handler exactly as deployed (bundled by esbuild like the
 * Lambda), fed the 6 MB batch from files, reporting its own peak RSS and WASM heap as one JSON line.
 * Usage (by memory.ts): node memory-child.mjs <event-file>... with FLOE_* set in the environment.
 */
import { readFileSync } from 'node:fs';
import { loadedParquetWasm } from '../../functions/core/data/parquet-wasm.js';
import { ingestHandler } from '../../functions/handlers/ingest.js';

const MB = 1024 * 1024;
const peakRssMb = () => (process.resourceUsage().maxRSS * 1024) / MB;

const baselineRssMb = process.memoryUsage().rss / MB;
const baselinePeakMb = peakRssMb();
const invocations: { peak_rss_mb: number; rss_mb: number; wasm_heap_mb: number; heap_used_mb: number }[] = [];
for (const file of process.argv.slice(2)) {
  // The runtime receives the payload as text and parses it before calling the handler.
  const event = JSON.parse(readFileSync(file, 'utf8'));
  await ingestHandler(event, { getRemainingTimeInMillis: () => 900_000 });
  const usage = process.memoryUsage();
  invocations.push({
    peak_rss_mb: peakRssMb(),
    rss_mb: usage.rss / MB,
    // 0 while no batch needed parquet-wasm (JSON ingest writes Parquet without it): importing it here
    // would load it at init, which the deployed handler does not
    wasm_heap_mb: (loadedParquetWasm()?.wasmMemory().buffer.byteLength ?? 0) / MB,
    heap_used_mb: usage.heapUsed / MB,
  });
}
process.stdout.write(
  `${JSON.stringify({ baseline_rss_mb: baselineRssMb, baseline_peak_rss_mb: baselinePeakMb, invocations })}\n`,
);
