/**
 * A client's Fetch split three ways: partitions answered from the table (cold), partitions out of
 * range, and partitions forwarded to their upstream leaders (one Fetch per leader, sessionless) —
 * then merged back in the request's order. When any cold partition has records the forwarded part
 * does not wait (max wait 0), so cold data never sits behind a long poll.
 */
import { type ColdBatches, MAX_COLD_RESPONSE_BYTES } from './cold-batches.js';
import type { ColdView } from './cold-view.js';
import {
  decodeFetchResponse,
  encodeFetchRequest,
  type FetchPartitionRequest,
  type FetchPartitionResponse,
  type FetchRequest,
} from './fetch-messages.js';
import { Decoder, KafkaErrorCode } from './kafkajs-protocol.js';
import { decodeListOffsetsResponse, encodeListOffsetsRequest } from './messages.js';
import type { LinkPool, UpstreamCluster, UpstreamLink } from './upstream.js';
import { ApiKey } from './wire.js';

const EARLIEST = -2n;
const LATEST = -1n;

function emptyPartition(partition: number, errorCode: number): FetchPartitionResponse {
  return {
    partition,
    errorCode,
    highWatermark: -1n,
    lastStableOffset: -1n,
    logStartOffset: -1n,
    abortedTransactions: null,
    preferredReadReplica: -1,
    // Empty, not null: librdkafka refuses a null record set even beside an error, as brokers never send one.
    records: Buffer.alloc(0),
  };
}

export class FetchRouter {
  constructor(
    private readonly cluster: UpstreamCluster,
    private readonly cold: ColdView,
    private readonly batches: ColdBatches,
  ) {}

  /** The real partition's offsets (log start, high watermark, last stable) from its leader. */
  private async watermarks(link: UpstreamLink, topic: string, partition: number, isolation: number) {
    const ask = async (timestamp: bigint, isolationLevel: number) => {
      const body = encodeListOffsetsRequest(2, {
        replicaId: -1,
        isolationLevel,
        topics: [{ name: topic, partitions: [{ partition, currentLeaderEpoch: -1, timestamp }] }],
      });
      const answer = decodeListOffsetsResponse(
        2,
        new Decoder(await link.request(ApiKey.ListOffsets, 2, body)),
      );
      const p = answer.topics[0]?.partitions[0];
      return p && p.errorCode === 0 ? p.offset : -1n;
    };
    const [logStart, high, stable] = await Promise.all([
      ask(EARLIEST, 0),
      ask(LATEST, 0),
      isolation === 1 ? ask(LATEST, 1) : Promise.resolve(undefined),
    ]);
    return { logStart, high, stable: stable ?? high };
  }

  /** The real partition's offsets from its leader; -1 each when it has none. */
  private async marksOf(topic: string, partition: number, isolation: number) {
    const leader = await this.cluster.leaderOf(topic, partition);
    if (leader === undefined) return { logStart: -1n, high: -1n, stable: -1n };
    return this.watermarks(this.cluster.linkTo(leader), topic, partition, isolation);
  }

  /**
   * The response partitions for a decoded Fetch, in request order. The forwarded part goes on the
   * client connection's own `links`: a broker answers one connection's requests in order, so a long
   * poll on a shared link would hold up every other client's requests (and the watermarks asked here)
   * for up to its max wait.
   * @throws UpstreamError when a leader cannot be reached
   */
  async route(
    version: number,
    request: FetchRequest,
    links?: LinkPool,
  ): Promise<Map<string, FetchPartitionResponse[]>> {
    const answers = new Map<string, Map<number, FetchPartitionResponse>>();
    const forward = new Map<number, Map<string, FetchPartitionRequest[]>>();
    // Capped whatever the client asks: memory stays bounded, and a client fetches again for more.
    let budget = Math.min(request.maxBytes, MAX_COLD_RESPONSE_BYTES);
    let coldBytes = 0;
    const marking: Promise<void>[] = [];
    const put = (topic: string, r: FetchPartitionResponse) => {
      const m = answers.get(topic) ?? new Map<number, FetchPartitionResponse>();
      answers.set(topic, m);
      m.set(r.partition, r);
    };
    const toLeader = async (topic: string, p: FetchPartitionRequest) => {
      const leader = await this.cluster.leaderOf(topic, p.partition);
      if (leader === undefined)
        return put(topic, emptyPartition(p.partition, KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
      const byTopic = forward.get(leader) ?? new Map<string, FetchPartitionRequest[]>();
      forward.set(leader, byTopic);
      byTopic.set(topic, [...(byTopic.get(topic) ?? []), p]);
    };
    for (const t of request.topics) {
      for (const p of t.partitions) {
        const decision = await this.cold.decide(t.topic, p.partition, p.fetchOffset);
        if (decision.kind === 'out-of-range') {
          put(t.topic, emptyPartition(p.partition, KafkaErrorCode.OFFSET_OUT_OF_RANGE));
          continue;
        }
        if (decision.kind === 'upstream') {
          await toLeader(t.topic, p);
          continue;
        }
        // The first partition with records gets at least one batch (KIP-74); once the answer is full,
        // the rest get none this time.
        const limit =
          coldBytes === 0 ? Math.max(1, Math.min(p.maxBytes, budget)) : Math.min(p.maxBytes, budget);
        const held =
          limit <= 0
            ? undefined
            : await this.batches.read(
                decision.table,
                t.topic,
                p.partition,
                p.fetchOffset,
                decision.last,
                limit,
              );
        if (held?.length === 0) {
          // The rest of the cold range holds nothing (dead letters, filtered records): read on from the
          // cluster; a client accepts records past its fetch offset, as after compaction.
          await toLeader(t.topic, { ...p, fetchOffset: decision.last + 1n });
          continue;
        }
        const records = Buffer.concat(held ?? []);
        budget -= records.length;
        coldBytes += records.length;
        // Asked of the leaders for every cold partition at once, not one round trip after another.
        const marked = this.marksOf(t.topic, p.partition, request.isolationLevel).then((marks) =>
          put(t.topic, {
            partition: p.partition,
            errorCode: KafkaErrorCode.NONE,
            highWatermark: marks.high,
            lastStableOffset: marks.stable,
            logStartOffset: marks.logStart,
            abortedTransactions: request.isolationLevel === 1 ? [] : null,
            preferredReadReplica: -1,
            records,
          }),
        );
        // Handled here so a failure before the Promise.all below is not an unhandled rejection.
        marked.catch(() => undefined);
        marking.push(marked);
      }
    }
    await Promise.all([
      ...marking,
      ...[...forward].map(async ([leader, byTopic]) => {
        const part: FetchRequest = {
          ...request,
          maxWaitMs: coldBytes > 0 ? 0 : request.maxWaitMs,
          minBytes: coldBytes > 0 ? 0 : request.minBytes,
          // Sessionless full fetches: the proxy keeps no fetch sessions, which a broker may always decline.
          sessionId: 0,
          sessionEpoch: -1,
          topics: [...byTopic].map(([topic, partitions]) => ({ topic, partitions })),
          forgotten: [],
        };
        const answer = decodeFetchResponse(
          version,
          new Decoder(
            await this.cluster
              .linkTo(leader, links)
              .request(ApiKey.Fetch, version, encodeFetchRequest(version, part)),
          ),
        );
        for (const t of answer.topics) {
          for (const p of t.partitions) {
            if (p.errorCode === KafkaErrorCode.NOT_LEADER_OR_FOLLOWER) this.cluster.forgetLeaders();
            put(t.topic, p);
          }
        }
      }),
    ]);
    const out = new Map<string, FetchPartitionResponse[]>();
    for (const t of request.topics) {
      out.set(
        t.topic,
        t.partitions.map(
          (p) =>
            answers.get(t.topic)?.get(p.partition) ??
            emptyPartition(p.partition, KafkaErrorCode.NOT_LEADER_OR_FOLLOWER),
        ),
      );
    }
    return out;
  }
}
