/**
 * The ingest hot spots, current code against the prototypes in prototypes/ (which floe does not use),
 * on the bench's 10,000-record batch: CPU time medians, and a check that each prototype gives the
 * same output as the code it would replace. Run: npx tsx test/bench/hot-paths.ts [--json]
 */
import { isDeepStrictEqual, parseArgs } from 'node:util';
import * as arrow from 'apache-arrow';
import { Compression, Table as WasmTable, WriterPropertiesBuilder, writeParquet } from 'parquet-wasm';
import { toArrowSchema } from '../../functions/core/data/arrow-schema.js';
import { buildRecordBatch } from '../../functions/core/data/build-record-batch.js';
import { decodeBase64, decodeEsmEvent } from '../../functions/core/ingest/esm-event.js';
import { jsonToRow } from '../../functions/core/ingest/json-to-value.js';
import { withKafkaLineage } from '../../functions/core/ingest/kafka-lineage.js';
import { mapRecords, valueStruct } from '../../functions/core/ingest/map-records.js';
import { parseJsonBytes } from '../../functions/core/ingest/parse-json.js';
import type { Schema } from '../../functions/core/spec/types.js';
import { makeOrderMessages, makeOrdersEvent, readOrdersSchema } from './orders-batch.js';
import { compileJsonToRow } from './prototypes/compiled-mapper.js';
import { decodeBase64Fast, decodeHeaderBytes, parseJsonBytesFast } from './prototypes/fast-decode.js';
import { mapRecordsFast } from './prototypes/fast-map-records.js';
import { collectGarbage, median, round } from './stats.js';

export interface HotPath {
  name: string;
  where: string;
  current_ms: number;
  prototype_ms: number;
  saved_ms: number;
  same_output: boolean;
  note?: string;
}

function cpuOnce(fn: () => unknown): number {
  collectGarbage();
  const c = process.cpuUsage();
  fn();
  const used = process.cpuUsage(c);
  return (used.user + used.system) / 1000;
}

/** Median CPU ms of the current code and of the prototype, run alternately so load shifts hit both. */
function compare(current: () => unknown, prototype: () => unknown, runs: number): [number, number] {
  current(); // warm-up (JIT)
  prototype();
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < runs; i++) {
    a.push(cpuOnce(current));
    b.push(cpuOnce(prototype));
  }
  return [median(a), median(b)];
}

function hotPath(
  name: string,
  where: string,
  current: () => unknown,
  prototype: () => unknown,
  runs: number,
  sameOutput: () => boolean,
  note?: string,
): HotPath {
  const [currentMs, prototypeMs] = compare(current, prototype, runs);
  return {
    name,
    where,
    current_ms: currentMs,
    prototype_ms: prototypeMs,
    saved_ms: currentMs - prototypeMs,
    same_output: sameOutput(),
    ...(note ? { note } : {}),
  };
}

/** The current header decoding of esm-event.ts (module-private there), copied to be timed. */
function currentHeaderBytes(value: unknown[]): Uint8Array {
  if (!value.every((b) => Number.isInteger(b) && (b as number) >= -128 && (b as number) <= 255))
    throw new Error('bad');
  return Uint8Array.from(value as number[], (b) => b & 0xff);
}

/** The dictionary choice the prototype makes: off, except top-level strings (low cardinality in practice). */
function writerProps(schema: Schema, dictionary: 'default' | 'top-level-strings'): WriterPropertiesBuilder {
  let builder = new WriterPropertiesBuilder().setCompression(Compression.ZSTD);
  if (dictionary === 'top-level-strings') {
    builder = builder.setDictionaryEnabled(false);
    for (const f of schema.fields)
      if (f.type === 'string') builder = builder.setColumnDictionaryEnabled(f.name, true);
  }
  return builder;
}

/** Tricky inputs: the fast base64 path must decode or refuse exactly as the current one does. */
const BASE64_CASES = [
  '',
  'TQ==',
  'TWE=',
  'TWFu',
  'eyJrIjoxfQ==',
  'MTAw MA==',
  'MTAwMA',
  'ab!d',
  'ab+_',
  'a-_b',
  'YQ=a',
  '=abc',
  'abc=',
  'ab==',
  'YWJj\n',
];

function sameBase64(text: string): boolean {
  const run = (f: (t: string, w: string) => Uint8Array) => {
    try {
      return [...f(text, 'value')].join(',');
    } catch (error) {
      return `error: ${(error as Error).message}`;
    }
  };
  return run(decodeBase64) === run(decodeBase64Fast);
}

export function runHotPaths(runs = 7): HotPath[] {
  const schema = withKafkaLineage(readOrdersSchema());
  const messages = makeOrderMessages({ records: 10_000, partitions: 6, seed: 7 });
  const event = makeOrdersEvent(messages, 0);
  const raws = Object.values(event.records).flat() as {
    key: string;
    value: string;
    headers: Record<string, number[]>[];
  }[];
  const records = decodeEsmEvent(event).records;
  const objects = records.map((r) => parseJsonBytes(r.value ?? new Uint8Array()) as Record<string, unknown>);
  const valueType = valueStruct(schema);
  const compiled = compileJsonToRow(valueType);
  const out: HotPath[] = [];

  out.push(
    hotPath(
      'base64 key + value',
      'ingest/esm-event.ts decodeBase64',
      () => {
        for (const r of raws) {
          decodeBase64(r.key, 'key');
          decodeBase64(r.value, 'value');
        }
      },
      () => {
        for (const r of raws) {
          decodeBase64Fast(r.key, 'key');
          decodeBase64Fast(r.value, 'value');
        }
      },
      runs,
      () =>
        BASE64_CASES.every(sameBase64) &&
        raws.every((r) => Buffer.compare(decodeBase64(r.value, 'v'), decodeBase64Fast(r.value, 'v')) === 0),
    ),
  );
  const headerArrays = raws.flatMap((r) => r.headers.flatMap((h) => Object.values(h)));
  out.push(
    hotPath(
      'header bytes',
      'ingest/esm-event.ts decodeHeaders',
      () => headerArrays.map(currentHeaderBytes),
      () => headerArrays.map(decodeHeaderBytes),
      runs,
      () => headerArrays.every((a) => isDeepStrictEqual(currentHeaderBytes(a), decodeHeaderBytes(a))),
    ),
  );
  const empty = new Uint8Array();
  out.push(
    hotPath(
      'value JSON parse',
      'ingest/parse-json.ts LONG_NUMBER regex',
      () => records.map((r) => parseJsonBytes(r.value ?? empty)),
      () => records.map((r) => parseJsonBytesFast(r.value ?? empty)),
      runs,
      () =>
        records.every((r) =>
          isDeepStrictEqual(parseJsonBytes(r.value ?? empty), parseJsonBytesFast(r.value ?? empty)),
        ),
    ),
  );
  out.push(
    hotPath(
      'JSON → row',
      'ingest/json-to-value.ts jsonToRow',
      () => objects.map((o) => jsonToRow(valueType, o)),
      () => objects.map((o) => compiled(o)),
      runs,
      () =>
        objects.every((o) => isDeepStrictEqual(jsonToRow(valueType, o), compiled(o))) &&
        sameErrors(valueType, compiled),
    ),
  );
  out.push(
    hotPath(
      'map phase (both above + lineage)',
      'ingest/map-records.ts mapRecords',
      () => mapRecords(records, schema),
      () => mapRecordsFast(records, schema),
      runs,
      () => isDeepStrictEqual(mapRecords(records, schema), mapRecordsFast(records, schema)),
      'includes the two rows above',
    ),
  );
  const rows = mapRecords(records, schema).rows;
  const batch = buildRecordBatch(schema, toArrowSchema(schema), rows, 0, rows.length, new Map());
  const ipc = arrow.tableToIPC(new arrow.Table([batch]), 'stream');
  const encode = (mode: 'default' | 'top-level-strings') =>
    writeParquet(WasmTable.fromIPCStream(ipc), writerProps(schema, mode).build());
  const sizes = [encode('default').byteLength, encode('top-level-strings').byteLength];
  out.push(
    hotPath(
      'Parquet encode (ZSTD)',
      'data/encode-parquet.ts writer properties',
      () => encode('default'),
      () => encode('top-level-strings'),
      runs,
      () => true,
      `dictionary only for top-level string columns; file ${Math.round(sizes[0] / 1024)} KB → ${Math.round(sizes[1] / 1024)} KB`,
    ),
  );
  return out;
}

/** Failing values must give the same dead-letter reason from both converters. */
function sameErrors(
  type: ReturnType<typeof valueStruct>,
  compiled: ReturnType<typeof compileJsonToRow>,
): boolean {
  const good = {
    order_id: 1,
    customer_id: 2,
    order_ts: '2026-01-01T00:00:00Z',
    amount: 1.5,
    currency: 'EUR',
    country: 'DE',
  };
  const bad: Record<string, unknown>[] = [
    { ...good, order_id: 'x' },
    { ...good, order_id: null },
    { ...good, amount: 1.555 },
    { ...good, order_ts: 'yesterday' },
    { ...good, shipping: [] },
    {
      ...good,
      lines: [
        { sku: 'a', qty: 1, unit_price: '1.00' },
        { sku: 'b', qty: 2 ** 40, unit_price: '1' },
      ],
    },
    { ...good, lines: [null] },
    { ...good, currency: '\ud800' },
    { ...good, order_id: 2 ** 64 },
  ];
  const reason = (f: () => unknown) => {
    try {
      f();
      return 'ok';
    } catch (error) {
      return (error as Error).message;
    }
  };
  return bad.every((o) => reason(() => jsonToRow(type, o)) === reason(() => compiled(o)));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { json: { type: 'boolean', default: false } } });
  const results = runHotPaths();
  if (values.json) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  else {
    for (const h of results) {
      process.stdout.write(
        `${h.name.padEnd(34)} ${String(round(h.current_ms)).padStart(6)} ms → ${String(round(h.prototype_ms)).padStart(6)} ms ` +
          `(−${round(h.saved_ms)} ms) same output: ${h.same_output}  [${h.where}]${h.note ? ` ${h.note}` : ''}\n`,
      );
    }
  }
}
