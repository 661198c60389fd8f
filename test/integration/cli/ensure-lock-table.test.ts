/**
 * ensureLockTable (the CLI's `--lock-table`, created when missing) on moto: processes racing to create
 * the table all succeed and end with one active table with its TTL; a table that exists is only looked
 * up, never created again.
 */
import {
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { beforeAll, expect, it } from 'vitest';
import { ensureLockTable } from '../../../functions/core/lock/ensure-lock-table.js';
import { dynamoClientForTests, uniqueSuffix } from '../../support/moto-lakes.js';
import { describeWithMoto, resetMoto } from '../moto.js';

/** Counts the CreateTable requests a client sends. */
function countingCreates(client: DynamoDBClient): { client: DynamoDBClient; creates: () => number } {
  let creates = 0;
  const send = client.send.bind(client) as (...args: unknown[]) => Promise<unknown>;
  const counting = Object.create(client) as DynamoDBClient;
  counting.send = ((command: { constructor: { name: string } }, ...rest: unknown[]) => {
    if (command.constructor.name === 'CreateTableCommand') creates++;
    return send(command, ...rest);
  }) as DynamoDBClient['send'];
  return { client: counting, creates: () => creates };
}

describeWithMoto('ensureLockTable', () => {
  beforeAll(async () => {
    await resetMoto();
  });

  it('callers racing to create a missing table all succeed; a table that exists is only looked up', async () => {
    // Prepare
    const name = `floe-ensure-${uniqueSuffix()}`;
    const { client, creates } = countingCreates(dynamoClientForTests());

    // Act
    const racing = await Promise.all([1, 2, 3].map(() => ensureLockTable(client, name)));
    const createsWhileRacing = creates();
    const later = await ensureLockTable(client, name);

    // Assess
    expect(racing).toContain(true);
    expect(later).toBe(false);
    expect(creates()).toBe(createsWhileRacing);
    const table = await client.send(new DescribeTableCommand({ TableName: name }));
    expect(table.Table?.TableStatus).toBe('ACTIVE');
    expect(table.Table?.KeySchema).toEqual([{ AttributeName: 'pk', KeyType: 'HASH' }]);
    const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: name }));
    expect(ttl.TimeToLiveDescription?.AttributeName).toBe('expiresAt');
  });
});
