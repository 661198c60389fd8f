/**
 * A commit lock on DynamoDB, after Iceberg Java's DynamoDbLockManager: one item per key, taken with a
 * conditional write, kept alive by a heartbeat, released by its owner only.
 *
 * Item: `pk` (the key), `lockOwner` (a random id per lease), `leaseExpiresAt` (epoch ms),
 * `fencingVersion` (a number ADDed on every acquisition, takeovers included), `expiresAt` (epoch seconds,
 * the table's TTL attribute, well after the lease, so the items of dead writers vanish), `lastCommit`
 * (the table's metadata location as the last holder left it, when it knew: LockLease.lastCommit).
 *
 * Unlike Iceberg Java (which sleeps a lease length and compares a random version), leases here are
 * judged by the writers' clocks (`leaseExpiresAt < :now`): Lambda clocks are NTP-synced, and skew only
 * shortens or lengthens a wait. Correctness never rests on the lock: the catalog swap is conditional, so
 * a holder whose lease lapsed still fails its swap instead of overwriting.
 *
 * Release does not delete the item (as Java does) but clears its owner and lease: deleting would reset
 * `fencingVersion`, and the next holder must always get a larger one. The TTL removes idle items later.
 */
import { randomUUID } from 'node:crypto';
import {
  ConditionalCheckFailedException,
  CreateTableCommand,
  DynamoDBClient,
  ResourceInUseException,
  UpdateItemCommand,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { LakeError, LockTimeoutError, TransientIOError } from '../errors.js';
import { classifyAwsError } from '../io/aws-errors.js';
import type { CommitLock, LockLease } from './commit-lock.js';
import {
  buildAcquireInput,
  buildHeartbeatInput,
  buildReleaseInput,
  computeBackoffMs,
  isTransientDynamoError,
  LOCK_ATTRIBUTES,
} from './dynamodb-lock-requests.js';

export {
  buildAcquireInput,
  buildHeartbeatInput,
  buildReleaseInput,
  computeBackoffMs,
  isTransientDynamoError,
  LOCK_ATTRIBUTES,
};

const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_TIMEOUT_MS = 60_000;
/** Idle items live this long after their last lease before the TTL removes them. */
const DEFAULT_ITEM_TTL_MS = 24 * 60 * 60 * 1000;
const RELEASE_ATTEMPTS = 3;

export interface DynamoDbLockOptions {
  /** @default a client from the standard AWS environment */
  client?: DynamoDBClient;
  tableName: string;
  /** How long a lease lasts without a heartbeat. @default 30000 */
  leaseMs?: number;
  /** How often the holder extends its lease. @default leaseMs / 3 */
  heartbeatMs?: number;
  /** How long an idle item stays before the TTL removes it. @default 24 h */
  itemTtlMs?: number;
  /** Clock (epoch ms), injectable for tests. @default Date.now */
  now?: () => number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A held lease: kept alive by a heartbeat until released or lost. */
export class DynamoDbLease implements LockLease {
  private leaseExpiresAtMs: number;
  private lostLease = false;
  private released = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly lock: DynamoDbLock,
    readonly key: string,
    readonly owner: string,
    readonly fencingVersion: number,
    leaseExpiresAtMs: number,
    readonly lastCommit?: string,
  ) {
    this.leaseExpiresAtMs = leaseExpiresAtMs;
  }

  /** When the lease ends unless renewed (epoch ms, by this writer's clock). */
  get leaseExpiresAt(): number {
    return this.leaseExpiresAtMs;
  }

  /**
   * True once the lease may belong to someone else: a heartbeat found another owner, or the lease ran out
   * without a successful renewal. A holder that sees this should not start a swap it could still avoid.
   */
  get lost(): boolean {
    return this.lostLease || (!this.released && this.lock.now() >= this.leaseExpiresAtMs);
  }

  /** @internal starts the heartbeat chain (setTimeout, so two beats never overlap). */
  startHeartbeat(intervalMs: number): void {
    const beat = async () => {
      this.timer = undefined;
      if (this.released || this.lostLease) return;
      const outcome = await this.lock.renew(this);
      if (outcome === 'lost') {
        this.lostLease = true;
        return;
      }
      if (typeof outcome === 'number') this.leaseExpiresAtMs = outcome;
      if (!this.released && !this.lostLease) this.schedule(beat, intervalMs);
    };
    this.schedule(beat, intervalMs);
  }

  private schedule(beat: () => Promise<void>, intervalMs: number): void {
    this.timer = setTimeout(() => void beat(), intervalMs);
    // A heartbeat alone must not keep a process (or a test runner) alive.
    this.timer.unref();
  }

  /** Stops the heartbeat; used on release and in tests that simulate a writer that died. */
  stopHeartbeat(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * Frees the lock if this owner still holds it. A lock already taken over is not an error; transient
   * failures are retried and then left to the lease's expiry (cleanup must not hide a commit's outcome).
   * @throws LakeError only for non-transient failures (missing table, access denied)
   */
  async release(current?: string): Promise<void> {
    if (this.released) return;
    this.released = true;
    this.stopHeartbeat();
    await this.lock.releaseLease(this, current);
  }
}

/** @see the module comment. */
export class DynamoDbLock implements CommitLock {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly itemTtlMs: number;
  readonly now: () => number;

  constructor(options: DynamoDbLockOptions) {
    this.client = options.client ?? new DynamoDBClient({});
    this.tableName = options.tableName;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.heartbeatMs = options.heartbeatMs ?? Math.max(1, Math.floor(this.leaseMs / 3));
    this.itemTtlMs = options.itemTtlMs ?? DEFAULT_ITEM_TTL_MS;
    this.now = options.now ?? Date.now;
    if (!(this.heartbeatMs < this.leaseMs)) {
      throw new LakeError(`heartbeatMs (${this.heartbeatMs}) must be shorter than leaseMs (${this.leaseMs})`);
    }
  }

  /**
   * Takes the lock for `key`, retrying with jittered backoff while someone else holds a live lease.
   * @throws LockTimeoutError (retryable) when not acquired within `timeoutMs` (default 60 s)
   * @throws LakeError for non-transient DynamoDB failures (missing table, access denied)
   */
  async acquire(key: string, options: { timeoutMs?: number } = {}): Promise<DynamoDbLease> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const owner = randomUUID();
    const deadline = Date.now() + timeoutMs;
    let lastError: unknown;
    for (let attempt = 0; ; attempt++) {
      const nowMs = this.now();
      try {
        const result = await this.client.send(
          new UpdateItemCommand(
            buildAcquireInput(this.tableName, key, owner, nowMs, this.leaseMs, this.itemTtlMs),
          ),
        );
        const fencingVersion = Number(result.Attributes?.[LOCK_ATTRIBUTES.fencingVersion]?.N);
        const lastCommit = result.Attributes?.[LOCK_ATTRIBUTES.lastCommit]?.S;
        const lease = new DynamoDbLease(this, key, owner, fencingVersion, nowMs + this.leaseMs, lastCommit);
        lease.startHeartbeat(this.heartbeatMs);
        return lease;
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException) && !isTransientDynamoError(error)) {
          throw new LakeError(
            `acquiring lock '${key}' in ${this.tableName} failed: ${classifyAwsError(error).detail}`,
            { cause: error },
          );
        }
        lastError = error;
      }
      const wait = computeBackoffMs(attempt);
      if (Date.now() + wait > deadline) {
        throw new LockTimeoutError(`lock '${key}' in ${this.tableName} not acquired within ${timeoutMs} ms`, {
          cause: lastError,
        });
      }
      await sleep(wait);
    }
  }

  /** @internal one heartbeat: the new lease end, 'lost' when another owner holds the item, or undefined. */
  async renew(lease: DynamoDbLease): Promise<number | 'lost' | undefined> {
    const nowMs = this.now();
    try {
      await this.client.send(
        new UpdateItemCommand(
          buildHeartbeatInput(this.tableName, lease.key, lease.owner, nowMs, this.leaseMs, this.itemTtlMs),
        ),
      );
      return nowMs + this.leaseMs;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return 'lost';
      // Anything else: try again at the next beat; `lost` turns true by itself if the lease runs out.
      return undefined;
    }
  }

  /** @internal */
  async releaseLease(lease: DynamoDbLease, current?: string): Promise<void> {
    for (let attempt = 0; attempt < RELEASE_ATTEMPTS; attempt++) {
      try {
        await this.client.send(
          new UpdateItemCommand(
            buildReleaseInput(this.tableName, lease.key, lease.owner, this.now(), this.itemTtlMs, current),
          ),
        );
        return;
      } catch (error) {
        if (error instanceof ConditionalCheckFailedException) return; // taken over: not ours to free
        if (!isTransientDynamoError(error)) {
          throw new LakeError(
            `releasing lock '${lease.key}' in ${this.tableName} failed: ${classifyAwsError(error).detail}`,
            { cause: error },
          );
        }
        await sleep(computeBackoffMs(attempt));
      }
    }
    // Still failing: the lease ends by itself within leaseMs.
  }
}

/**
 * Creates the lock table (hash key `pk`, on-demand billing, TTL on `expiresAt`) unless it exists, and
 * waits until it is active. For tests and the CLI; deployed functions use the table the CDK creates.
 * @throws TransientIOError when the table does not become active in time; LakeError for other failures
 */
export async function createLockTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        KeySchema: [{ AttributeName: LOCK_ATTRIBUTES.key, KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: LOCK_ATTRIBUTES.key, AttributeType: 'S' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) {
      throw new LakeError(`creating lock table ${tableName} failed: ${classifyAwsError(error).detail}`, {
        cause: error,
      });
    }
  }
  try {
    await waitUntilTableExists({ client, maxWaitTime: 120 }, { TableName: tableName });
  } catch (error) {
    throw new TransientIOError(
      `lock table ${tableName} did not become active: ${classifyAwsError(error).detail}`,
      { cause: error },
    );
  }
  try {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: LOCK_ATTRIBUTES.ttl, Enabled: true },
      }),
    );
  } catch (error) {
    // Already enabled (a second run) is fine: the TTL only tidies up, the lock works without it.
    if (!(error instanceof Error && /already enabled|TimeToLive is already/i.test(error.message))) {
      throw new LakeError(`enabling TTL on ${tableName} failed: ${classifyAwsError(error).detail}`, {
        cause: error,
      });
    }
  }
}
