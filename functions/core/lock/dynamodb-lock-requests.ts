/**
 * The DynamoDB requests of the commit lock (see dynamodb-lock.ts), as plain inputs so their conditions
 * can be read and tested on their own, plus the backoff and error classification the lock retries by.
 */
import type { UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
import { classifyAwsError } from '../io/aws-errors.js';

const BACKOFF_BASE_MS = 25;
const BACKOFF_CAP_MS = 1_000;

/** The attribute names of a lock item, for tests and tools that read the table. */
export const LOCK_ATTRIBUTES = {
  key: 'pk',
  owner: 'lockOwner',
  leaseExpiresAt: 'leaseExpiresAt',
  fencingVersion: 'fencingVersion',
  ttl: 'expiresAt',
  lastCommit: 'lastCommit',
} as const;

const NAMES = {
  '#pk': LOCK_ATTRIBUTES.key,
  '#owner': LOCK_ATTRIBUTES.owner,
  '#lease': LOCK_ATTRIBUTES.leaseExpiresAt,
  '#fence': LOCK_ATTRIBUTES.fencingVersion,
  '#ttl': LOCK_ATTRIBUTES.ttl,
};

/**
 * The conditional acquire: free, lapsed, or already ours (a retry of a request whose answer was lost).
 * ADD makes the fencing version count every acquisition, takeovers included.
 */
export function buildAcquireInput(
  tableName: string,
  key: string,
  owner: string,
  nowMs: number,
  leaseMs: number,
  itemTtlMs: number,
): UpdateItemCommandInput {
  return {
    TableName: tableName,
    Key: { [LOCK_ATTRIBUTES.key]: { S: key } },
    UpdateExpression: 'SET #owner = :owner, #lease = :lease, #ttl = :ttl ADD #fence :one',
    ConditionExpression: 'attribute_not_exists(#pk) OR #lease < :now OR #owner = :owner',
    ExpressionAttributeNames: NAMES,
    ExpressionAttributeValues: {
      ':owner': { S: owner },
      ':lease': { N: String(nowMs + leaseMs) },
      ':ttl': { N: String(ttlSeconds(nowMs + leaseMs + itemTtlMs)) },
      ':now': { N: String(nowMs) },
      ':one': { N: '1' },
    },
    ReturnValues: 'ALL_NEW',
  };
}

/** Extends the lease only while this owner still holds it. */
export function buildHeartbeatInput(
  tableName: string,
  key: string,
  owner: string,
  nowMs: number,
  leaseMs: number,
  itemTtlMs: number,
): UpdateItemCommandInput {
  return {
    TableName: tableName,
    Key: { [LOCK_ATTRIBUTES.key]: { S: key } },
    UpdateExpression: 'SET #lease = :lease, #ttl = :ttl',
    ConditionExpression: '#owner = :owner',
    ExpressionAttributeNames: { '#owner': NAMES['#owner'], '#lease': NAMES['#lease'], '#ttl': NAMES['#ttl'] },
    ExpressionAttributeValues: {
      ':owner': { S: owner },
      ':lease': { N: String(nowMs + leaseMs) },
      ':ttl': { N: String(ttlSeconds(nowMs + leaseMs + itemTtlMs)) },
    },
  };
}

/** Frees the lock if this owner still holds it, keeping the fencing version (see the module comment). */
export function buildReleaseInput(
  tableName: string,
  key: string,
  owner: string,
  nowMs: number,
  itemTtlMs: number,
  current?: string,
): UpdateItemCommandInput {
  // The table's location as this holder leaves it, for the next holder (LockLease.lastCommit); a holder
  // that does not know it removes the previous one.
  return {
    TableName: tableName,
    Key: { [LOCK_ATTRIBUTES.key]: { S: key } },
    UpdateExpression:
      current === undefined
        ? 'SET #lease = :zero, #ttl = :ttl REMOVE #owner, #last'
        : 'SET #lease = :zero, #ttl = :ttl, #last = :last REMOVE #owner',
    ConditionExpression: '#owner = :owner',
    ExpressionAttributeNames: {
      '#owner': NAMES['#owner'],
      '#lease': NAMES['#lease'],
      '#ttl': NAMES['#ttl'],
      '#last': LOCK_ATTRIBUTES.lastCommit,
    },
    ExpressionAttributeValues: {
      ':owner': { S: owner },
      ':zero': { N: '0' },
      ':ttl': { N: String(ttlSeconds(nowMs + itemTtlMs)) },
      ...(current === undefined ? {} : { ':last': { S: current } }),
    },
  };
}

/** Full-jitter exponential backoff (AWS Architecture Blog): spreads 8+ racing writers apart. */
export function computeBackoffMs(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(attempt, 16));
  return Math.floor(random() * ceiling) + 1;
}

function ttlSeconds(epochMs: number): number {
  return Math.ceil(epochMs / 1000);
}

/**
 * True for errors after which the same request may succeed: throttling, 5xx, network, and a conflict
 * with a transaction on the item (it ends soon). A failed condition is not one: it means another owner.
 */
export function isTransientDynamoError(error: unknown): boolean {
  const aws = classifyAwsError(error);
  return aws.retryable || (aws.kind === 'conflict' && aws.name !== 'ConditionalCheckFailedException');
}
