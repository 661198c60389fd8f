/**
 * What kafka-serve writes on the wire, read back by readers it did not write: kafkajs's own Fetch v11
 * and Metadata v6 response decoders (which parse magic-v2 batches into messages), and a CRC-32C
 * computed here from the polynomial, since kafkajs's batch decoder skips the CRC.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { encodeFetchResponse } from '../../../functions/core/kafka/serve/fetch-messages.js';
import { type CachedBatch, sliceBatches } from '../../../functions/core/kafka/serve/cold-batches.js';
import { rewriteMetadata } from '../../../functions/core/kafka/serve/kafka-proxy.js';
import {
  encodeMetadataResponse,
  type MetadataResponse,
} from '../../../functions/core/kafka/serve/messages.js';
import {
  buildBatch,
  type ColdRecord,
  groupIntoBatches,
  MAX_BATCH_RECORDS,
} from '../../../functions/core/kafka/serve/record-batches.js';

const require = createRequire(import.meta.url);

interface DecodedMessage {
  offset: string;
  timestamp: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer | Buffer[]>;
}
interface DecodedFetch {
  responses: { topicName: string; partitions: { partition: number; messages: DecodedMessage[] }[] }[];
}
const fetchV11 = require('kafkajs/src/protocol/requests/fetch/v11/response') as {
  decode(raw: Buffer): Promise<DecodedFetch>;
};
const metadataV6 = require('kafkajs/src/protocol/requests/metadata/v6/response') as {
  decode(raw: Buffer): Promise<{
    brokers: { nodeId: number; host: string; port: number }[];
    controllerId: number;
    topicMetadata: {
      topic: string;
      partitionMetadata: { partitionId: number; leader: number; replicas: number[] }[];
    }[];
  }>;
};

/** CRC-32C (Castagnoli, reflected 0x82F63B78), bit by bit: slow and plain, independent of kafkajs. */
function crc32c(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function record(offset: bigint, i: number): ColdRecord {
  return {
    offset,
    timestampMs: 1_767_225_600_000n + BigInt(i * 7),
    key: i % 3 === 0 ? null : Buffer.from(`key-${i}`),
    value: Buffer.from(JSON.stringify({ id: i })),
    headers: [
      { key: 'seq', value: Buffer.from(String(i)) },
      { key: 'bin', value: Buffer.from([0, 255, 128]) },
    ],
  };
}

async function decodeThroughKafkajs(records: Buffer): Promise<DecodedMessage[]> {
  const body = encodeFetchResponse(11, {
    throttleMs: 0,
    errorCode: 0,
    sessionId: 0,
    topics: [
      {
        topic: 't',
        partitions: [
          {
            partition: 0,
            errorCode: 0,
            highWatermark: 1000n,
            lastStableOffset: 1000n,
            logStartOffset: 0n,
            abortedTransactions: null,
            preferredReadReplica: -1,
            records,
          },
        ],
      },
    ],
  });
  return (await fetchV11.decode(body)).responses[0].partitions[0].messages;
}

describe('kafka-serve record batches', () => {
  it('carry the original offsets across gaps, keys, headers and timestamps, with a valid CRC-32C', async () => {
    // Prepare
    const offsets = [7n, 8n, 10n, 15n, 16n];
    const records = offsets.map((o, i) => record(o, i));
    // Act
    const batch = await buildBatch(records);
    const messages = await decodeThroughKafkajs(batch);
    // Assess
    expect(batch.readBigInt64BE(0)).toBe(7n);
    expect(batch.readInt8(16)).toBe(2);
    expect(batch.readUInt32BE(17)).toBe(crc32c(batch.subarray(21)));
    expect(batch.readInt32BE(23)).toBe(9); // last offset delta
    expect(batch.readBigInt64BE(43)).toBe(-1n); // producer id
    expect(batch.readInt16BE(51)).toBe(-1); // producer epoch
    expect(batch.readInt32BE(53)).toBe(-1); // base sequence
    expect(messages.map((m) => BigInt(m.offset))).toEqual(offsets);
    expect(messages.map((m) => m.key?.toString() ?? null)).toEqual(
      records.map((r) => r.key?.toString() ?? null),
    );
    expect(messages.map((m) => m.timestamp)).toEqual(records.map((r) => String(r.timestampMs)));
    expect(messages.map((m) => m.value?.toString())).toEqual(records.map((r) => r.value?.toString()));
    expect(messages.map((m) => [m.headers.seq.toString(), [...(m.headers.bin as Buffer)]])).toEqual(
      records.map((_, i) => [String(i), [0, 255, 128]]),
    );
  });

  it("are byte for byte kafkajs's own encoders' batch for the same records", async () => {
    // Prepare: kafkajs's record and batch encoders (headers keyed by name, so none interleaved here)
    const encodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0') as (r: unknown) => unknown;
    const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0') as {
      RecordBatch: (b: unknown) => Promise<{ buffer: Buffer }>;
    };
    const offsets = [100n, 101n, 104n, 300n];
    const records = offsets.map((o, i) => record(o, i));
    const base = records[0].timestampMs;
    // Act
    const ours = await buildBatch(records);
    const theirs = await RecordBatch({
      firstOffset: 100n,
      firstTimestamp: base,
      maxTimestamp: records.reduce((m, r) => (r.timestampMs > m ? r.timestampMs : m), base),
      partitionLeaderEpoch: -1,
      lastOffsetDelta: 200,
      producerId: -1n,
      producerEpoch: -1,
      firstSequence: -1,
      records: records.map((r) =>
        encodeRecord({
          offsetDelta: Number(r.offset - 100n),
          timestampDelta: r.timestampMs - base,
          key: r.key,
          value: r.value,
          headers: Object.fromEntries(r.headers.map((h) => [h.key, h.value])),
        }),
      ),
    });
    // Assess
    expect(ours.equals(theirs.buffer)).toBe(true);
  });

  it('keep headers in their order, interleaved names and null values included', async () => {
    // Prepare
    const headers = [
      { key: 'a', value: Buffer.from('1') },
      { key: 'ü', value: null },
      { key: 'a', value: Buffer.from('2') },
    ];
    // Act
    const batch = await buildBatch([{ ...record(5n, 1), headers }]);
    // Assess: walk the one record by hand (zigzag varints) to its headers
    let at = 61;
    const varint = () => {
      let u = 0;
      let shift = 0;
      for (;;) {
        const b = batch[at++];
        u |= (b & 0x7f) << shift;
        if (b < 0x80) break;
        shift += 7;
      }
      return (u >>> 1) ^ -(u & 1);
    };
    const bytes = () => {
      const n = varint();
      if (n < 0) return null;
      at += n;
      return batch.subarray(at - n, at);
    };
    varint(); // record length
    at++; // attributes
    varint(); // timestamp delta (small here)
    varint(); // offset delta
    bytes(); // key
    bytes(); // value
    const count = varint();
    const got = Array.from({ length: count }, () => [bytes()?.toString('utf8'), bytes()?.toString() ?? null]);
    expect(got).toEqual([
      ['a', '1'],
      ['ü', null],
      ['a', '2'],
    ]);
    expect(at).toBe(batch.length);
  });

  it("slices cached batches: from the one holding the offset, before a partition's max bytes, at least one", async () => {
    // Prepare
    const records = Array.from({ length: MAX_BATCH_RECORDS * 3 }, (_, i) => record(BigInt(100 + 2 * i), i));
    const batches: CachedBatch[] = [];
    for (const group of groupIntoBatches(records))
      batches.push({
        base: group[0].offset,
        last: group[group.length - 1].offset,
        bytes: await buildBatch(group),
      });
    const secondBase = batches[1].base;
    const all = Buffer.concat(sliceBatches(batches, 0n, 10_000_000).batches);
    const limit = Math.floor(all.length / 2);
    // Act
    const one = Buffer.concat(sliceBatches(batches, 0n, 1).batches);
    const half = Buffer.concat(sliceBatches(batches, 0n, limit).batches);
    const fromMiddle = Buffer.concat(sliceBatches(batches, secondBase + 2n, 10_000_000).batches);
    // Assess
    expect((await decodeThroughKafkajs(one)).length).toBe(MAX_BATCH_RECORDS);
    expect((await decodeThroughKafkajs(all)).map((m) => BigInt(m.offset))).toEqual(
      records.map((r) => r.offset),
    );
    expect(half.length).toBeLessThanOrEqual(limit);
    expect((await decodeThroughKafkajs(half)).length).toBe(MAX_BATCH_RECORDS);
    // The batch holding the offset comes whole: the client skips the records before its offset.
    expect((await decodeThroughKafkajs(fromMiddle)).map((m) => BigInt(m.offset))).toEqual(
      records.filter((r) => r.offset >= secondBase).map((r) => r.offset),
    );
  });
});

describe('kafka-serve Metadata rewrite', () => {
  it('shows one broker, this endpoint, leading every partition that has a leader', async () => {
    // Prepare
    const upstream: MetadataResponse = {
      throttleMs: 0,
      brokers: [1, 2, 3].map((nodeId) => ({ nodeId, host: '10.0.0.9', port: 9090 + nodeId, rack: 'az1' })),
      clusterId: 'c',
      controllerId: 2,
      topics: [
        {
          errorCode: 0,
          name: 'orders',
          internal: false,
          partitions: [
            {
              errorCode: 0,
              partition: 0,
              leader: 3,
              leaderEpoch: 5,
              replicas: [3, 1],
              isr: [3, 1],
              offline: [],
            },
            { errorCode: 5, partition: 1, leader: -1, leaderEpoch: 5, replicas: [2], isr: [], offline: [2] },
          ],
          authorizedOperations: 0,
        },
      ],
      clusterAuthorizedOperations: 0,
    };
    // Act
    const body = encodeMetadataResponse(6, rewriteMetadata(upstream, { host: '127.0.0.1', port: 19092 }));
    const decoded = await metadataV6.decode(body);
    // Assess
    expect(decoded.brokers).toEqual([expect.objectContaining({ nodeId: 0, host: '127.0.0.1', port: 19092 })]);
    expect(decoded.controllerId).toBe(0);
    expect(
      decoded.topicMetadata[0].partitionMetadata.map((p) => [p.partitionId, p.leader, p.replicas]),
    ).toEqual([
      [0, 0, [0]],
      [1, -1, [0]],
    ]);
  });
});
