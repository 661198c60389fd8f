/**
 * parquet-wasm, loaded on first need. Its Node build compiles a 5 MB WebAssembly module synchronously
 * when imported (50–150 ms and ~17 MiB here), and an ingest batch does not need it: floe writes ZSTD,
 * GZIP and uncompressed Parquet itself. Only reading data files (scans, compaction) and writing snappy
 * do. The bundle keeps it in a chunk of its own (infra/functions.ts splits at every dynamic import), so a
 * cold start that never needs it never reads, compiles or instantiates it.
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

/** The module if something loaded it already, else undefined (for probes that must not load it). */
export function loadedParquetWasm(): ParquetWasm | undefined {
  return loaded;
}
