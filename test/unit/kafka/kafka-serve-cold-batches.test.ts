/**
 * kafka-serve's cold batches: built once per chunk and shared by concurrent consumers (single flight),
 * read back by kafkajs's own Fetch decoder, a gap the table does not hold skipped, the cache kept
 * within its byte bound whatever a read asks for, and a file going on past a chunk read once for both. The table is a real one on the embedded catalog.
 */
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import { ColdBatches, chunkOffsets } from '../../../functions/core/kafka/serve/cold-batches.js';
import { encodeFetchResponse } from '../../../functions/core/kafka/serve/fetch-messages.js';
import { TableRecords } from '../../../functions/core/kafka/serve/table-records.js';
import { CountingFileIO } from '../../../functions/core/scan/counting-file-io.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { jsonEvent } from '../../support/json-event.js';
import { tempWarehouse } from '../../support/tables.js';

const require = createRequire(import.meta.url);
const fetchV11 = require('kafkajs/src/protocol/requests/fetch/v11/response') as {
  decode(
    raw: Buffer,
  ): Promise<{ responses: { partitions: { messages: { offset: string; value: Buffer }[] }[] }[] }>;
};

const ROUTE: TableRoute = {
  table: { namespace: ['app'], name: 'events' },
  topics: ['ev'],
  kafkaLineage: true,
  properties: {},
  schema: {
    type: 'struct',
    'schema-id': 0,
    fields: [
      { id: 1, name: 'id', required: true, type: 'long' },
      { id: 2, name: 'text', required: true, type: 'string' },
    ],
  },
};
/** Offsets the table holds: two runs with a gap between them that no file covers. */
const HELD = [
  ...Array.from({ length: 1_500 }, (_, i) => i),
  ...Array.from({ length: 500 }, (_, i) => 50_000 + i),
];
const LAST = 60_000n;
/** Small chunks, so the table spans many of them. */
const CHUNK_FILE_BYTES = 8 * 1024;

const textOf = (id: number) => `record ${id} ${'x'.repeat(150 + (id % 50))}`;

/** Offsets a client gets: kafkajs decodes the batches; like any client, it skips offsets below `from`. */
async function offsetsOf(batches: Buffer[], from: bigint): Promise<bigint[]> {
  const raw = encodeFetchResponse(11, {
    throttleMs: 0,
    errorCode: 0,
    sessionId: 0,
    topics: [
      {
        topic: 'ev',
        partitions: [
          {
            partition: 0,
            errorCode: 0,
            highWatermark: LAST + 1n,
            lastStableOffset: LAST + 1n,
            logStartOffset: 0n,
            abortedTransactions: null,
            preferredReadReplica: -1,
            records: Buffer.concat(batches),
          },
        ],
      },
    ],
  });
  const decoded = await fetchV11.decode(raw);
  return decoded.responses[0].partitions[0].messages.map((m) => BigInt(m.offset)).filter((o) => o >= from);
}

/** A consumer's loop: fetch from its position until the cold range gives nothing more. */
async function consume(batches: ColdBatches, table: LoadedTable, maxBytes: number): Promise<bigint[]> {
  const seen: bigint[] = [];
  let from = 0n;
  for (;;) {
    const got = await offsetsOf(await batches.read(table, 'ev', 0, from, LAST, maxBytes), from);
    if (got.length === 0) return seen;
    seen.push(...got);
    from = got[got.length - 1] + 1n;
  }
}

describe('kafka-serve cold batches', () => {
  let wh: Awaited<ReturnType<typeof tempWarehouse>>;
  let table: LoadedTable;
  const records = new TableRecords(
    () => (row) => Buffer.from(JSON.stringify({ id: String(row.id), text: row.text })),
  );

  beforeAll(async () => {
    wh = await tempWarehouse();
    const options = { catalog: wh.catalog, routes: [ROUTE] };
    for (const [start, count] of [
      [0, 1_000],
      [1_000, 500],
      [50_000, 500],
    ] as const) {
      const values = Array.from({ length: count }, (_, i) => ({ id: start + i, text: textOf(start + i) }));
      await ingestEvent(options, jsonEvent('ev', values, { firstOffset: start }));
    }
    table = await wh.catalog.loadTable(ROUTE.table);
  });
  afterAll(async () => {
    await wh.cleanup();
  });

  it('25 concurrent consumers each get every held offset once, and each chunk is built once', async () => {
    // Prepare
    const batches = new ColdBatches(records, 64 * 1024 * 1024, CHUNK_FILE_BYTES);
    const size = chunkOffsets(table, CHUNK_FILE_BYTES);
    const chunks = new Set(HELD.map((o) => BigInt(o) / size));
    // Act
    const consumers = await Promise.all(
      Array.from({ length: 25 }, (_, i) => consume(batches, table, 16_000 + i * 4_000)),
    );
    // Assess
    expect(chunks.size).toBeGreaterThan(3);
    for (const seen of consumers) expect(seen).toEqual(HELD.map(BigInt));
    expect(batches.cache.builds).toBe(chunks.size);
  });

  it('builds the next chunk while a consumer takes in a full answer (read-ahead), once', async () => {
    // Prepare: answers far smaller than a chunk, so the first one is full inside chunk 0
    const batches = new ColdBatches(records, 64 * 1024 * 1024, CHUNK_FILE_BYTES);
    const size = chunkOffsets(table, CHUNK_FILE_BYTES);
    // Act
    const first = await batches.read(table, 'ev', 0, 0n, LAST, 1);
    const buildsBeforeNext = batches.cache.builds;
    await batches.read(table, 'ev', 0, size, LAST, 1);
    // Assess: chunk 1's build started before it was asked for (the ask joined it), and its own full
    // answer read ahead chunk 2
    expect((await offsetsOf(first, 0n))[0]).toBe(0n);
    expect(buildsBeforeNext).toBe(2);
    expect(batches.cache.builds).toBe(3);
  });

  it('starts a read inside a batch with that whole batch, and past the last held offset gives nothing', async () => {
    // Prepare
    const batches = new ColdBatches(records, 64 * 1024 * 1024, CHUNK_FILE_BYTES);
    // Act
    const middle = await batches.read(table, 'ev', 0, 1_234n, LAST, 1);
    const inGap = await batches.read(table, 'ev', 0, 2_000n, LAST, 1);
    const after = await batches.read(table, 'ev', 0, 50_500n, LAST, 1_000_000);
    // Assess
    const first = await offsetsOf(middle, 0n);
    expect(first[0]).toBeLessThanOrEqual(1_234n);
    expect(first).toContain(1_234n);
    expect((await offsetsOf(inGap, 0n))[0]).toBe(50_000n);
    expect(after).toEqual([]);
  });

  it('keeps the cache within its byte bound when a read asks for 2 GiB, rebuilding what it evicted', async () => {
    // Prepare: a bound far below the range's encoded size
    const bound = 150 * 1024;
    const batches = new ColdBatches(records, bound, CHUNK_FILE_BYTES);
    // Act
    const everything = await batches.read(table, 'ev', 0, 0n, LAST, 2 ** 31);
    const heldAfterFirst = batches.cache.bytes;
    const buildsAfterFirst = batches.cache.builds;
    await batches.read(table, 'ev', 0, 0n, LAST, 2 ** 31);
    // Assess
    const served = everything.reduce((n, b) => n + b.length, 0);
    expect(served).toBeGreaterThan(2 * bound);
    expect(heldAfterFirst).toBeGreaterThan(0);
    expect(await offsetsOf(everything, 0n)).toEqual(HELD.map(BigInt));
    expect(heldAfterFirst).toBeLessThanOrEqual(bound);
    expect(batches.cache.bytes).toBeLessThanOrEqual(bound);
    expect(batches.cache.builds).toBeGreaterThan(buildsAfterFirst);
  });

  it('reads a file going on past a chunk once for both chunks, into the same batches as chunk by chunk', async () => {
    // Prepare: one table read two ways, each through its own byte-counting IO
    const size = chunkOffsets(table, CHUNK_FILE_BYTES);
    const chunks = [...new Set(HELD.map((o) => BigInt(o) / size))];
    const sequential = { ...table, io: new CountingFileIO(table.io) };
    const oneByOne = { ...table, io: new CountingFileIO(table.io) };
    const alone = new ColdBatches(records, 64 * 1024 * 1024, CHUNK_FILE_BYTES);
    // Act: in order (each chunk's build leaves the next the rest of its files), and last chunk first
    // (no build finds the records of the chunk before: it is built after)
    const inOrder = await new ColdBatches(records, 64 * 1024 * 1024, CHUNK_FILE_BYTES).read(
      sequential,
      'ev',
      0,
      0n,
      LAST,
      2 ** 31,
    );
    for (const k of [...chunks].reverse()) await alone.read(oneByOne, 'ev', 0, k * size, LAST, 1);
    const fromCache = await alone.read(oneByOne, 'ev', 0, 0n, LAST, 2 ** 31);
    // Assess
    expect(chunks.length).toBeGreaterThan(3);
    expect(Buffer.concat(inOrder).equals(Buffer.concat(fromCache))).toBe(true);
    expect(await offsetsOf(inOrder, 0n)).toEqual(HELD.map(BigInt));
    expect(sequential.io.bytesRead).toBeLessThan(oneByOne.io.bytesRead);
  });
});
