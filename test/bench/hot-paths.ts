/**
 * floe's fast paths against the general paths they stand in for, on the bench's 10,000-record batch:
 * CPU time medians (run alternately), and a check that both give the same output on it.
 *
 *   map       mapBatch with the fast path (records that fit the schema gathered straight into columns)
 *             vs every record reconciled with the schema and converted to a row object by the general
 *             path (`fastPath: false`, what the fast path is tested against)
 *   JSON      JSON text → gathered columns in one scan (gatherJsonBatch) vs JSON.parse of every value and
 *             the map row's fast path on the parsed objects
 *             (and the same batch with one record of the wrong type: the rest is still scanned)
 *   Parquet   floe's Parquet writer (data/parquet/write/) vs parquet-wasm (arrow-rs in WASM, still used for
 *             snappy) on the same Arrow batch; "same output" = both files read back (hyparquet) to the
 *             same rows
 *
 * Run: npx tsx test/bench/hot-paths.ts [--json]
 */
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { zstdDecompressSync } from 'node:zlib';
import { parquetReadObjects } from 'hyparquet';
import { toArrowSchema } from '../../functions/core/data/arrow/arrow-schema.js';
import { buildRecordBatch } from '../../functions/core/data/arrow/build-record-batch.js';
import { encodeBatch } from '../../functions/core/data/parquet/write/encode-parquet.js';
import { loadParquetWasm } from '../../functions/core/data/parquet/parquet-wasm.js';
import { decodeEsmEvent } from '../../functions/core/records/esm-event.js';
import { withKafkaLineage } from '../../functions/core/records/kafka-lineage.js';
import { decodeJsonRecords } from '../../functions/core/mapping/decoded-record.js';
import { gatherJsonBatch } from '../../functions/core/mapping/fast/gather-json.js';
import { mapBatch } from '../../functions/core/mapping/map-batch.js';
import { DEFAULT_MAPPING } from '../../functions/core/mapping/mapping-config.js';
import { newTableMetadata } from '../../functions/core/spec/metadata.js';
import { makeOrderMessages, makeOrdersEvent, readOrdersSchema } from './orders-batch.js';
import { median, round } from './stats.js';

export interface HotPath {
  name: string;
  where: string;
  general_ms: number;
  fast_ms: number;
  saved_ms: number;
  same_output: boolean;
  note?: string;
}

/**
 * No forced GC before a run: a full collection just before makes allocation-heavy code pay for
 * re-growing the young generation, which the handler (mid-batch, warm heap) does not.
 */
function cpuOnce(fn: () => unknown): number {
  const c = process.cpuUsage();
  fn();
  const used = process.cpuUsage(c);
  return (used.user + used.system) / 1000;
}

/** Median CPU ms of both, run alternately so load shifts hit both. */
function compare(general: () => unknown, fast: () => unknown, runs: number): [number, number] {
  general(); // warm-up (JIT)
  fast();
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < runs; i++) {
    a.push(cpuOnce(general));
    b.push(cpuOnce(fast));
  }
  return [median(a), median(b)];
}

async function readBack(bytes: Uint8Array): Promise<unknown[]> {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  // hyparquet has no zstd of its own.
  const compressors = { ZSTD: (input: Uint8Array) => new Uint8Array(zstdDecompressSync(input)) };
  return parquetReadObjects({ file, compressors });
}

export async function runHotPaths(runs = 7): Promise<HotPath[]> {
  // The table as the handler sees it after its first batch: the values' extra fields are columns.
  const messages = makeOrderMessages({ records: 10_000, partitions: 6, seed: 7 });
  const records = decodeEsmEvent(makeOrdersEvent(messages, 0)).records;
  const decoded = decodeJsonRecords(records).decoded;
  const created = newTableMetadata({
    location: 'file:///bench/never-written',
    schema: withKafkaLineage(readOrdersSchema()),
  });
  const evolved = mapBatch(decoded, { mapping: DEFAULT_MAPPING, metadata: created }).reconciliation;
  const metadata = newTableMetadata({ location: 'file:///bench/never-written', schema: evolved.schema });
  const map = (fastPath: boolean) =>
    mapBatch(decoded, { mapping: DEFAULT_MAPPING, metadata, fastPath, columnar: fastPath });
  const out: HotPath[] = [];

  const [mapGeneral, mapFast] = compare(
    () => map(false),
    () => map(true),
    runs,
  );
  const fastBatch = map(true);
  const general = map(false);
  const fastRows = fastBatch.gathered?.toRows() ?? fastBatch.rows;
  out.push({
    name: 'map: schema check + typed values',
    where: 'mapping/fast/fitting-columns.ts',
    general_ms: mapGeneral,
    fast_ms: mapFast,
    saved_ms: mapGeneral - mapFast,
    same_output:
      isDeepStrictEqual(general.rows, fastRows) &&
      isDeepStrictEqual(general.deadLetters, fastBatch.deadLetters) &&
      isDeepStrictEqual(general.reconciliation, fastBatch.reconciliation),
    note: `${fastRows.length} of ${decoded.length} records fit the schema (gathered as columns)`,
  });

  // The handler's path for JSON that fits: the text scanned straight into columns, against parsing
  // every value and gathering the parsed objects (the map row's fast path above).
  const options = { mapping: DEFAULT_MAPPING, metadata, columnar: true };
  const parseAndGather = () => mapBatch(decodeJsonRecords(records).decoded, options);
  const [parseMs, scanMs] = compare(parseAndGather, () => gatherJsonBatch(records, options), runs);
  const scanned = gatherJsonBatch(records, options);
  out.push({
    name: 'JSON text → typed columns',
    where: 'mapping/fast/fitting-json.ts',
    general_ms: parseMs,
    fast_ms: scanMs,
    saved_ms: parseMs - scanMs,
    same_output:
      scanned !== undefined &&
      isDeepStrictEqual(scanned.gathered?.toRows(), parseAndGather().gathered?.toRows()),
    note: `JSON.parse + gathered columns vs one scan of the text; ${scanned ? 'the scan took all' : 'NOT taken:'} ${records.length} records`,
  });

  // The same with one record of the 10,000 whose order_id is not a number: it is dead-lettered (the
  // schema cannot take it), the others are still scanned. Before, it sent every record to the row path.
  const wrongType = (r: (typeof records)[number]) => {
    const value = { ...JSON.parse(Buffer.from(r.value ?? []).toString()), order_id: 'not a number' };
    return { ...r, value: Buffer.from(JSON.stringify(value)) };
  };
  const broken = records.map((r, i) => (i === 5_000 ? wrongType(r) : r));
  const [mixedParseMs, mixedScanMs] = compare(
    () => mapBatch(decodeJsonRecords(broken).decoded, options),
    () => gatherJsonBatch(broken, options),
    runs,
  );
  const mixed = gatherJsonBatch(broken, options);
  const mixedGeneral = mapBatch(decodeJsonRecords(broken).decoded, options);
  out.push({
    name: 'same, one record of the wrong type',
    where: 'mapping/fast/gather-json.ts',
    general_ms: mixedParseMs,
    fast_ms: mixedScanMs,
    saved_ms: mixedParseMs - mixedScanMs,
    same_output:
      mixed !== undefined &&
      mixed.deadLetters.length === 1 &&
      isDeepStrictEqual(mixed.gathered?.toRows(), mixedGeneral.gathered?.toRows() ?? mixedGeneral.rows),
    note: 'one order_id not a number: the others scanned, that one mapped and dead-lettered by the general path',
  });

  const schema = evolved.schema;
  // parquet-wasm is loaded on first need (functions/core/data/parquet/parquet-wasm.ts); this comparison needs it
  await loadParquetWasm();
  const batch = buildRecordBatch(schema, toArrowSchema(schema), fastRows, 0, fastRows.length, new Map());
  const encode = (writer: 'floe' | 'parquet-wasm') =>
    encodeBatch(schema, batch, {
      codec: 'zstd',
      rowGroupRows: batch.numRows,
      keyValueMetadata: new Map(),
      writer,
    }).bytes;
  const [wasmMs, floeMs] = compare(
    () => encode('parquet-wasm'),
    () => encode('floe'),
    runs,
  );
  const wasmFile = encode('parquet-wasm');
  const floeFile = encode('floe');
  out.push({
    name: 'Parquet encode (ZSTD)',
    where: 'data/parquet/write/ vs parquet-wasm',
    general_ms: wasmMs,
    fast_ms: floeMs,
    saved_ms: wasmMs - floeMs,
    same_output: isDeepStrictEqual(await readBack(wasmFile), await readBack(floeFile)),
    note: `file ${Math.round(wasmFile.byteLength / 1024)} KB (parquet-wasm) vs ${Math.round(floeFile.byteLength / 1024)} KB`,
  });
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { json: { type: 'boolean', default: false } } });
  const results = await runHotPaths();
  if (values.json) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  else {
    for (const h of results) {
      process.stdout.write(
        `${h.name.padEnd(34)} ${String(round(h.general_ms)).padStart(6)} ms → ${String(round(h.fast_ms)).padStart(6)} ms ` +
          `(−${round(h.saved_ms)} ms) same output: ${h.same_output}  [${h.where}]${h.note ? ` ${h.note}` : ''}\n`,
      );
    }
  }
}
