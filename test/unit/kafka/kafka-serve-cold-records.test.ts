/**
 * kafka-serve's cold records come from `_kafka`'s columns (cold-records.ts), not from row objects: over
 * generated tables (append and upsert with either delete mode, `_kafka.value` on from the start, later
 * or never; keys, headers and timestamps of every shape) they are the records the row path gives
 * (readScan's rows, read by lineageOf, the value kept or re-encoded), and encode to the same batches
 * byte for byte. The value writer compiled per schema writes what the display row's JSON did, and the
 * batches' checksum is CRC-32C.
 */
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatReplayValue } from '../../../functions/cli/commands/replay.js';
import { compileDisplayJson, toDisplayRow } from '../../../functions/cli/format-value.js';
import type { LoadedTable } from '../../../functions/core/catalog/catalog.js';
import { ingestEvent } from '../../../functions/core/ingest/ingest-event.js';
import {
  buildBatch,
  type ColdRecord,
  groupIntoBatches,
} from '../../../functions/core/kafka/serve/record-batches.js';
import { crc32c } from '../../../functions/core/kafka/serve/crc32c.js';
import {
  decodeFetchResponse,
  encodeFetchResponse,
  type FetchResponse,
} from '../../../functions/core/kafka/serve/fetch-messages.js';
import { crc32C, Decoder } from '../../../functions/core/kafka/serve/kafkajs-protocol.js';
import { rangeFilter, TableRecords } from '../../../functions/core/kafka/serve/table-records.js';
import { KAFKA_FIELD, KAFKA_VALUE_FIELD } from '../../../functions/core/records/kafka-lineage.js';
import { lineageOf } from '../../../functions/core/records/replay-records.js';
import type { TableRoute } from '../../../functions/core/routing/routes.js';
import { planScan } from '../../../functions/core/scan/plan-scan.js';
import { readScanRows } from '../../../functions/core/scan/read-scan.js';
import { stringifyJson } from '../../../functions/core/spec/json-codec.js';
import { currentSchema, currentSnapshot } from '../../../functions/core/spec/metadata.js';
import type { Row, StructType } from '../../../functions/core/spec/types.js';
import { tempWarehouse } from '../../support/tables.js';

const require = createRequire(import.meta.url);

interface GenRecord {
  name: string;
  key: number[] | null;
  headers: [string, number[] | null][];
  timestamp: number;
}

const recordArb: fc.Arbitrary<GenRecord> = fc.record({
  name: fc.string({ maxLength: 6, unit: 'grapheme' }),
  key: fc.option(fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 5 }), { nil: null }),
  headers: fc.array(
    fc.tuple(
      fc.constantFrom('a', 'b', 'ü'),
      fc.option(fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 3 }), { nil: null }),
    ),
    { maxLength: 3 },
  ),
  timestamp: fc.constantFrom(0, 1, 999, 1_795_000_000_123, 2 ** 41 + 7),
});

const caseArb = fc.record({
  mode: fc.constantFrom('append', 'upsert'),
  deleteMode: fc.constantFrom('position', 'equality'),
  // The batch from which the route keeps values (3: never).
  valueFrom: fc.integer({ min: 0, max: 3 }),
  batches: fc.array(fc.array(recordArb, { minLength: 4, maxLength: 12 }), { minLength: 2, maxLength: 3 }),
  gap: fc.integer({ min: 0, max: 3 }),
  range: fc.tuple(fc.nat({ max: 20 }), fc.nat({ max: 80 })),
});

const SCHEMA = {
  type: 'struct' as const,
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' as const },
    { id: 2, name: 'name', required: false, type: 'string' as const },
  ],
};

/**
 * An ESM event of `records` on partition 0 of `topic`, at offsets `offsets`; record k's id is
 * 7·offset mod 13, so an upsert table updates rows of earlier batches; an upsert table's key is the
 * id's (a record without one would be a dead letter).
 */
function eventOf(topic: string, records: GenRecord[], offsets: number[], keyed: boolean): unknown {
  return {
    eventSource: 'aws:kafka',
    records: {
      [`${topic}-0`]: records.map((r, i) => ({
        topic,
        partition: 0,
        offset: offsets[i],
        timestamp: r.timestamp,
        timestampType: 'CREATE_TIME',
        ...(keyed
          ? { key: Buffer.from(JSON.stringify({ id: (offsets[i] * 7) % 13 })).toString('base64') }
          : r.key === null
            ? {}
            : { key: Buffer.from(r.key).toString('base64') }),
        // Spaced: kept bytes differ from the value re-encoded.
        value: Buffer.from(JSON.stringify({ id: (offsets[i] * 7) % 13, name: r.name }, null, 1)).toString(
          'base64',
        ),
        headers: r.headers.map(([k, v]) => ({ [k]: v })),
      })),
    },
  };
}

/** The row path kafka-serve took before: readScan's rows read by lineageOf, in offset order, each once. */
async function rowPathRecords(table: LoadedTable, from: bigint, to: bigint): Promise<ColdRecord[]> {
  const filter = rangeFilter('t', 0, from, to);
  const snapshot = currentSnapshot(table.metadata);
  if (!snapshot) return [];
  const plan = await planScan(table, { filter, snapshotId: snapshot['snapshot-id'] });
  const encode = formatReplayValue(currentSchema(table.metadata));
  const out = (await readScanRows(table, plan, { filter })).map((row): ColdRecord => {
    const lineage = lineageOf(row);
    const kept = (row[KAFKA_FIELD] as Row | null)?.[KAFKA_VALUE_FIELD];
    return {
      offset: lineage.offset,
      timestampMs: lineage.timestampMs === undefined ? -1n : BigInt(lineage.timestampMs),
      key: lineage.key === null ? null : Buffer.from(lineage.key),
      value: kept instanceof Uint8Array ? Buffer.from(kept) : Buffer.from(encode(row)),
      headers: lineage.headers.map((h) => ({
        key: h.key,
        value: h.value === null ? null : Buffer.from(h.value),
      })),
    };
  });
  out.sort((a, b) => (a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0));
  return out.filter((r, i) => i === 0 || r.offset !== out[i - 1].offset);
}

async function encoded(records: ColdRecord[]): Promise<Buffer[]> {
  return Promise.all(groupIntoBatches(records).map(buildBatch));
}

describe('kafka-serve cold records from columns', () => {
  it('are the row path’s records and batches, over generated tables', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        // Prepare: the batches ingested one after another, offsets with gaps, kafkaValue from a batch on
        const wh = await tempWarehouse();
        try {
          const route = (kafkaValue: boolean): TableRoute => ({
            table: { namespace: ['app'], name: 'events' },
            topics: ['t'],
            schema: SCHEMA,
            kafkaLineage: true,
            kafkaValue,
            properties: { 'floe.delete-mode': c.deleteMode },
            ...(c.mode === 'upsert' ? { mode: 'upsert' as const, identifierColumns: ['id'] } : {}),
          });
          let next = 0;
          for (const [b, batch] of c.batches.entries()) {
            const offsets = batch.map(() => {
              next += 1 + ((next * 7) % (c.gap + 1));
              return next;
            });
            await ingestEvent(
              { catalog: wh.catalog, routes: [route(b >= c.valueFrom)] },
              eventOf('t', batch, offsets, c.mode === 'upsert'),
            );
          }
          const table = await wh.catalog.loadTable({ namespace: ['app'], name: 'events' });
          const [from, to] = c.range.map(BigInt);
          const records = new TableRecords((t) => {
            const encode = formatReplayValue(currentSchema(t.metadata));
            return (row) => Buffer.from(encode(row));
          });
          // Act
          const served = await records.read(table, 't', 0, from, to);
          // Assess
          const expected = await rowPathRecords(table, from, to);
          expect(served).toEqual(expected);
          expect(await encoded(served)).toEqual(await encoded(expected));
        } finally {
          await wh.cleanup();
        }
      }),
      { seed: 3303, numRuns: 10 },
    );
  }, 60_000);

  it('writes each value as the display row’s JSON, names in JSON.stringify’s order', () => {
    // Prepare: every type the fast paths take, a nested struct, a list, integer-like names
    const type: StructType = {
      type: 'struct',
      fields: [
        { id: 1, name: 'b', required: false, type: 'string' },
        { id: 2, name: '10', required: false, type: 'long' },
        { id: 3, name: '2', required: false, type: 'double' },
        { id: 4, name: 'flag', required: false, type: 'boolean' },
        { id: 5, name: 'n', required: false, type: 'int' },
        {
          id: 6,
          name: 'inner',
          required: false,
          type: { type: 'struct', fields: [{ id: 7, name: 'at', required: false, type: 'timestamptz' }] },
        },
        {
          id: 8,
          name: 'tags',
          required: false,
          type: { type: 'list', 'element-id': 9, 'element-required': false, element: 'string' },
        },
        { id: 10, name: 'money', required: false, type: 'decimal(20, 2)' },
      ],
    };
    const rowArb = fc.record({
      b: fc.option(fc.string({ unit: 'grapheme' }), { nil: null }),
      '10': fc.option(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), { nil: null }),
      '2': fc.option(fc.double(), { nil: null }),
      flag: fc.option(fc.boolean(), { nil: null }),
      n: fc.option(fc.integer(), { nil: null }),
      inner: fc.option(fc.record({ at: fc.option(fc.bigInt({ min: 0n, max: 2n ** 52n }), { nil: null }) }), {
        nil: null,
      }),
      tags: fc.option(fc.array(fc.option(fc.string(), { nil: null })), { nil: null }),
      money: fc.option(fc.bigInt({ min: -(10n ** 19n), max: 10n ** 19n }), { nil: null }),
    });
    const write = compileDisplayJson(type);
    fc.assert(
      fc.property(rowArb, (row) => {
        // Act + Assess
        expect(write(row as Row)).toBe(stringifyJson(toDisplayRow(type, row as Row)));
      }),
      { seed: 3304, numRuns: 300 },
    );
  });

  it('checksums as CRC-32C: the check value, and kafkajs’s bytewise table on any bytes at any alignment', () => {
    // Act + Assess
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(0))).toBe(0);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), fc.nat({ max: 7 }), (bytes, skip) => {
        const view = bytes.subarray(Math.min(skip, bytes.length));
        expect(crc32c(view)).toBe(crc32C(Buffer.from(view)));
      }),
      { seed: 3305, numRuns: 300 },
    );
  });

  it('encode to kafkajs’s batch for any offsets, timestamps, keys and headers (deltas past 2^52 too)', async () => {
    // Prepare: kafkajs's record and batch encoders (headers keyed by name, no null values: distinct
    // names with bytes here; interleaved names and null values are the protocol test's)
    const encodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0') as (r: unknown) => unknown;
    const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0') as {
      RecordBatch: (b: unknown) => Promise<{ buffer: Buffer }>;
    };
    const bytesArb = fc.option(
      fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
      { nil: null },
    );
    const recordsArb = fc.record({
      base: fc.oneof(fc.bigInt({ min: 0n, max: 1000n }), fc.bigInt({ min: 2n ** 53n, max: 2n ** 62n })),
      gaps: fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 20 }),
      stamps: fc.array(
        fc.oneof(
          fc.constant(-1n),
          fc.bigInt({ min: 0n, max: 2n ** 41n }),
          fc.bigInt({ min: 2n ** 53n, max: 2n ** 60n }),
        ),
        { minLength: 20, maxLength: 20 },
      ),
      keys: fc.array(bytesArb, { minLength: 20, maxLength: 20 }),
      values: fc.array(bytesArb, { minLength: 20, maxLength: 20 }),
      headers: fc.array(
        fc.dictionary(
          fc.string({ unit: 'grapheme', maxLength: 4 }),
          fc.uint8Array({ maxLength: 8 }).map((b) => Buffer.from(b)),
          { maxKeys: 3 },
        ),
        {
          minLength: 20,
          maxLength: 20,
        },
      ),
    });
    await fc.assert(
      fc.asyncProperty(recordsArb, async (g) => {
        let offset = g.base;
        const records: ColdRecord[] = g.gaps.map((gap, i) => {
          offset += BigInt(gap);
          return {
            offset,
            timestampMs: g.stamps[i],
            key: g.keys[i],
            value: g.values[i],
            headers: Object.entries(g.headers[i]).map(([key, value]) => ({ key, value })),
          };
        });
        const first = records[0];
        let maxTimestamp = first.timestampMs;
        for (const r of records) if (r.timestampMs > maxTimestamp) maxTimestamp = r.timestampMs;
        // Act
        const ours = await buildBatch(records);
        const theirs = await RecordBatch({
          firstOffset: first.offset,
          firstTimestamp: first.timestampMs,
          maxTimestamp,
          partitionLeaderEpoch: -1,
          lastOffsetDelta: Number(records[records.length - 1].offset - first.offset),
          producerId: -1n,
          producerEpoch: -1,
          firstSequence: -1,
          records: records.map((r) =>
            encodeRecord({
              offsetDelta: Number(r.offset - first.offset),
              timestampDelta: r.timestampMs - first.timestampMs,
              key: r.key,
              value: r.value,
              headers: Object.fromEntries(r.headers.map((h) => [h.key, h.value])),
            }),
          ),
        });
        // Assess
        expect(ours.toString('hex')).toBe(theirs.buffer.toString('hex'));
      }),
      { seed: 3306, numRuns: 150 },
    );
  });

  it('write Fetch answers (v4–v11) that read back as they were, sized exactly', () => {
    // Prepare
    const long = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
    const responseArb = fc.record({
      version: fc.integer({ min: 4, max: 11 }),
      response: fc.record({
        throttleMs: fc.nat(),
        errorCode: fc.integer({ min: -1, max: 100 }),
        sessionId: fc.nat(),
        topics: fc.array(
          fc.record({
            topic: fc.string({ unit: 'grapheme', maxLength: 8 }),
            partitions: fc.array(
              fc.record({
                partition: fc.nat(),
                errorCode: fc.integer({ min: -1, max: 100 }),
                highWatermark: long,
                lastStableOffset: long,
                logStartOffset: long,
                abortedTransactions: fc.option(
                  fc.array(fc.record({ producerId: long, firstOffset: long }), { maxLength: 2 }),
                  { nil: null },
                ),
                preferredReadReplica: fc.integer({ min: -1, max: 5 }),
                records: fc.option(
                  fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
                  { nil: null },
                ),
              }),
              { maxLength: 3 },
            ),
          }),
          { maxLength: 3 },
        ),
      }),
    });
    fc.assert(
      fc.property(responseArb, ({ version, response }) => {
        // Act
        const bytes = encodeFetchResponse(version, response);
        const decoder = new Decoder(bytes);
        const back = decodeFetchResponse(version, decoder);
        // Assess: what the version carries comes back, and nothing is left over
        const expected: FetchResponse = {
          ...response,
          errorCode: version >= 7 ? response.errorCode : 0,
          sessionId: version >= 7 ? response.sessionId : 0,
          topics: response.topics.map((t) => ({
            ...t,
            partitions: t.partitions.map((p) => ({
              ...p,
              logStartOffset: version >= 5 ? p.logStartOffset : -1n,
              preferredReadReplica: version >= 11 ? p.preferredReadReplica : -1,
            })),
          })),
        };
        expect(back).toEqual(expected);
        expect(decoder.offset).toBe(bytes.length);
      }),
      { seed: 3307, numRuns: 200 },
    );
  });
});
