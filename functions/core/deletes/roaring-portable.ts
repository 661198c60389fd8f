/**
 * The 32-bit Roaring bitmap in its portable serialization (RoaringFormatSpec, the format of Java's and
 * Go's RoaringBitmap and CRoaring's `portable` functions), written and read by hand. No runtime npm
 * library does this for floe: `roaring` is a native addon (a prebuilt binary per platform, fetched at
 * install), and `roaring-wasm` keeps its bitmaps in a WebAssembly heap that must be freed by hand and
 * needs an async start; neither has the 64-bit layout deletion vectors wrap around it. roaring-wasm
 * stays as the independent check in the tests.
 *
 * Layout: a cookie (12346 then a 32-bit container count; or 12347 with count − 1 in its high 16 bits,
 * then one bit per container saying "run"), a (key, cardinality − 1) pair of 16-bit words per container,
 * the byte offset of each container (always without runs, from 4 containers on with them), then the
 * containers: sorted 16-bit values (array, ≤ 4096 values), 65536 bits (bitmap), or a run count and
 * (start, length − 1) pairs. All little-endian. A container is written as runs when that is smaller
 * than its array or bitmap form, the rule of Java's runOptimize, so files come out as small as Java's
 * and byte-identical to them.
 */
import { CorruptDeletionVectorError } from './deletes-errors.js';
import { ARRAY_MAX, RoaringContainer } from './roaring-container.js';

/** A 32-bit Roaring bitmap: containers by their 16-bit key. */
export type Bitmap32 = Map<number, RoaringContainer>;

const COOKIE_NO_RUN = 12346;
const COOKIE_RUN = 12347;
/** With run containers, offsets are written only from this many containers on. */
const NO_OFFSET_THRESHOLD = 4;
const BITMAP_BYTES = 8192;

type Form = 'array' | 'bitmap' | 'run';

interface PlannedContainer {
  key: number;
  container: RoaringContainer;
  form: Form;
  runs: number;
  bytes: number;
}

/** A bitmap ready to write: its exact size, and the writer. */
export interface PortablePlan {
  readonly size: number;
  /** Writes at `offset` and returns the offset after the bitmap. */
  write(view: DataView, offset: number): number;
}

/** Plans the portable serialization of `bitmap` (empty containers are left out). */
export function planPortable(bitmap: Bitmap32): PortablePlan {
  const planned = [...bitmap.entries()]
    .filter(([, c]) => c.cardinality > 0)
    .sort(([a], [b]) => a - b)
    .map(([key, container]) => planContainer(key, container));
  const hasRun = planned.some((p) => p.form === 'run');
  const n = planned.length;
  const withOffsets = !hasRun || n >= NO_OFFSET_THRESHOLD;
  const header = (hasRun ? 4 + ((n + 7) >>> 3) : 8) + 4 * n + (withOffsets ? 4 * n : 0);
  const size = header + planned.reduce((sum, p) => sum + p.bytes, 0);
  return {
    size,
    write(view, start) {
      let at = start;
      if (hasRun) {
        view.setUint32(at, (COOKIE_RUN | ((n - 1) << 16)) >>> 0, true);
        at += 4;
        for (let i = 0; i < n; i += 8) {
          let flags = 0;
          for (let j = i; j < Math.min(i + 8, n); j++) if (planned[j]!.form === 'run') flags |= 1 << (j - i);
          view.setUint8(at++, flags);
        }
      } else {
        view.setUint32(at, COOKIE_NO_RUN, true);
        view.setUint32(at + 4, n, true);
        at += 8;
      }
      for (const p of planned) {
        view.setUint16(at, p.key, true);
        view.setUint16(at + 2, p.container.cardinality - 1, true);
        at += 4;
      }
      if (withOffsets) {
        let offset = header;
        for (const p of planned) {
          view.setUint32(at, offset, true);
          offset += p.bytes;
          at += 4;
        }
      }
      for (const p of planned) at = writeContainer(view, at, p);
      return at;
    },
  };
}

function planContainer(key: number, container: RoaringContainer): PlannedContainer {
  const card = container.cardinality;
  const runs = container.runCount();
  const plainBytes = card <= ARRAY_MAX ? 2 * card : BITMAP_BYTES;
  const runBytes = 2 + 4 * runs;
  if (runBytes < plainBytes) return { key, container, form: 'run', runs, bytes: runBytes };
  return { key, container, form: card <= ARRAY_MAX ? 'array' : 'bitmap', runs, bytes: plainBytes };
}

function writeContainer(view: DataView, at: number, p: PlannedContainer): number {
  if (p.form === 'array') {
    for (const v of p.container.arrayValues() ?? p.container.values()) {
      view.setUint16(at, v, true);
      at += 2;
    }
    return at;
  }
  if (p.form === 'bitmap') {
    const words = p.container.bitmapWords() ?? wordsOf(p.container);
    for (let w = 0; w < words.length; w++) view.setUint32(at + 4 * w, words[w]!, true);
    return at + BITMAP_BYTES;
  }
  view.setUint16(at, p.runs, true);
  at += 2;
  let start = -1;
  let previous = -2;
  for (const v of p.container.values()) {
    if (v !== previous + 1) {
      if (start >= 0) at = writeRun(view, at, start, previous);
      start = v;
    }
    previous = v;
  }
  return writeRun(view, at, start, previous);
}

function writeRun(view: DataView, at: number, start: number, last: number): number {
  view.setUint16(at, start, true);
  view.setUint16(at + 2, last - start, true);
  return at + 4;
}

function wordsOf(container: RoaringContainer): Uint32Array {
  const words = new Uint32Array(BITMAP_BYTES / 4);
  for (const v of container.values()) words[v >>> 5]! |= 1 << (v & 31);
  return words;
}

/**
 * Reads one portable 32-bit bitmap from `bytes[offset, end)`, checking everything a hostile or torn file
 * could get wrong: the cookie, every length against the bytes left, keys strictly ascending, each
 * container's offset, its values sorted and in range, and its cardinality against its header.
 * @returns the bitmap and the offset just after it
 * `maxCardinality` is checked against the containers' header counts before any container is decoded,
 * so a small blob whose run containers claim billions of positions is refused without the memory.
 * @throws CorruptDeletionVectorError naming the problem (prefixed with `where`)
 */
export function readPortable(
  bytes: Uint8Array,
  offset: number,
  end: number,
  where: string,
  maxCardinality = Number.POSITIVE_INFINITY,
): { bitmap: Bitmap32; end: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const fail = (problem: string): never => {
    throw new CorruptDeletionVectorError(`${where}: ${problem}`);
  };
  const need = (at: number, n: number, what: string) => {
    if (at + n > end) fail(`${what} needs ${n} bytes at offset ${at - offset}, only ${end - at} left`);
  };
  const start = offset;
  need(offset, 4, 'the cookie');
  const cookie = view.getUint32(offset, true);
  let at = offset + 4;
  let count: number;
  let runFlags: Uint8Array | undefined;
  if ((cookie & 0xffff) === COOKIE_RUN) {
    count = (cookie >>> 16) + 1;
    need(at, (count + 7) >>> 3, 'the run-container flags');
    runFlags = bytes.subarray(at, at + ((count + 7) >>> 3));
    at += (count + 7) >>> 3;
  } else if (cookie === COOKIE_NO_RUN) {
    need(at, 4, 'the container count');
    count = view.getUint32(at, true);
    at += 4;
    if (count > 65536) fail(`${count} containers, more than the 65536 a 32-bit bitmap can have`);
  } else {
    return fail(`unknown cookie ${cookie} (expected ${COOKIE_NO_RUN} or ${COOKIE_RUN} in the low 16 bits)`);
  }
  const withOffsets = runFlags === undefined || count >= NO_OFFSET_THRESHOLD;
  need(at, 4 * count + (withOffsets ? 4 * count : 0), `the headers of ${count} containers`);
  const keys: number[] = [];
  const cards: number[] = [];
  for (let i = 0; i < count; i++) {
    const key = view.getUint16(at, true);
    if (i > 0 && key <= keys[i - 1]!)
      fail(`container keys are not strictly ascending (${key} after ${keys[i - 1]})`);
    keys.push(key);
    cards.push(view.getUint16(at + 2, true) + 1);
    at += 4;
  }
  const claimed = cards.reduce((sum, c) => sum + c, 0);
  if (claimed > maxCardinality)
    fail(`containers claim ${claimed} values, more than the ${maxCardinality} expected`);
  const offsets: number[] = [];
  if (withOffsets) {
    for (let i = 0; i < count; i++) offsets.push(view.getUint32(at + 4 * i, true));
    at += 4 * count;
  }
  const bitmap: Bitmap32 = new Map();
  for (let i = 0; i < count; i++) {
    const what = `container ${i} (key ${keys[i]})`;
    if (withOffsets && offsets[i] !== at - start)
      fail(`${what} claims offset ${offsets[i]}, found at ${at - start}`);
    const isRun = runFlags !== undefined && (runFlags[i >>> 3]! & (1 << (i & 7))) !== 0;
    const container = new RoaringContainer();
    const card = cards[i]!;
    if (isRun) {
      need(at, 2, `${what}'s run count`);
      const runs = view.getUint16(at, true);
      at += 2;
      need(at, 4 * runs, `${what}'s ${runs} runs`);
      let next = 0;
      for (let r = 0; r < runs; r++, at += 4) {
        const first = view.getUint16(at, true);
        const last = first + view.getUint16(at + 2, true);
        if (first < next) fail(`${what}: run ${r} starts at ${first}, inside or before the previous run`);
        if (last > 0xffff) fail(`${what}: run ${r} ends at ${last}, past 65535`);
        container.addRange(first, last);
        next = last + 1;
      }
    } else if (card <= ARRAY_MAX) {
      need(at, 2 * card, `${what}'s ${card} values`);
      let previous = -1;
      for (let v = 0; v < card; v++, at += 2) {
        const value = view.getUint16(at, true);
        if (value <= previous)
          fail(`${what}: values are not strictly ascending (${value} after ${previous})`);
        container.add(value);
        previous = value;
      }
    } else {
      need(at, BITMAP_BYTES, `${what}'s bitmap`);
      const words = new Uint32Array(BITMAP_BYTES / 4);
      for (let w = 0; w < words.length; w++, at += 4) words[w] = view.getUint32(at, true);
      container.adoptWords(words);
    }
    if (container.cardinality !== card)
      fail(`${what} holds ${container.cardinality} values, its header says ${card}`);
    bitmap.set(keys[i]!, container);
  }
  return { bitmap, end: at };
}
