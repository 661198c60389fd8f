/**
 * The lock table for local use (the CLI against moto, LocalStack or a sandbox account): looked up first,
 * created only when missing. Deployed stacks get theirs from the CDK construct, and a user pointing the
 * CLI at one may hold no CreateTable permission, so an existing table must never need it.
 */
import {
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceNotFoundException,
} from '@aws-sdk/client-dynamodb';
import { LakeError } from '../errors.js';
import { classifyAwsError } from '../io/aws-errors.js';
import { createLockTable } from './dynamodb-lock.js';

/**
 * Makes sure the lock table `tableName` exists and is active: a table that is there is left as it is;
 * a missing one is created (hash key `pk`, on-demand, TTL on `expiresAt`). Idempotent, also when several
 * processes race to create it (the loser's ResourceInUseException counts as success).
 * @returns whether the table was missing (and so created here, or by a process racing this one)
 * @throws LakeError when the table cannot be read or created (e.g. access denied); TransientIOError when
 *   a new table does not become active in time
 */
export async function ensureLockTable(client: DynamoDBClient, tableName: string): Promise<boolean> {
  let missing = false;
  try {
    const out = await client.send(new DescribeTableCommand({ TableName: tableName }));
    // CREATING: someone else is creating it; createLockTable waits for it like for its own.
    if (out.Table?.TableStatus === 'ACTIVE' || out.Table?.TableStatus === 'UPDATING') return false;
  } catch (error) {
    missing = error instanceof ResourceNotFoundException;
    if (!missing) {
      throw new LakeError(`reading lock table ${tableName} failed: ${classifyAwsError(error).detail}`, {
        cause: error,
      });
    }
  }
  await createLockTable(client, tableName);
  return missing;
}
