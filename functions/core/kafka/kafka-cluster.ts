/**
 * kafkajs's cluster (metadata, leaders, brokers), for reads without a consumer group.
 *
 * Written by hand because kafkajs has no group-free consumer (no `assign()`): every consumer joins a
 * group, and a new group's first join waits the broker's `group.initial.rebalance.delay.ms` (3 s by
 * default) — a live read paid that on every poll. The Fetch request itself is kafkajs's own (its
 * broker encodes it, decodes record batches, decompresses, and drops aborted transactions the way its
 * consumer does); only the way in is private: the `Kafka` instance keeps its cluster factory under a
 * symbol, and the filter of aborted transactions is required from kafkajs's `src/`. Neither is kafkajs's
 * API, so this file is tied to the release it was written against (2.2.4, its last, which package.json
 * pins): loading it with another kafkajs installed fails at once, naming both versions, rather than
 * at the first read with whatever a moved private module throws.
 */
import { createRequire } from 'node:module';
import type { Kafka, KafkaMessage } from 'kafkajs';
import { LakeError } from '../errors.js';

/** A record as kafkajs's Fetch decodes it, with the record batch it came in. */
export type FetchedMessage = KafkaMessage & {
  isControlRecord?: boolean;
  batchContext?: { firstOffset: string; lastOffsetDelta: number };
};

export interface FetchedPartition {
  partition: number;
  highWatermark: string;
  abortedTransactions?: unknown[];
  messages: FetchedMessage[];
}

export interface FetchRequest {
  replicaId?: number;
  isolationLevel: number;
  maxWaitTime: number;
  minBytes: number;
  maxBytes: number;
  topics: { topic: string; partitions: { partition: number; fetchOffset: string; maxBytes: number }[] }[];
}

export interface KafkaBroker {
  fetch(
    request: FetchRequest,
  ): Promise<{ responses: { topicName: string; partitions: FetchedPartition[] }[] }>;
}

export interface KafkaCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  addMultipleTargetTopics(topics: string[]): Promise<void>;
  refreshMetadata(): Promise<void>;
  /** Leader node id → the partitions it leads. */
  findLeaderForPartitions(topic: string, partitions: number[]): Record<string, number[]>;
  findBroker(node: { nodeId: string }): Promise<KafkaBroker>;
}

/** The kafkajs release whose private cluster factory and aborted-record filter this file uses. */
export const KAFKAJS_VERSION = '2.2.4';

/**
 * Refuses a kafkajs other than KAFKAJS_VERSION (`found` is the installed package's version).
 * @throws LakeError (not retryable) naming the expected and the found version
 */
export function checkKafkajsVersion(found: unknown): void {
  if (found === KAFKAJS_VERSION) return;
  throw new LakeError(
    `kafkajs ${typeof found === 'string' ? found : '(version unknown)'} is installed, but floe reads offset ranges through private parts of kafkajs ${KAFKAJS_VERSION} (its cluster factory and aborted-record filter): install kafkajs ${KAFKAJS_VERSION}, the version package.json pins`,
    { retryable: false },
  );
}

const require = createRequire(import.meta.url);
checkKafkajsVersion((require('kafkajs/package.json') as { version?: unknown }).version);

/** Kafka's READ_COMMITTED: records of open or aborted transactions are not handed out. */
export const READ_COMMITTED = 1;

const CREATE_CLUSTER = 'private:Kafka:createCluster';

/**
 * A new cluster handle of `kafka` (same brokers, SASL, TLS, retry and logger as its clients).
 * @throws LakeError when this kafkajs does not keep its cluster factory where 2.2.x does
 */
export function openCluster(kafka: Kafka): KafkaCluster {
  const symbol = Object.getOwnPropertySymbols(kafka).find((s) => s.description === CREATE_CLUSTER);
  const create = symbol === undefined ? undefined : (kafka as unknown as Record<symbol, unknown>)[symbol];
  if (typeof create !== 'function') {
    throw new LakeError(
      'this kafkajs does not expose its cluster the way kafkajs 2.2 does; floe reads offset ranges through it (install the kafkajs version package.json pins)',
      { retryable: false },
    );
  }
  return create({ allowAutoTopicCreation: false, isolationLevel: READ_COMMITTED }) as KafkaCluster;
}

/** kafkajs's own filter of aborted transactions' records (its consumer's, by the fetch's aborted list). */
export const filterAbortedMessages = require('kafkajs/src/consumer/filterAbortedMessages') as (batch: {
  messages: FetchedMessage[];
  abortedTransactions?: unknown[];
}) => FetchedMessage[];
