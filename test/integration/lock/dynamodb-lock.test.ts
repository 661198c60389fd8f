import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { beforeAll, beforeEach, expect, it } from 'vitest';
import { LockTimeoutError } from '../../../functions/core/errors.js';
import {
  createLockTable,
  DynamoDbLock,
  LOCK_ATTRIBUTES,
} from '../../../functions/core/lock/dynamodb-lock.js';
import { oneRequestAtATime } from '../../support/one-request-at-a-time.js';
import { describeWithMoto, motoEndpoint, resetMoto, TEST_CREDENTIALS, TEST_REGION } from '../moto.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeWithMoto('DynamoDbLock on moto', () => {
  let client: DynamoDBClient;
  let tableName: string;

  beforeAll(async () => {
    await resetMoto();
    client = new DynamoDBClient({
      endpoint: motoEndpoint(),
      region: TEST_REGION,
      credentials: TEST_CREDENTIALS,
    });
  });

  beforeEach(async () => {
    tableName = `floe-locks-${Math.random().toString(36).slice(2, 10)}`;
    await createLockTable(client, tableName);
  });

  async function ownerOf(key: string): Promise<string | undefined> {
    const { Item } = await client.send(
      new GetItemCommand({ TableName: tableName, Key: { pk: { S: key } }, ConsistentRead: true }),
    );
    return Item?.[LOCK_ATTRIBUTES.owner]?.S;
  }

  it('hands the next holder the location the last one left the table at, and nothing after a holder that did not know', async () => {
    const lock = new DynamoDbLock({ client: oneRequestAtATime(client), tableName });
    const first = await lock.acquire('db.t');
    expect(first.lastCommit).toBeUndefined();
    await first.release('s3://b/t/metadata/v2.metadata.json');
    const second = await lock.acquire('db.t');
    expect(second.lastCommit).toBe('s3://b/t/metadata/v2.metadata.json');
    await second.release();
    const third = await lock.acquire('db.t');
    expect(third.lastCommit).toBeUndefined();
    await third.release();
  });

  it('creates the lock table idempotently', async () => {
    // Act / Assess: a second call on an existing table is fine
    await expect(createLockTable(client, tableName)).resolves.toBeUndefined();
  });

  it('never lets two of 8 concurrent writers into the critical section', async () => {
    // Prepare
    const lock = new DynamoDbLock({ client: oneRequestAtATime(client), tableName, leaseMs: 10_000 });
    let holders = 0;
    let maxHolders = 0;
    let counter = 0;
    const fencing: number[] = [];
    const writer = async () => {
      for (let i = 0; i < 4; i++) {
        const lease = await lock.acquire('db.orders', { timeoutMs: 60_000 });
        try {
          holders++;
          maxHolders = Math.max(maxHolders, holders);
          fencing.push(lease.fencingVersion);
          // read-modify-write with a gap: any overlap would lose an increment
          const seen = counter;
          await sleep(3 + Math.random() * 10);
          counter = seen + 1;
          holders--;
        } finally {
          await lease.release();
        }
      }
    };

    // Act
    await Promise.all(Array.from({ length: 8 }, writer));

    // Assess
    expect(maxHolders).toBe(1);
    expect(counter).toBe(32);
    // every acquisition got a larger fencing version than the one before it
    for (let i = 1; i < fencing.length; i++) expect(fencing[i]).toBeGreaterThan(fencing[i - 1]);
  });

  it('lets a writer take over a lapsed lease, with a higher fencing version', async () => {
    // Prepare: A holds the lock, then "dies" (its heartbeat stops)
    const lock = new DynamoDbLock({ client, tableName, leaseMs: 600, heartbeatMs: 200 });
    const a = await lock.acquire('db.t');
    a.stopHeartbeat();

    // Act
    const startedAt = Date.now();
    const b = await lock.acquire('db.t', { timeoutMs: 10_000 });
    const waited = Date.now() - startedAt;

    // Assess
    expect(waited).toBeGreaterThanOrEqual(400); // it had to wait for A's lease to run out
    expect(b.fencingVersion).toBeGreaterThan(a.fencingVersion);
    expect(a.lost).toBe(true);
    expect(await ownerOf('db.t')).toBe(b.owner);
    await b.release();
  });

  it('does not let a former holder release the new owner lock', async () => {
    // Prepare
    const lock = new DynamoDbLock({ client, tableName, leaseMs: 500, heartbeatMs: 150 });
    const a = await lock.acquire('db.t');
    a.stopHeartbeat();
    const b = await lock.acquire('db.t', { timeoutMs: 10_000 });

    // Act
    await a.release(); // late release by the old holder: must not free B's lock

    // Assess
    expect(await ownerOf('db.t')).toBe(b.owner);
    await expect(lock.acquire('db.t', { timeoutMs: 300 })).rejects.toBeInstanceOf(LockTimeoutError);
    await b.release();
  });

  it('keeps a long holder lease alive with its heartbeat', async () => {
    // Prepare
    const lock = new DynamoDbLock({ client, tableName, leaseMs: 600, heartbeatMs: 150 });
    const holder = await lock.acquire('db.t');

    // Act: hold for more than three lease lengths while another writer tries
    const contender = lock.acquire('db.t', { timeoutMs: 2_000 });

    // Assess
    await expect(contender).rejects.toBeInstanceOf(LockTimeoutError);
    expect(holder.lost).toBe(false);
    expect(await ownerOf('db.t')).toBe(holder.owner);
    await holder.release();
    const next = await lock.acquire('db.t', { timeoutMs: 2_000 });
    expect(next.fencingVersion).toBeGreaterThan(holder.fencingVersion);
    await next.release();
  });

  it('keeps fencing versions increasing across release and re-acquisition', async () => {
    // Prepare
    const lock = new DynamoDbLock({ client, tableName });

    // Act
    const versions: number[] = [];
    for (let i = 0; i < 3; i++) {
      const lease = await lock.acquire('db.t');
      versions.push(lease.fencingVersion);
      await lease.release();
    }

    // Assess
    expect(versions[1]).toBeGreaterThan(versions[0]);
    expect(versions[2]).toBeGreaterThan(versions[1]);
    expect(await ownerOf('db.t')).toBeUndefined();
  });
});
