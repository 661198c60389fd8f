/**
 * A selective scan of a large file fetches its footer, page index and the pages it needs, not the whole
 * file: a point query on a multi-page, multi-row-group file reads a small part of it (bounded by the
 * page sizes its footer states) and returns the rows of the whole-file route; any filter gives the
 * rows of the whole-file route; a size hint that lies, a truncated file, or a page index pointing
 * outside the file, at the wrong bytes or at the wrong rows gives the whole-file route or its
 * ValidationError; and a file from another writer (DuckDB) reads the same.
 */
import * as fs from 'node:fs/promises';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  readFileFooter,
  type Thrift,
  thriftInt,
  thriftStructs,
} from '../../../functions/core/data/parquet/read/file-footer.js';
import { COALESCE_GAP, TAIL_BYTES } from '../../../functions/core/data/parquet/read/ranged-file.js';
import { writeDataFiles } from '../../../functions/core/data/parquet/write/write-data-file.js';
import { ValidationError } from '../../../functions/core/errors.js';
import type { FileIO } from '../../../functions/core/io/file-io.js';
import { bindExpression } from '../../../functions/core/scan/bind-expression.js';
import { evaluateRow } from '../../../functions/core/scan/evaluate-row.js';
import type { Expression } from '../../../functions/core/scan/expression.js';
import { RANGED_MIN_BYTES, readTaskRows } from '../../../functions/core/scan/read-task-rows.js';
import type { Row, Schema } from '../../../functions/core/spec/types.js';
import { type PageLocationTuple, withOffsetIndex } from '../data/lying-page-index.js';
import {
  createTempWarehouse,
  openDuckDB,
  sqlString,
  type TempWarehouse,
} from '../data/parquet-test-helpers.js';

const SCHEMA: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'country', required: false, type: 'string' },
    { id: 3, name: 'qty', required: false, type: 'int' },
    { id: 4, name: 'note', required: false, type: 'string' },
    { id: 5, name: 'amount', required: false, type: 'double' },
  ],
};
const STRUCT = { type: 'struct' as const, fields: SCHEMA.fields };

/** 24 characters no compression shrinks much, so the file passes RANGED_MIN_BYTES. */
function noise(i: number): string {
  let x = (i + 1) * 2654435761;
  let out = '';
  for (let k = 0; k < 6; k++) {
    x = (x * 1103515245 + 12345) % 2_147_483_648;
    out += x.toString(36).padStart(6, '0').slice(-4);
  }
  return out;
}
const ROWS = 72_000;
const PAGE_ROWS = 500;

/** Every call and byte a reader asks of the FileIO. */
class CountingIO implements FileIO {
  calls: { method: string; bytes: number }[] = [];
  constructor(private readonly inner: FileIO) {}
  get bytes(): number {
    return this.calls.reduce((n, c) => n + c.bytes, 0);
  }
  count(method: string): number {
    return this.calls.filter((c) => c.method === method).length;
  }
  async read(location: string): Promise<Uint8Array> {
    const out = await this.inner.read(location);
    this.calls.push({ method: 'read', bytes: out.byteLength });
    return out;
  }
  async readRange(location: string, offset: number, length: number): Promise<Uint8Array> {
    const out = await this.inner.readRange(location, offset, length);
    this.calls.push({ method: 'readRange', bytes: out.byteLength });
    return out;
  }
  async stat(location: string) {
    this.calls.push({ method: 'stat', bytes: 0 });
    return this.inner.stat(location);
  }
  write = (l: string, d: Uint8Array) => this.inner.write(l, d);
  writeIfAbsent = (l: string, d: Uint8Array) => this.inner.writeIfAbsent(l, d);
  exists = (l: string) => this.inner.exists(l);
  delete = (l: string) => this.inner.delete(l);
  list = (p: string) => this.inner.list(p);
}

let wh: TempWarehouse;
let location: string;
let bytes: Uint8Array;
let footer: Thrift;
let rows: Row[];

beforeAll(async () => {
  wh = await createTempWarehouse();
  rows = Array.from({ length: ROWS }, (_, i) => ({
    id: BigInt(i * 3),
    country: ['AT', 'DE', 'FR', 'NL'][Math.floor(i / 7) % 4],
    qty: i % 11 === 0 ? null : (i * 7919) % 1000,
    note: `n${(i * 2654435761) % 1_000_003}-${noise(i)}`,
    amount: i / 7,
  }));
  const [file] = await writeDataFiles(rows, {
    io: wh.io,
    schema: SCHEMA,
    specId: 0,
    partition: {},
    nextLocation: wh.locations('big'),
    pageRowLimit: PAGE_ROWS,
    rowGroupSizeBytes: 448 * 1024,
  });
  location = file.file_path;
  bytes = await wh.io.read(location);
  footer = readFileFooter(bytes);
});
afterAll(async () => {
  await wh?.cleanup();
});

const bound = (e: Expression) => bindExpression(e, SCHEMA);

/** The rows a filter selects through the ranged route (with the counts) and through the whole-file route. */
async function both(filter: Expression, hint = bytes.byteLength, at = location) {
  const io = new CountingIO(wh.io);
  const ranged = await readTaskRows(io, at, STRUCT, bound(filter), true, hint);
  const whole = await readTaskRows(wh.io, at, STRUCT, bound(filter), true);
  return { io, ranged, whole };
}

describe('readTaskRows by ranges', () => {
  it('is a file with several row groups and many pages, above the size read by ranges', () => {
    expect(bytes.byteLength).toBeGreaterThan(RANGED_MIN_BYTES);
    expect(thriftStructs(footer, 4).length).toBeGreaterThanOrEqual(3);
  });

  it('fetches the tail, the page index and the pages of one row for a point query', async () => {
    // Prepare: the row in the middle of a row group, well past its first page.
    const groups = thriftStructs(footer, 4);
    const groupRows = groups.map((g) => thriftInt(g, 3) ?? 0);
    const g = 1;
    const target = groupRows[0] + Math.floor(groupRows[1] * 0.6) + 3;

    // Act
    const { io, ranged, whole } = await both({ op: 'eq', term: 'id', value: BigInt(target * 3) });

    // Assess: the rows of the whole-file route, with their positions.
    expect(ranged).toEqual(whole);
    expect(ranged.rows).toEqual([rows[target]]);
    expect(ranged.positions).toEqual([target]);
    expect(io.count('read')).toBe(0);
    // What the footer says may be fetched: the tail (or the footer, if longer), the page index of every
    // group, and per column chunk of group g its dictionary page and two pages (the common page range);
    // plus the gap each request may read across.
    const footerBytes =
      bytes.byteLength -
      (bytes.byteLength -
        8 -
        new DataView(bytes.buffer, bytes.byteOffset).getUint32(bytes.byteLength - 8, true));
    let allowed = Math.max(TAIL_BYTES, footerBytes);
    for (const group of groups)
      for (const chunk of thriftStructs(group, 1))
        allowed += (thriftInt(chunk, 5) ?? 0) + (thriftInt(chunk, 7) ?? 0);
    const groupStart = groupRows[0];
    for (const chunk of thriftStructs(groups[g], 1)) {
      const offsetIndex = thriftInt(chunk, 4) ?? 0;
      const index = deserialize(offsetIndex, thriftInt(chunk, 5) ?? 0);
      const pages = thriftStructs(index, 1).map((p) => ({
        offset: thriftInt(p, 1) ?? 0,
        size: thriftInt(p, 2) ?? 0,
        first: thriftInt(p, 3) ?? 0,
      }));
      const md = chunk.field_3 as Thrift;
      allowed += pages[0].offset - (thriftInt(md, 11) ?? pages[0].offset); // dictionary page
      expect(pages.filter((p) => p.first <= target - groupStart).length).toBeGreaterThan(3);
      allowed += 2 * Math.max(...pages.map((p) => p.size));
    }
    allowed += io.count('readRange') * COALESCE_GAP;
    expect(io.bytes).toBeLessThanOrEqual(allowed);
    expect(io.bytes).toBeLessThan(bytes.byteLength / 4);
  });

  it('selects the rows of the whole-file route for any filter', async () => {
    const term = fc.constantFrom('id', 'qty', 'country', 'note', 'amount');
    const literal = (t: string) =>
      t === 'id'
        ? fc.integer({ min: -10, max: ROWS * 3 + 10 }).map(BigInt)
        : t === 'qty'
          ? fc.integer({ min: -1, max: 1001 })
          : t === 'amount'
            ? fc.double({ min: -1, max: ROWS / 7 + 1, noNaN: true })
            : fc.constantFrom('AT', 'DE', 'n1', 'n5', 'zz');
    const predicate = term.chain((t) =>
      fc.oneof(
        fc.record({
          op: fc.constantFrom('eq', 'lt', 'gt-eq', 'not-eq'),
          term: fc.constant(t),
          value: literal(t),
        }),
        fc.record({ op: fc.constantFrom('is-null', 'not-null'), term: fc.constant(t) }),
      ),
    ) as fc.Arbitrary<Expression>;
    const filter = fc.oneof(
      predicate,
      fc.record({
        op: fc.constantFrom('and', 'or'),
        left: predicate,
        right: predicate,
      }) as fc.Arbitrary<Expression>,
    );
    await fc.assert(
      fc.asyncProperty(filter, async (f) => {
        const { io, ranged, whole } = await both(f);
        expect(io.count('stat')).toBe(1); // opened by its tail
        expect(ranged).toEqual(whole);
        const expected = rows.filter((r) => evaluateRow(bound(f), r));
        expect(ranged.rows).toEqual(expected);
      }),
      { numRuns: 25 },
    );
  }, 120_000);

  it('reads the file whole when the size hint lies, with the same rows', async () => {
    const filter: Expression = { op: 'eq', term: 'id', value: 60_003n };
    for (const hint of [bytes.byteLength - 100, bytes.byteLength + 100, bytes.byteLength - 4]) {
      const { io, ranged, whole } = await both(filter, hint);
      expect(ranged).toEqual(whole);
      expect(ranged.rows).toEqual([rows[20_001]]);
      expect(io.count('stat')).toBe(1); // the hint was checked
      expect(io.count('read')).toBe(1);
    }
  });

  it('fails a truncated file as the whole-file route does', async () => {
    const at = wh.locations('truncated')(0);
    await fs.writeFile(at, bytes.subarray(0, bytes.byteLength - 1000));
    const filter = bound({ op: 'eq', term: 'id', value: 3n });
    for (const hint of [bytes.byteLength, bytes.byteLength - 1000]) {
      const io = new CountingIO(wh.io);
      await expect(readTaskRows(io, at, STRUCT, filter, true, hint)).rejects.toBeInstanceOf(ValidationError);
      expect(io.count('stat')).toBe(1);
    }
    await expect(readTaskRows(wh.io, at, STRUCT, filter, true)).rejects.toBeInstanceOf(ValidationError);
  });

  describe('a page index that lies', () => {
    const size = () => bytes.byteLength;
    const groupRows = () => thriftStructs(footer, 4).map((g) => thriftInt(g, 3) ?? 0);
    /** Column `note` (chunk 3) of row group 1 lied about; the target row is on page 8 of that group. */
    async function lying(lie: (pages: PageLocationTuple[]) => PageLocationTuple[]) {
      const at = wh.locations('lied')(Math.floor(Math.random() * 1e9));
      await wh.io.write(at, withOffsetIndex(bytes, 3, lie, 1));
      const target = groupRows()[0] + 8 * PAGE_ROWS + 17;
      return { at, target, filter: { op: 'eq', term: 'id', value: BigInt(target * 3) } as Expression };
    }

    // arrow-rs traps on these offsets even reading the file whole, and parquet-wasm's async reader
    // then never settles (the read hangs): such a file is refused before its bytes reach it, on both
    // routes, and the next file reads as ever.
    const unreadable: [string, (pages: PageLocationTuple[]) => PageLocationTuple[]][] = [
      [
        'pages past the end of the file',
        (p) => p.map(([a, s, f], i) => (i > 2 ? [size() + 1, 1, f] : [a, s, f])),
      ],
      ['pages at the wrong bytes', (p) => p.map(([a, s, f], i) => [i > 0 ? a + 3 : a, s, f])],
    ];
    it.each(unreadable)('refuses the file as corrupt, cutting no slice (%s)', async (_, lie) => {
      // Prepare
      const { at, filter } = await lying(lie);
      const io = new CountingIO(wh.io);

      // Act
      const ranged: unknown = await readTaskRows(io, at, STRUCT, bound(filter), true, size()).catch((e) => e);
      const whole: unknown = await readTaskRows(wh.io, at, STRUCT, bound(filter), true).catch((e) => e);

      // Assess
      for (const error of [ranged, whole]) {
        expect(error).toBeInstanceOf(ValidationError);
        expect((error as Error).message).toMatch(/is corrupt: the page index of row group 1, column 3/);
      }
      expect(io.count('readRange')).toBeGreaterThanOrEqual(1); // the tail (here with the page index); no slice
      expect(io.count('read')).toBe(1);
      const after = await readTaskRows(wh.io, location, STRUCT, bound(filter), true, size());
      expect(after.rows.length).toBe(1);
    });

    it('reads the file whole, with the same rows, when a page taken holds other rows than its header', async () => {
      // Prepare: page 9 one row later, so page 8 (the target's) would hold 501 rows; its header says 500.
      const { at, target, filter } = await lying((p) => p.map(([a, s, f], i) => [a, s, i === 9 ? f + 1 : f]));

      // Act
      const { io, ranged, whole } = await both(filter, size(), at);

      // Assess
      expect(ranged).toEqual(whole);
      expect(ranged.rows).toEqual([rows[target]]);
      expect(io.count('readRange')).toBeGreaterThanOrEqual(2);
      expect(io.count('read')).toBe(1);
    });

    it('reads what the whole-file route reads when the pages before a row are moved', async () => {
      // Prepare: pages 5-9 one row later. Page 8's size, header and row count agree with the index; only
      // the headers of the pages before it could tell. Read by ranges those are not fetched (here the
      // page range common to all columns reaches one whose header disagrees); arrow-rs, reading the
      // whole file by offset and limit, skips pages by the same first_row_index.
      const { at, filter } = await lying((p) =>
        p.map(([a, s, f], i) => [a, s, i >= 5 && i <= 9 ? f + 1 : f]),
      );

      // Act
      const { io, ranged, whole } = await both(filter, size(), at);

      // Assess
      expect(ranged).toEqual(whole);
      expect(io.count('readRange')).toBeGreaterThanOrEqual(2);
    });
  });

  it('reads a file DuckDB wrote, with field ids, as the whole-file route does', async () => {
    const duck = await openDuckDB();
    try {
      const at = wh.locations('duck')(0);
      await duck.run(
        `COPY (SELECT * FROM read_parquet(${sqlString(location)})) TO ${sqlString(at)} (FORMAT parquet, ROW_GROUP_SIZE 10000, FIELD_IDS {id: 1, country: 2, qty: 3, note: 4, amount: 5})`,
      );
      const size = (await fs.stat(at)).size;
      expect(size).toBeGreaterThan(RANGED_MIN_BYTES);
      for (const filter of [
        { op: 'eq', term: 'id', value: 75_000n },
        {
          op: 'and',
          left: { op: 'eq', term: 'country', value: 'DE' },
          right: { op: 'lt', term: 'qty', value: 20 },
        },
      ] as Expression[]) {
        const { io, ranged, whole } = await both(filter, size, at);
        // DuckDB here writes no page index: the tail is read, then the whole file.
        expect(io.count('readRange')).toBeGreaterThanOrEqual(1);
        expect(ranged).toEqual(whole);
        expect(ranged.rows).toEqual(rows.filter((r) => evaluateRow(bound(filter), r)));
      }
    } finally {
      duck.close();
    }
  });
});

function deserialize(offset: number, length: number): Thrift {
  return readFileFooter(footerOf(bytes.subarray(offset, offset + length)));
}

/** Thrift bytes wrapped as a file's footer, so readFileFooter parses them. */
function footerOf(thrift: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + thrift.byteLength + 8);
  out.set([0x50, 0x41, 0x52, 0x31]);
  out.set(thrift, 4);
  new DataView(out.buffer).setUint32(4 + thrift.byteLength, thrift.byteLength, true);
  out.set([0x50, 0x41, 0x52, 0x31], 8 + thrift.byteLength);
  return out;
}
