/**
 * The memory probe's child process: the ingest handler exactly as deployed (bundled by esbuild like the
 * Lambda), fed the 6 MB batch from files, reporting its own peak RSS and WASM heap as one JSON line.
 * Usage (by memory.ts): node memory-child.mjs <event-file>... with FLOE_* set in the environment.
 */
import { readFileSync } from 'node:fs';
import { loadedParquetWasm } from '../../functions/core/data/parquet/parquet-wasm.js';
import { ingestHandler } from '../../functions/handlers/ingest.js';

const MB = 1024 * 1024;
/**
 * The high-water mark of this process's own memory: /proc/self/status VmHWM on Linux. Not getrusage's
 * maxRSS: Linux carries the forked copy's high-water mark across exec into it, so a child spawned by a
 * bench process that had grown to 180 MiB reported 180 MiB however little it used itself.
 */
function peakRssMb(): number {
  try {
    const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (hwm) return (Number(hwm[1]) * 1024) / MB;
  } catch {
    // not Linux: getrusage below
  }
  return (process.resourceUsage().maxRSS * 1024) / MB;
}

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
