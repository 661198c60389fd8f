/**
 * parquet-wasm, loaded on first need. Its Node build compiles a 5 MB WebAssembly module synchronously
 * when imported (50–150 ms and ~17 MiB here), and an ingest batch does not need it: floe writes ZSTD,
 * GZIP and uncompressed Parquet itself. Only reading data files (scans, compaction) and writing snappy
 * do. A bundle keeps it inside (esbuild defers a dynamically imported module's evaluation), so a cold
 * start that never needs it never pays for it.
 */
export type ParquetWasm = typeof import('parquet-wasm');

let loaded: ParquetWasm | undefined;

/** Loads parquet-wasm (once per process). */
export async function loadParquetWasm(): Promise<ParquetWasm> {
  loaded ??= await import('parquet-wasm');
  return loaded;
}

/**
 * The module, for synchronous code that runs after `loadParquetWasm()`.
 * @throws Error when it was not loaded first (a bug in the caller)
 */
export function parquetWasm(): ParquetWasm {
  if (!loaded) throw new Error('parquet-wasm is used before loadParquetWasm() was awaited');
  return loaded;
}
