/**
 * Micro benchmark: a deletion vector of 1M positions (a third sparse — every 7th row of a 2.3M-row
 * span —, a third in runs of 1,000, a third scattered over 2^34 positions, so past 2^32) built,
 * serialized to its deletion-vector-v1 blob and parsed back. Anchor: CRoaring (roaring-wasm) writing
 * and reading the same 32-bit bitmaps in the portable format, alternating with floe's runs; CPU
 * medians. Prints one JSON object: `deletion_vector.*_ms` and the ratios floe / CRoaring.
 * Run: npx tsx test/bench/deletion-vector.ts [positions]
 */
import { RoaringBitmap32, roaringLibraryInitialize } from 'roaring-wasm';
import { DeletionVector } from '../../functions/core/deletes/deletion-vector.js';
import {
  parseDeletionVector,
  serializeDeletionVector,
} from '../../functions/core/deletes/deletion-vector-blob.js';
import { seededRandom } from '../support/seeded-random.js';
import { median, round, timed } from './stats.js';

const POSITIONS = Number(process.argv[2] ?? 1_000_000);
const RUNS = 7;

function positions(): number[] {
  const random = seededRandom(42);
  const third = Math.floor(POSITIONS / 3);
  const out: number[] = [];
  for (let i = 0; i < third; i++) out.push(i * 7);
  for (let run = 0; run < third / 1000; run++) {
    const start = 3_000_000 + Math.floor(random() * 1e9);
    for (let i = 0; i < 1000; i++) out.push(start + i);
  }
  while (out.length < POSITIONS) out.push(Math.floor(random() * 2 ** 34));
  return out;
}

/** The positions as CRoaring bitmaps, one per key (high 32 bits), as the anchor's input. */
function byKey(all: number[]): Map<number, Uint32Array> {
  const keyed = new Map<number, number[]>();
  for (const p of all) {
    const key = Math.floor(p / 2 ** 32);
    const list = keyed.get(key) ?? [];
    list.push(p % 2 ** 32);
    keyed.set(key, list);
  }
  return new Map([...keyed].map(([k, v]) => [k, Uint32Array.from(v)]));
}

await roaringLibraryInitialize();
const input = positions();
const keyed = byKey(input);
const floe = { build: [] as number[], serialize: [] as number[], parse: [] as number[] };
const croaring = { build: [] as number[], serialize: [] as number[], parse: [] as number[] };
let blobBytes = 0;
let croaringBytes = 0;

for (let run = 0; run < RUNS; run++) {
  const built = await timed(() => {
    const vector = new DeletionVector();
    for (const p of input) vector.add(p);
    return vector;
  });
  const blob = await timed(() => serializeDeletionVector(built.result));
  const parsed = await timed(() => parseDeletionVector(blob.result));
  if (parsed.result.cardinality !== built.result.cardinality) throw new Error('round trip lost positions');
  floe.build.push(built.cpuMs);
  floe.serialize.push(blob.cpuMs);
  floe.parse.push(parsed.cpuMs);
  blobBytes = blob.result.byteLength;

  const anchorBuilt = await timed(() => [...keyed.values()].map((values) => new RoaringBitmap32(values)));
  const anchorBytes = await timed(() =>
    anchorBuilt.result.map((bitmap) => {
      bitmap.runOptimize();
      return bitmap.serialize('portable');
    }),
  );
  const anchorParsed = await timed(() =>
    anchorBytes.result.map((b) => RoaringBitmap32.deserialize('portable', b)),
  );
  for (const bitmap of [...anchorBuilt.result, ...anchorParsed.result]) bitmap.dispose();
  croaring.build.push(anchorBuilt.cpuMs);
  croaring.serialize.push(anchorBytes.cpuMs);
  croaring.parse.push(anchorParsed.cpuMs);
  croaringBytes = anchorBytes.result.reduce((sum, b) => sum + b.byteLength, 0);
}

const m = (values: number[]) => round(median(values));
console.log(
  JSON.stringify(
    {
      deletion_vector: {
        positions: POSITIONS,
        blob_bytes: blobBytes,
        croaring_bytes_32bit_bitmaps: croaringBytes,
        build_ms: m(floe.build),
        serialize_ms: m(floe.serialize),
        parse_ms: m(floe.parse),
        croaring_build_ms: m(croaring.build),
        croaring_serialize_ms: m(croaring.serialize),
        croaring_parse_ms: m(croaring.parse),
        serialize_ratio: round(median(croaring.serialize) / median(floe.serialize), 2),
        parse_ratio: round(median(croaring.parse) / median(floe.parse), 2),
      },
    },
    null,
    2,
  ),
);
