import {
  ResourceNotFoundException,
  ConditionalCheckFailedException,
  type DynamoDBClient,
  ProvisionedThroughputExceededException,
  UpdateItemCommand,
  type UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { LakeError, LockTimeoutError } from '../../../functions/core/errors.js';
import {
  buildAcquireInput,
  buildHeartbeatInput,
  buildReleaseInput,
  computeBackoffMs,
  DynamoDbLock,
  isTransientDynamoError,
  LOCK_ATTRIBUTES,
} from '../../../functions/core/lock/dynamodb-lock.js';

const conditionFailed = () =>
  new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });

/** A client whose `send` answers from a script of results (a value = success, an Error = rejection). */
function scriptedClient(script: (input: UpdateItemCommandInput, call: number) => unknown) {
  const inputs: UpdateItemCommandInput[] = [];
  const send = vi.fn(async (command: unknown) => {
    if (!(command instanceof UpdateItemCommand)) throw new Error('unexpected command');
    inputs.push(command.input);
    const result = script(command.input, inputs.length - 1);
    if (result instanceof Error) throw result;
    return result;
  });
  return { client: { send } as unknown as DynamoDBClient, send, inputs };
}

const granted = (version: number) => ({
  Attributes: { [LOCK_ATTRIBUTES.fencingVersion]: { N: String(version) } },
});

describe('request shapes', () => {
  it('acquires only a free, lapsed or own item, and counts the acquisition', () => {
    // Act
    const input = buildAcquireInput('locks', 'db.t', 'me', 1_000_000, 30_000, 3_600_000);

    // Assess
    expect(input.ConditionExpression).toBe('attribute_not_exists(#pk) OR #lease < :now OR #owner = :owner');
    expect(input.UpdateExpression).toContain('ADD #fence :one');
    expect(input.ExpressionAttributeValues?.[':lease']).toEqual({ N: '1030000' });
    expect(input.ExpressionAttributeValues?.[':now']).toEqual({ N: '1000000' });
    // TTL is in epoch seconds, after the lease ends
    expect(Number(input.ExpressionAttributeValues?.[':ttl'].N)).toBe(
      Math.ceil((1_030_000 + 3_600_000) / 1000),
    );
    expect(input.Key).toEqual({ pk: { S: 'db.t' } });
    expect(input.ReturnValues).toBe('ALL_NEW');
  });

  it('heartbeats and releases only as the owner, and release keeps the fencing version', () => {
    // Act
    const beat = buildHeartbeatInput('locks', 'k', 'me', 5_000, 30_000, 60_000);
    const release = buildReleaseInput('locks', 'k', 'me', 5_000, 60_000);

    // Assess
    expect(beat.ConditionExpression).toBe('#owner = :owner');
    expect(beat.ExpressionAttributeValues?.[':lease']).toEqual({ N: '35000' });
    expect(release.ConditionExpression).toBe('#owner = :owner');
    expect(release.UpdateExpression).toContain('REMOVE #owner');
    expect(release.UpdateExpression).not.toContain('#fence');
  });

  it('records where the holder left the table on release, and forgets it when the holder does not know', () => {
    const known = buildReleaseInput('locks', 'k', 'me', 5_000, 60_000, 's3://b/t/metadata/v3.metadata.json');
    const unknown = buildReleaseInput('locks', 'k', 'me', 5_000, 60_000);
    expect(known.UpdateExpression).toContain('#last = :last');
    expect(known.ExpressionAttributeValues?.[':last']).toEqual({ S: 's3://b/t/metadata/v3.metadata.json' });
    expect(known.ExpressionAttributeNames?.['#last']).toBe('lastCommit');
    expect(unknown.UpdateExpression).toContain('REMOVE #owner, #last');
    expect(unknown.ExpressionAttributeValues?.[':last']).toBeUndefined();
  });

  it('backs off with full jitter under a growing, capped ceiling', () => {
    // Act
    const highs = [0, 1, 2, 3, 10, 40].map((attempt) => computeBackoffMs(attempt, () => 0.999999));
    const lows = [0, 5, 40].map((attempt) => computeBackoffMs(attempt, () => 0));

    // Assess
    for (let i = 1; i < highs.length; i++) expect(highs[i]).toBeGreaterThanOrEqual(highs[i - 1]);
    expect(highs[0]).toBeLessThanOrEqual(25);
    expect(highs[highs.length - 1]).toBe(1000);
    expect(lows).toEqual([1, 1, 1]);
  });

  it('tells transient DynamoDB errors from permanent ones', () => {
    // Assess
    expect(
      isTransientDynamoError(new ProvisionedThroughputExceededException({ message: 'slow', $metadata: {} })),
    ).toBe(true);
    expect(isTransientDynamoError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }))).toBe(true);
    expect(isTransientDynamoError(new ResourceNotFoundException({ message: 'missing', $metadata: {} }))).toBe(
      false,
    );
    expect(isTransientDynamoError(conditionFailed())).toBe(false);
  });
});

describe('DynamoDbLock with a scripted client', () => {
  it('retries while the lock is held and returns the fencing version it was granted', async () => {
    // Prepare
    const { client, inputs } = scriptedClient((_input, call) => (call < 3 ? conditionFailed() : granted(7)));
    const lock = new DynamoDbLock({ client, tableName: 'locks', leaseMs: 60_000 });

    // Act
    const lease = await lock.acquire('db.t', { timeoutMs: 10_000 });
    await lease.release();

    // Assess
    expect(lease.fencingVersion).toBe(7);
    expect(lease.key).toBe('db.t');
    const acquires = inputs.filter((i) => i.ConditionExpression?.startsWith('attribute_not_exists'));
    expect(acquires).toHaveLength(4);
    // every attempt of one acquire uses the same owner id, so a retried request stays idempotent
    expect(new Set(acquires.map((i) => i.ExpressionAttributeValues?.[':owner'].S)).size).toBe(1);
  });

  it('gives up with a retryable LockTimeoutError', async () => {
    // Prepare
    const { client } = scriptedClient(() => conditionFailed());
    const lock = new DynamoDbLock({ client, tableName: 'locks' });

    // Act
    const attempt = lock.acquire('db.t', { timeoutMs: 150 });

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(LockTimeoutError);
    await expect(attempt).rejects.toMatchObject({ retryable: true });
  });

  it('retries a socket failure the SDK wrapped (the errno code on the cause), as any network failure', async () => {
    // Prepare
    const wrapped = Object.assign(new Error('connect failed'), { cause: { code: 'ECONNREFUSED' } });
    const { client, send } = scriptedClient((_input, call) => (call === 0 ? wrapped : granted(2)));
    const lock = new DynamoDbLock({ client, tableName: 'locks' });

    // Act
    const lease = await lock.acquire('db.t', { timeoutMs: 10_000 });
    lease.stopHeartbeat();

    // Assess
    expect(lease.fencingVersion).toBe(2);
    expect(send).toHaveBeenCalledTimes(2);
  });

  it('fails at once on a permanent error instead of waiting out the timeout', async () => {
    // Prepare
    const { client, send } = scriptedClient(
      () => new ResourceNotFoundException({ message: 'Requested resource not found: denied', $metadata: {} }),
    );
    const lock = new DynamoDbLock({ client, tableName: 'locks' });

    // Act
    const attempt = lock.acquire('db.t', { timeoutMs: 60_000 });

    // Assess
    await expect(attempt).rejects.toThrow(/denied/);
    await expect(attempt).rejects.not.toBeInstanceOf(LockTimeoutError);
    await expect(attempt).rejects.toBeInstanceOf(LakeError);
    expect(send).toHaveBeenCalledTimes(1);
  });

  it('stops heartbeating and reports the lease lost when another owner holds the item', async () => {
    // Prepare
    const { client, inputs } = scriptedClient((input, call) => {
      if (call === 0) return granted(1);
      if (input.UpdateExpression?.startsWith('SET #lease = :lease')) return conditionFailed();
      return {};
    });
    const lock = new DynamoDbLock({ client, tableName: 'locks', leaseMs: 300, heartbeatMs: 20 });
    const lease = await lock.acquire('k');

    // Act
    await vi.waitFor(() => expect(lease.lost).toBe(true), { timeout: 2_000 });
    const beatsAtLoss = inputs.length;
    await new Promise((resolve) => setTimeout(resolve, 100));

    // Assess
    expect(inputs.length).toBe(beatsAtLoss);
    await lease.release(); // a release after a takeover is not an error
  });

  it('keeps extending the lease while held', async () => {
    // Prepare
    let clock = 1_000;
    const { client, inputs } = scriptedClient((_input, call) => (call === 0 ? granted(3) : {}));
    const lock = new DynamoDbLock({
      client,
      tableName: 'locks',
      leaseMs: 300,
      heartbeatMs: 20,
      now: () => clock,
    });
    const lease = await lock.acquire('k');

    // Act
    clock = 1_200;
    await vi.waitFor(() => expect(lease.leaseExpiresAt).toBe(1_500), { timeout: 2_000 });
    clock = 1_400; // past the first lease's end, but the heartbeat moved it
    const lostAfterRenewal = lease.lost;
    await lease.release();

    // Assess
    expect(lostAfterRenewal).toBe(false);
    expect(inputs.some((i) => i.ConditionExpression === '#owner = :owner')).toBe(true);
  });

  it('reports the lease lost once it ran out without a successful renewal', async () => {
    // Prepare
    let clock = 0;
    const { client } = scriptedClient((_input, call) =>
      call === 0 ? granted(1) : Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
    );
    const lock = new DynamoDbLock({
      client,
      tableName: 'locks',
      leaseMs: 1_000,
      heartbeatMs: 10,
      now: () => clock,
    });
    const lease = await lock.acquire('k');

    // Act
    const before = lease.lost;
    clock = 1_000;
    const after = lease.lost;
    lease.stopHeartbeat();

    // Assess
    expect(before).toBe(false);
    expect(after).toBe(true);
  });

  it('does not treat a release after a takeover as an error', async () => {
    // Prepare
    const { client, inputs } = scriptedClient((input, call) =>
      call === 0 ? granted(1) : input.UpdateExpression?.includes('REMOVE') ? conditionFailed() : {},
    );
    const lock = new DynamoDbLock({ client, tableName: 'locks', leaseMs: 60_000 });
    const lease = await lock.acquire('k');

    // Act
    await lease.release();
    await lease.release(); // twice is fine too

    // Assess
    expect(inputs.filter((i) => i.UpdateExpression?.includes('REMOVE'))).toHaveLength(1);
  });

  it('rejects a heartbeat interval that is not shorter than the lease', () => {
    // Assess
    expect(
      () =>
        new DynamoDbLock({ client: {} as DynamoDBClient, tableName: 't', leaseMs: 100, heartbeatMs: 100 }),
    ).toThrow(/shorter/);
  });
});
